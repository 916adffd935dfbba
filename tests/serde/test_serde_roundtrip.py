"""Round trips of JsonPlusSerializer: every value comes back with its type and value."""

from __future__ import annotations

import collections
import dataclasses
import datetime
import enum
import sys
import threading
import warnings
from typing import Any, Generic, TypeVar

import pydantic
import pytest
from fidelity_cases import Color, Item, Pair, Point, Tagged, assert_same, fidelity_cases

from stategraph.checkpoint.serde.base import UnknownTypeWarning
from stategraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from stategraph.errors import GraphInterrupt, InvalidUpdateError
from stategraph.types import Interrupt, Send

T = TypeVar("T")

CASES = fidelity_cases()


def roundtrip(serde: JsonPlusSerializer, value: Any) -> Any:
    """Dump and load ``value``, failing on any warning."""
    data = serde.dumps_typed(value)
    assert isinstance(data[0], str) and isinstance(data[1], bytes)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return serde.loads_typed(data)


@pytest.mark.parametrize(("name", "value", "types"), CASES, ids=[c[0] for c in CASES])
def test_fidelity_case(name: str, value: Any, types: list[type]) -> None:
    serde = JsonPlusSerializer(allowed_types=types)
    assert_same(value, roundtrip(serde, value))


@pytest.mark.parametrize(("name", "value", "types"), CASES, ids=[c[0] for c in CASES])
def test_fidelity_case_allowed_later_and_nested_in_state(
    name: str, value: Any, types: list[type]
) -> None:
    serde = JsonPlusSerializer()
    serde.allow(*types)
    state = {"channel": value, "list": [value], "tuple": (value,)}
    assert_same(state, roundtrip(serde, state))


def test_fidelity_cases_cover_the_required_kinds() -> None:
    names = {c[0] for c in CASES}
    for required in (
        "enum_in_dict_in_dataclass",
        "str_enum",
        "int_enum",
        "pydantic_generic",
        "pydantic_in_dataclass",
        "dataclass_in_pydantic",
        "defaultdict_list",
        "ordered_dict",
        "deque",
        "namedtuple",
        "datetime_offset",
        "datetime_zoneinfo",
        "tuple_in_list",
        "messages",
    ):
        assert required in names


def test_fidelity_cases_are_fresh_values() -> None:
    first = dict((c[0], c[1]) for c in fidelity_cases())
    first["plain_json"]["a"].append("mutated")
    again = dict((c[0], c[1]) for c in fidelity_cases())
    assert again["plain_json"]["a"] == [1, 2.5, "x", None, True]


@pytest.mark.parametrize(
    ("value", "tag", "payload"),
    [
        (None, "null", b""),
        (b"\x00raw", "bytes", b"\x00raw"),
        (bytearray(b"ab"), "bytearray", b"ab"),
    ],
)
def test_top_level_tags(value: Any, tag: str, payload: bytes) -> None:
    serde = JsonPlusSerializer()
    assert serde.dumps_typed(value) == (tag, payload)
    out = serde.loads_typed((tag, payload))
    assert type(out) is type(value) and out == value


def test_msgpack_tag_for_everything_else() -> None:
    serde = JsonPlusSerializer()
    for value in ("s", 1, 1.5, True, [], {}, (1,), {1}):
        tag, _ = serde.dumps_typed(value)
        assert tag == "msgpack"


def test_scalars_keep_their_exact_types() -> None:
    serde = JsonPlusSerializer()
    out = roundtrip(serde, [True, 1, 1.0, "1", b"1", None, float("inf")])
    assert [type(v) for v in out] == [bool, int, float, str, bytes, type(None), float]
    assert out[-1] == float("inf")
    nan = roundtrip(serde, float("nan"))
    assert nan != nan


def test_json_payloads_load_as_plain_data() -> None:
    assert JsonPlusSerializer().loads_typed(("json", b'{"a": [1, 2]}')) == {"a": [1, 2]}


class Level(enum.Enum):
    DEBUG = 10
    INFO = 20


