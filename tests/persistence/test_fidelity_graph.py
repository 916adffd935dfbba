"""Values keep their types through a real graph on every saver, and values that cannot
be saved are refused without harming what was saved before.

The schema's types are registered with the saver's serializer when the graph is
compiled with it, so a fresh graph on a fresh saver (a restarted process) reads them
back as the same types.
"""

from __future__ import annotations

import enum
import operator
import threading
from collections import deque
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Annotated, Any

import pytest
from persistence_helpers import Harness, cfg, shape
from pydantic import BaseModel
from typing_extensions import TypedDict

from stategraph.graph import END, START, StateGraph


class Color(enum.Enum):
    """An enum stored as a dict value inside a dataclass."""

    RED = "red"
    BLUE = "blue"


@dataclass
class Settings:
    """A dataclass holding a dict of enums."""

    colors: dict[str, Color]
    name: str


class Profile(BaseModel):
    """A pydantic model with a nested datetime."""

    name: str
    tags: list[str]
    born: datetime


class Rich(TypedDict, total=False):
    """A state of awkward types."""

    settings: Settings
    profile: Profile
    when: datetime
    pairs: list[tuple[int, str]]
    recent: deque[int]
    seen: Annotated[list[str], operator.add]


TZ = timezone(timedelta(hours=5, minutes=30))
WHEN = datetime(2026, 10, 19, 8, 30, 15, 123456, tzinfo=TZ)
SETTINGS = Settings(colors={"bg": Color.RED, "fg": Color.BLUE}, name="theme")
PROFILE = Profile(name="ada", tags=["x", "y"], born=datetime(1815, 12, 10, tzinfo=timezone.utc))
PAIRS = [(1, "one"), (2, "two")]
RECENT = deque([1, 2, 3], maxlen=3)


def _assert_types(values: dict[str, Any]) -> None:
    assert type(values["settings"]) is Settings
    assert values["settings"] == SETTINGS
    assert values["settings"].colors["bg"] is Color.RED
    assert values["settings"].colors["fg"] is Color.BLUE
    assert type(values["profile"]) is Profile
    assert values["profile"] == PROFILE
    assert type(values["profile"].born) is datetime
    assert values["profile"].born.utcoffset() == timedelta(0)
    assert type(values["when"]) is datetime
    assert values["when"] == WHEN
    assert values["when"].utcoffset() == timedelta(hours=5, minutes=30)
    assert values["pairs"] == PAIRS
    assert all(type(p) is tuple for p in values["pairs"])
    assert type(values["recent"]) is deque
    assert list(values["recent"]) == [1, 2, 3]
    assert values["recent"].maxlen == 3


def _rich_graph(saver: Any, checked: list[dict[str, Any]]) -> Any:
    def make(state: Rich) -> dict[str, Any]:
        return {
            "settings": SETTINGS,
            "profile": PROFILE,
            "when": WHEN,
            "pairs": list(PAIRS),
            "recent": deque(RECENT, maxlen=3),
            "seen": ["make"],
        }

    def check(state: Rich) -> dict[str, Any]:
        checked.append(dict(state))
        return {"seen": ["check"]}

    builder = StateGraph(Rich)
    builder.add_node("make", make)
    builder.add_node("check", check)
    builder.add_edge(START, "make")
    builder.add_edge("make", "check")
    builder.add_edge("check", END)
    return builder.compile(checkpointer=saver, interrupt_before=["check"])


def test_types_survive_a_restart_between_steps(h: Harness) -> None:
    checked: list[dict[str, Any]] = []
    graph = _rich_graph(h.saver, checked)
    h.invoke(graph, {"seen": ["in"]}, cfg("t"), durability="sync")
    assert h.get_state(graph, cfg("t")).next == ("check",)

    # a "new process": fresh saver over the same storage, graph compiled again
    fresh = _rich_graph(h.new_saver(), checked)
    snap = h.get_state(fresh, cfg("t"))
    _assert_types(snap.values)
    assert snap.values["seen"] == ["in", "make"]

    out = h.invoke(fresh, None, cfg("t"), durability="sync")
    # the node that ran after the restart received the restored types
    [received] = checked
    _assert_types(received)
    _assert_types(out)
    assert out["seen"] == ["in", "make", "check"]
    final = h.get_state(_rich_graph(h.new_saver(), checked), cfg("t"))
    _assert_types(final.values)
    assert final.next == ()


@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
def test_types_survive_in_every_durability(h: Harness, durability: str) -> None:
    graph = _rich_graph(h.saver, [])
    h.invoke(graph, {"seen": ["in"]}, cfg("t"), durability=durability)
    fresh = _rich_graph(h.new_saver(), [])
    for snap in h.history(fresh, cfg("t")):
        if "settings" in snap.values:
            _assert_types(snap.values)
    _assert_types(h.get_state(fresh, cfg("t")).values)


# ---------------------------------------------------------------------- unsaveable


class Bad(TypedDict, total=False):
    """``payload`` may receive something no serializer can store."""

    n: int
    payload: Any


def _bad_graph(saver: Any, make_bad: Any) -> Any:
    def a(state: Bad) -> dict[str, Any]:
        return {"n": state["n"] + 1}

    def b(state: Bad) -> dict[str, Any]:
        return {"payload": make_bad()}

    builder = StateGraph(Bad)
    builder.add_node("a", a)
    builder.add_node("b", b)
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("b", END)
    return builder.compile(checkpointer=saver)


UNSAVEABLE = [
    pytest.param(threading.Lock, "lock", id="lock"),
    pytest.param(lambda: lambda: 1, "function", id="lambda"),
]


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize(("make_bad", "type_name"), UNSAVEABLE)
@pytest.mark.parametrize("durability", ["sync", "async"])
def test_unsaveable_value_is_refused_naming_channel_and_type(
    h: Harness, make_bad: Any, type_name: str, durability: str
) -> None:
    graph = _bad_graph(h.saver, make_bad)
    with pytest.raises(TypeError) as info:
        h.invoke(graph, {"n": 0}, cfg("t"), durability=durability)
    # what was saved before is intact and readable, also from a fresh saver
    for reader in (graph, _bad_graph(h.new_saver(), make_bad)):
        snap = h.get_state(reader, cfg("t"))
        assert snap.values == {"n": 1}
        assert snap.next == ("b",)
        assert shape(h.history(reader, cfg("t"))) == [
            ("loop", 1, ("b",)),
            ("loop", 0, ("a",)),
            ("input", -1, ("__start__",)),
        ]
    # and the thread can go on once the node behaves
    fixed = _bad_graph(h.new_saver(), lambda: "fine")
    assert h.invoke(fixed, None, cfg("t"), durability=durability) == {"n": 1, "payload": "fine"}
    # the error says which channel and which type
    message = str(info.value)
    assert type_name in message, message
    assert "'payload'" in message, message


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize(("make_bad", "type_name"), UNSAVEABLE)
def test_unsaveable_value_with_exit_durability_saves_nothing(
    h: Harness, make_bad: Any, type_name: str
) -> None:
    graph = _bad_graph(h.saver, make_bad)
    with pytest.raises(TypeError) as info:
        h.invoke(graph, {"n": 0}, cfg("t"), durability="exit")
    snap = h.get_state(graph, cfg("t"))
    assert snap.metadata is None or snap.values == {"n": 1}
    assert all("payload" not in s.values for s in h.history(graph, cfg("t")))
    assert type_name in str(info.value)
    assert "'payload'" in str(info.value)
