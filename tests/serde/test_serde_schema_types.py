"""collect_schema_types: which classes a graph's schemas make loadable."""

from __future__ import annotations

import dataclasses
import datetime
import enum
import uuid
import warnings
from collections.abc import Sequence
from typing import Annotated, Any, Generic, Literal, NamedTuple, NewType, Optional, TypeVar, Union

import pydantic
from typing_extensions import NotRequired, TypedDict

from stategraph.checkpoint.serde.jsonplus import JsonPlusSerializer, collect_schema_types

T = TypeVar("T")


class Status(enum.Enum):
    OPEN = "open"


class Role(enum.Enum):
    ADMIN = "admin"


class Leaf(pydantic.BaseModel):
    when: datetime.datetime


class Branch(pydantic.BaseModel):
    leaves: list[Leaf]
    status: Status = Status.OPEN


@dataclasses.dataclass
class Coord:
    lat: float
    meta: Optional[dict[str, Branch]] = None


class Point3(NamedTuple):
    coord: Coord
    label: str


class Wrapper(pydantic.BaseModel, Generic[T]):
    inner: T


@dataclasses.dataclass
class Node:
    children: list[Node]
    value: int = 0


class Deep(pydantic.BaseModel):
    chain: Optional[Deep] = None
    ids: set[uuid.UUID] = set()


UserId = NewType("UserId", int)
Bound = TypeVar("Bound", bound=Coord)


def _reducer(a: list[Any], b: list[Any]) -> list[Any]:
    return a + b


class State(TypedDict):
    items: Annotated[list[Point3], _reducer]
    maybe: Optional[Branch]
    union: Union[int, Coord, None]
    mapping: dict[str, Sequence[Wrapper[Leaf]]]
    role: Literal[Role.ADMIN]
    plain: str
    when: datetime.datetime
    user: UserId
    extra: NotRequired[list[Node]]


def test_state_schema_walk() -> None:
    found = collect_schema_types(State)
    assert found == {
        Point3,
        Coord,
        Branch,
        Leaf,
        Status,
        Wrapper[Leaf],
        Wrapper,
        Role,
        Node,
    }


def test_skips_builtins_stdlib_and_typing() -> None:
    assert (
        collect_schema_types(int, str, list[int], dict[str, Any], Optional[datetime.date]) == set()
    )
    assert collect_schema_types(None, "ForwardRef", Any) == set()


def test_recursive_models_terminate() -> None:
    assert collect_schema_types(Deep) == {Deep}
    assert collect_schema_types(Node) == {Node}


def test_typevar_bound_and_constraints() -> None:
    constrained = TypeVar("constrained", Leaf, Role)
    assert collect_schema_types(Bound) == {Coord, Branch, Leaf, Status}
    assert collect_schema_types(constrained) == {Leaf, Role}


def test_unresolvable_annotations_fall_back_to_raw_ones() -> None:
    @dataclasses.dataclass
    class Local:
        ok: Coord
        missing: NameThatDoesNotExist  # type: ignore[name-defined]  # noqa: F821

    found = collect_schema_types(Local)
    assert Local in found


def test_pydantic_v1_fields() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pydantic import v1

    class OldLeaf(v1.BaseModel):
        status: Status

    found = collect_schema_types(OldLeaf)
    assert {OldLeaf, Status} <= found


def test_allow_walks_schemas_so_nested_types_load() -> None:
    value = {
        "items": [
            Point3(
                Coord(1.0, {"b": Branch(leaves=[Leaf(when=datetime.datetime(2024, 1, 1))])}), "p"
            )
        ],
        "role": Role.ADMIN,
        "wrapped": Wrapper[Leaf](inner=Leaf(when=datetime.datetime(2020, 1, 1))),
    }
    writer = JsonPlusSerializer()
    data = writer.dumps_typed(value)
    reader = JsonPlusSerializer(strict=True)
    reader.allow(State)
    out = reader.loads_typed(data)
    assert out == value
    assert type(out["items"][0].coord.meta["b"].leaves[0]) is Leaf
    assert type(out["wrapped"]) is Wrapper[Leaf]


def test_allow_accepts_type_hints() -> None:
    serde = JsonPlusSerializer(strict=True)
    serde.allow(list[Annotated[Coord, "x"]], Optional[Role])
    assert {Coord, Role, Branch, Leaf, Status} <= serde.allowed_types