def test_dict_keys_of_every_kind_keep_their_types() -> None:
    serde = JsonPlusSerializer(allowed_types=[Level])
    value = {
        1: "int",
        -5: "negative",
        2.5: "float",
        None: "none",
        (1, "a"): "tuple",
        Level.INFO: "enum",
        datetime.date(2020, 2, 2): "date",
        frozenset({1}): "frozenset",
        Point(1, 2): "frozen dataclass",
        "s": {Level.DEBUG: {(2, Level.INFO): "deep"}},
    }
    serde.allow(Point)
    out = roundtrip(serde, value)
    assert_same(value, out)
    bools = {True: "t", False: "f", 2: "two"}
    assert_same(bools, roundtrip(serde, bools))


def test_big_int_keys() -> None:
    value = {2**70: "big", -(2**70): "negative big"}
    assert_same(value, roundtrip(JsonPlusSerializer(), value))


def test_dict_with_int_keys_inside_dataclass_and_tuple() -> None:
    serde = JsonPlusSerializer(allowed_types=[Tagged])
    value = (Tagged("x", {}), {"by_id": {1: Tagged("y")}})
    assert_same(value, roundtrip(serde, value))


VALIDATIONS: list[int] = []


class Counted(pydantic.BaseModel):
    value: int

    @pydantic.field_validator("value")
    @classmethod
    def _count(cls, v: int) -> int:
        VALIDATIONS.append(v)
        return v


def test_pydantic_load_does_not_rerun_validators() -> None:
    VALIDATIONS.clear()
    model = Counted(value=3)
    assert VALIDATIONS == [3]
    out = roundtrip(JsonPlusSerializer(allowed_types=[Counted]), model)
    assert out == model and type(out) is Counted
    assert VALIDATIONS == [3]


class Loose(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="allow")
    a: int = 1
    b: list[int] = []


def test_pydantic_fields_set_and_extra_are_preserved() -> None:
    model = Loose(b=[1], extra_field={"k": (1, 2)})
    out = roundtrip(JsonPlusSerializer(allowed_types=[Loose]), model)
    assert type(out) is Loose
    assert out.model_fields_set == {"b", "extra_field"}
    assert out.model_extra == {"extra_field": {"k": (1, 2)}}
    assert out.model_dump(exclude_unset=True) == {"b": [1], "extra_field": {"k": (1, 2)}}


class Numbers(pydantic.RootModel[list[int]]):
    pass


def test_pydantic_root_model() -> None:
    value = Numbers([1, 2])
    out = roundtrip(JsonPlusSerializer(allowed_types=[Numbers]), value)
    assert type(out) is Numbers and out.root == [1, 2]


class Box(pydantic.BaseModel, Generic[T]):
    content: T


def test_pydantic_generic_rebuilt_from_allowed_origin_and_args() -> None:
    value = Box[Item](content=Item(name="n", price=1))
    serde = JsonPlusSerializer()
    serde.allow(Box, Item)  # the parametrized class itself is not registered
    out = roundtrip(serde, value)
    assert type(out) is Box[Item] and out == value
    builtin_arg = Box[int](content=3)
    assert type(roundtrip(serde, builtin_arg)) is Box[int]


def test_pydantic_v1_model() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from pydantic import v1

    class OldModel(v1.BaseModel):
        a: int
        when: datetime.date

    value = OldModel(a=1, when=datetime.date(2020, 1, 1))
    out = roundtrip(JsonPlusSerializer(allowed_types=[OldModel]), value)
    assert type(out) is OldModel and out == value and out.__fields_set__ == {"a", "when"}


@dataclasses.dataclass
class WithPostInit:
    a: int
    doubled: int = dataclasses.field(init=False)
    note: str = dataclasses.field(default="n", init=False)

    def __post_init__(self) -> None:
        self.doubled = self.a * 2


@dataclasses.dataclass
class WithInitVar:
    a: int
    scale: dataclasses.InitVar[int]

    def __post_init__(self, scale: int) -> None:
        self.a *= scale


@dataclasses.dataclass(slots=True, kw_only=True)
class SlotsKw:
    a: int
    b: tuple[int, ...] = ()


