"""Fields of stategraph's own dataclasses (messages) equal to their defaults are left out
of storage and come back; an application's dataclasses are stored whole (their defaults
may change between its releases). ``default_checks`` decides what may be left out."""

from __future__ import annotations

import dataclasses
from typing import Any

import ormsgpack

from stategraph.checkpoint.serde._encoders import default_checks
from stategraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from stategraph.messages import AIMessage, HumanMessage, RemoveMessage, ToolMessage


@dataclasses.dataclass
class Plain:
    a: int
    ratio: float = 0.0
    label: str = "x"
    tags: list[str] = dataclasses.field(default_factory=list)
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)
    note: str | None = None


@dataclasses.dataclass(init=False)
class OwnInit:
    """The hand-written ``__init__`` defaults ``tags`` to ``["new"]``, not ``[]``."""

    tags: list[str] = dataclasses.field(default_factory=list)
    size: int = 1

    def __init__(self, tags: list[str] | None = None, size: int = 5) -> None:
        self.tags = ["new"] if tags is None else tags
        self.size = size


@dataclasses.dataclass
class WithInitVar:
    a: int
    seed: dataclasses.InitVar[int]
    b: int = 0

    def __post_init__(self, seed: int) -> None:
        self.a += seed


def stored_fields(serde: JsonPlusSerializer, value: Any) -> dict[str, Any]:
    """The field map written for ``value`` (a top-level dataclass)."""
    typ, data = serde.dumps_typed(value)
    assert typ == "msgpack"
    ext = ormsgpack.unpackb(data, ext_hook=lambda code, payload: ormsgpack.unpackb(payload))
    return ext[2]


def test_messages_store_only_fields_that_differ_from_defaults() -> None:
    serde = JsonPlusSerializer()
    human = HumanMessage(content="hi", id="1")
    ai = AIMessage(content="yo", id="2")
    assert stored_fields(serde, human) == {"content": "hi", "id": "1"}
    assert stored_fields(serde, ai) == {"content": "yo", "id": "2"}
    for message in (
        human,
        ai,
        AIMessage(content="", tool_calls=[{"name": "f", "args": {}, "id": "c"}], name="n"),
        ToolMessage(content="r", tool_call_id="c", status="error"),
        RemoveMessage(id="3"),
        RemoveMessage(id="4", additional_kwargs={}),
    ):
        back = serde.loads_typed(serde.dumps_typed(message))
        assert type(back) is type(message)
        assert back == message
        assert dataclasses.asdict(back) == dataclasses.asdict(message)


def _left_out(tp: type, values: dict[str, Any]) -> set[str]:
    return {
        name
        for name, is_default in default_checks(tp)
        if name in values and is_default(values[name])
    }


def test_an_applications_dataclass_is_stored_whole() -> None:
    serde = JsonPlusSerializer(allowed_types=[Plain])
    value = Plain(a=1)
    assert stored_fields(serde, value) == {
        "a": 1,
        "ratio": 0.0,
        "label": "x",
        "tags": [],
        "extra": {},
        "note": None,
    }
    assert serde.loads_typed(serde.dumps_typed(value)) == value


def test_values_equal_but_not_identical_to_the_default_are_kept() -> None:
    values = {"a": 1, "ratio": -0.0, "label": "x", "tags": [], "extra": {}, "note": None}
    assert _left_out(Plain, values) == {"label", "tags", "extra", "note"}
    # an empty tuple is not the list the factory makes, 0 is not the float default
    assert _left_out(Plain, {"a": 1, "tags": (), "ratio": 0}) == set()


def test_hand_written_init_defaults_are_the_ones_followed() -> None:
    assert _left_out(OwnInit, {"tags": [], "size": 1}) == set()
    assert _left_out(OwnInit, {"tags": ["new"], "size": 5}) == {"size"}


def test_class_with_required_initvar_leaves_nothing_out() -> None:
    assert default_checks(WithInitVar) == ()


def test_fields_left_out_come_back_when_init_cannot_be_called() -> None:
    """Data whose class gained a required argument since: fields are restored as stored."""
    serde = JsonPlusSerializer(allowed_types=[Plain])
    typed = serde.dumps_typed(Plain(a=1, label="y"))
    original = Plain.__init__

    def needs_more(self: Plain, a: int, must: int, **kw: Any) -> None:
        original(self, a, **kw)

    Plain.__init__ = needs_more  # type: ignore[method-assign]
    try:
        back = serde.loads_typed(typed)
    finally:
        Plain.__init__ = original  # type: ignore[method-assign]
    assert back == Plain(a=1, label="y")