def test_dataclass_variants() -> None:
    serde = JsonPlusSerializer(allowed_types=[WithPostInit, WithInitVar, SlotsKw])
    post = WithPostInit(2)
    post.note = "changed"
    out = roundtrip(serde, post)
    assert (type(out), out.a, out.doubled, out.note) == (WithPostInit, 2, 4, "changed")
    initvar = WithInitVar(3, scale=2)
    out2 = roundtrip(serde, initvar)
    assert type(out2) is WithInitVar and out2.a == 6  # restored as stored, not rescaled
    assert_same(SlotsKw(a=1, b=(2,)), roundtrip(serde, SlotsKw(a=1, b=(2,))))


def test_defaultdict_factories() -> None:
    serde = JsonPlusSerializer()
    for factory in (list, dict, set, int, str, float, None):
        value = collections.defaultdict(factory, {"k": factory() if factory else 1})
        out = roundtrip(serde, value)
        assert type(out) is collections.defaultdict
        assert out.default_factory is factory and out == value


def test_defaultdict_with_lambda_factory_loads_as_dict_with_warning() -> None:
    serde = JsonPlusSerializer()
    value = collections.defaultdict(lambda: 0, {"a": 1})
    data = serde.dumps_typed(value)
    with pytest.warns(UnknownTypeWarning, match="<lambda>"):
        out = serde.loads_typed(data)
    assert type(out) is dict and out == {"a": 1}


class Tags(list):  # type: ignore[type-arg]
    pass


class Registry(dict):  # type: ignore[type-arg]
    def __init__(self, data: Any, *, owner: str = "x") -> None:
        super().__init__(data)
        self.owner = owner


class Name(str):
    def __str__(self) -> str:
        return "overridden"


class Amount(float):
    pass


class Code(int):
    pass


def test_builtin_subclasses() -> None:
    serde = JsonPlusSerializer(allowed_types=[Tags, Registry, Name, Amount, Code])
    for value in (Tags([1, (2,)]), Registry({1: "a"}), Name("ann"), Amount(1.5), Code(7)):
        out = roundtrip(serde, value)
        assert type(out) is type(value) and out == value
    assert str.__str__(roundtrip(serde, Name("ann"))) == "ann"


def test_builtin_subclass_not_allowed_loads_as_base() -> None:
    data = JsonPlusSerializer().dumps_typed(Name("ann"))
    with pytest.warns(UnknownTypeWarning, match="Name"):
        out = JsonPlusSerializer().loads_typed(data)
    assert type(out) is str and out == "ann"


class Plain:
    __slots__ = ("a", "b")

    def __init__(self, a: int, b: Any) -> None:
        self.a = a
        self.b = b

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Plain) and (self.a, self.b) == (other.a, other.b)

    __hash__ = None  # type: ignore[assignment]


class PlainDict:
    def __init__(self) -> None:
        raise AssertionError("loading must not call __init__")


def test_registered_plain_classes_are_stored_by_state() -> None:
    serde = JsonPlusSerializer(allowed_types=[Plain, PlainDict])
    assert_same(Plain(1, {"x": (2,)}), roundtrip(serde, Plain(1, {"x": (2,)})))
    obj = PlainDict.__new__(PlainDict)
    obj.__dict__.update(value=[1], when=datetime.date(2020, 1, 1))
    out = roundtrip(serde, obj)
    assert type(out) is PlainDict and out.__dict__ == {
        "value": [1],
        "when": datetime.date(2020, 1, 1),
    }


def test_exceptions() -> None:
    serde = JsonPlusSerializer()
    out = roundtrip(serde, ValueError("bad", 2))
    assert type(out) is ValueError and out.args == ("bad", 2)
    interrupt = GraphInterrupt([Interrupt("v", "i")])
    out2 = roundtrip(serde, interrupt)
    assert type(out2) is GraphInterrupt and out2.args == ((Interrupt("v", "i"),),)
    out3 = roundtrip(serde, InvalidUpdateError("at key 'x'"))
    assert type(out3) is InvalidUpdateError and str(out3) == "at key 'x'"
    weird = KeyError(lambda: 1)  # arguments that cannot be stored become the message
    out4 = roundtrip(serde, weird)
    assert type(out4) is KeyError and "lambda" in out4.args[0]


class CustomError(Exception):
    pass


def test_unknown_exception_loads_as_repr_with_warning() -> None:
    data = JsonPlusSerializer().dumps_typed(CustomError("boom"))
    with pytest.warns(UnknownTypeWarning, match="CustomError"):
        out = JsonPlusSerializer().loads_typed(data)
    assert out == "CustomError('boom')"
    allowed = JsonPlusSerializer(allowed_types=[CustomError]).loads_typed(data)
    assert type(allowed) is CustomError and allowed.args == ("boom",)


def test_send_with_nested_special_values() -> None:
    value = Send("n", {"when": datetime.timedelta(seconds=3), "pair": Pair(1)})
    out = roundtrip(JsonPlusSerializer(allowed_types=[Pair]), value)
    assert_same(value, out)


def test_nested_bytearray_comes_back_as_bytes() -> None:
    # ormsgpack packs a nested bytearray natively as msgpack bin (documented limitation).
    out = roundtrip(JsonPlusSerializer(), {"b": bytearray(b"x")})
    assert out == {"b": b"x"} and type(out["b"]) is bytes


def test_datetime_subclass_and_foreign_tzinfo_keep_value() -> None:
    class MyDateTime(datetime.datetime):
        pass

    class Fixed(datetime.tzinfo):
        def utcoffset(self, dt: datetime.datetime | None) -> datetime.timedelta:
            return datetime.timedelta(hours=2)

        def tzname(self, dt: datetime.datetime | None) -> str:
            return "FIX"

        def dst(self, dt: datetime.datetime | None) -> datetime.timedelta:
            return datetime.timedelta(0)

    value = MyDateTime(2024, 1, 1, 12, tzinfo=Fixed())
    out = roundtrip(JsonPlusSerializer(), value)
    assert type(out) is datetime.datetime
    assert out == value and out.utcoffset() == datetime.timedelta(hours=2)
    assert out.tzname() == "FIX"


@pytest.mark.skipif(sys.version_info < (3, 11), reason="StrEnum is 3.11+")
def test_strenum_key_keeps_type() -> None:
    class Kind(enum.StrEnum):
        A = "a"

    value = {Kind.A: 1, "a2": Kind.A}
    out = roundtrip(JsonPlusSerializer(allowed_types=[Kind]), value)
    assert_same(value, out)


def test_enum_member_removed_loads_value_with_warning() -> None:
    class Shrinking(enum.Enum):
        A = 1
        B = 2

    serde = JsonPlusSerializer(allowed_types=[Shrinking])
    data = serde.dumps_typed(Shrinking.B)

    class Shrinking(enum.Enum):  # type: ignore[no-redef]
        A = 1

    serde.allow(Shrinking)
    with pytest.warns(UnknownTypeWarning, match="no member"):
        assert serde.loads_typed(data) == 2


def test_color_registry_lookup_uses_qualname() -> None:
    serde = JsonPlusSerializer(allowed_types=[Color])
    assert roundtrip(serde, [Color.RED, Color.GREEN]) == [Color.RED, Color.GREEN]


class WithPrivate(pydantic.BaseModel):
    first_name: str = pydantic.Field(alias="firstName")
    _secret: int = pydantic.PrivateAttr(default=5)
    _client: Any = pydantic.PrivateAttr(default=None)


def test_pydantic_aliases_and_private_attributes() -> None:
    serde = JsonPlusSerializer(allowed_types=[WithPrivate])
    model = WithPrivate(firstName="x")
    model._secret = 9
    out = roundtrip(serde, model)
    assert type(out) is WithPrivate and out == model and out._secret == 9
    model._client = threading.Lock()  # private values that cannot be stored are dropped
    out2 = roundtrip(serde, model)
    assert out2.first_name == "x" and out2._secret == 9 and out2._client is None
