"""Tests of the ``add_messages`` reducer and ``MessagesState``.

Expected values were checked against LangGraph's ``add_messages`` run as a black box.
"""

from __future__ import annotations

import inspect
import time
import typing
import uuid
from typing import Annotated, Any

import pytest

import stategraph
from stategraph.graph import MessagesState as ExportedMessagesState
from stategraph.graph import add_messages as exported_add_messages
from stategraph.graph.message import REMOVE_ALL_MESSAGES, MessagesState, add_messages
from stategraph.messages import (
    AIMessage,
    AnyMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)


def _left() -> list[Any]:
    return [HumanMessage("a", id="1"), HumanMessage("b", id="2"), HumanMessage("c", id="3")]


def _summary(messages: list[Any]) -> list[tuple[str, Any, str]]:
    return [(m.type, m.content, m.id) for m in messages]


def _is_uuid(value: str | None) -> bool:
    assert value is not None
    return str(uuid.UUID(value)) == value and uuid.UUID(value).version == 4


def test_seed_acceptance_replace_by_id() -> None:
    first = add_messages([], [{"role": "user", "content": "old", "id": "m1"}])
    second = add_messages(first, [{"role": "user", "content": "corrected", "id": "m1"}])
    assert len(second) == 1
    assert second[0].content == "corrected"
    assert second[0].id == "m1"
    assert first[0].content == "old"  # the previous state is untouched


def test_exports() -> None:
    assert exported_add_messages is add_messages
    assert ExportedMessagesState is MessagesState
    assert stategraph.add_messages is add_messages
    assert REMOVE_ALL_MESSAGES == "__remove_all__"


def test_append_keeps_identity_of_messages_with_ids() -> None:
    left = _left()
    new = AIMessage("d", id="4")
    merged = add_messages(left, [new])
    assert _summary(merged) == [
        ("human", "a", "1"),
        ("human", "b", "2"),
        ("human", "c", "3"),
        ("ai", "d", "4"),
    ]
    assert merged[3] is new and merged[0] is left[0]
    assert len(left) == 3  # the left list is not mutated


def test_ids_assigned_on_copies_without_mutating_inputs() -> None:
    old = HumanMessage("a")
    new = HumanMessage("b")
    merged = add_messages([old], new)
    assert [m.content for m in merged] == ["a", "b"]
    assert all(_is_uuid(m.id) for m in merged)
    assert merged[0].id != merged[1].id
    assert old.id is None and new.id is None
    assert merged[1] is not new and merged[1] == HumanMessage("b", id=merged[1].id)


def test_single_values_on_both_sides() -> None:
    assert [m.content for m in add_messages("x", "y")] == ["x", "y"]
    assert _summary(add_messages([], ("user", "hi")))[0][:2] == ("human", "hi")
    assert _summary(add_messages([], {"role": "assistant", "content": "yo"}))[0][:2] == ("ai", "yo")
    assert add_messages([], []) == []
    assert add_messages(_left(), []) == _left()


def test_replacement_in_place_and_append_order() -> None:
    merged = add_messages(
        _left(), [HumanMessage("X", id="4"), HumanMessage("B2", id="2"), HumanMessage("Y", id="5")]
    )
    assert _summary(merged) == [
        ("human", "a", "1"),
        ("human", "B2", "2"),
        ("human", "c", "3"),
        ("human", "X", "4"),
        ("human", "Y", "5"),
    ]


def test_replacement_may_change_message_type() -> None:
    merged = add_messages(_left(), [AIMessage("now ai", id="2")])
    assert _summary(merged)[1] == ("ai", "now ai", "2")


def test_duplicate_ids_within_right_keep_first_position_last_value() -> None:
    merged = add_messages(
        [], [HumanMessage("a", id="1"), HumanMessage("x", id="2"), HumanMessage("b", id="1")]
    )
    assert _summary(merged) == [("human", "b", "1"), ("human", "x", "2")]


def test_duplicate_ids_in_left() -> None:
    dup = [HumanMessage("a", id="1"), HumanMessage("b", id="1")]
    assert _summary(add_messages(dup, [HumanMessage("X", id="1")])) == [
        ("human", "a", "1"),
        ("human", "X", "1"),
    ]
    assert add_messages(dup, [RemoveMessage("1")]) == []


def test_remove_by_id() -> None:
    assert _summary(add_messages(_left(), [RemoveMessage(id="2")])) == [
        ("human", "a", "1"),
        ("human", "c", "3"),
    ]
    assert _summary(add_messages(_left(), [RemoveMessage("2"), RemoveMessage("2")])) == [
        ("human", "a", "1"),
        ("human", "c", "3"),
    ]


def test_remove_missing_id_raises() -> None:
    with pytest.raises(ValueError) as info:
        add_messages(_left(), [RemoveMessage(id="9")])
    assert str(info.value) == "Attempting to delete a message with an ID that doesn't exist ('9')"
    # Removing before the message is added is also an error.
    with pytest.raises(ValueError, match=r"\('n'\)"):
        add_messages(_left(), [RemoveMessage("n"), HumanMessage("n", id="n")])


@pytest.mark.parametrize(
    ("right", "expected"),
    [
        (
            [RemoveMessage("2"), HumanMessage("again", id="2")],
            [("human", "a", "1"), ("human", "again", "2"), ("human", "c", "3")],
        ),
        (
            [HumanMessage("again", id="2"), RemoveMessage("2")],
            [("human", "a", "1"), ("human", "c", "3")],
        ),
        (
            [RemoveMessage("2"), HumanMessage("B", id="2"), RemoveMessage("2")],
            [("human", "a", "1"), ("human", "c", "3")],
        ),
        (
            [HumanMessage("n", id="n"), RemoveMessage("n")],
            [("human", "a", "1"), ("human", "b", "2"), ("human", "c", "3")],
        ),
        (
            [RemoveMessage("1"), HumanMessage("n", id="n"), RemoveMessage("n")],
            [("human", "b", "2"), ("human", "c", "3")],
        ),
    ],
)
def test_remove_and_add_sequences_apply_in_order(right: list[Any], expected: list[Any]) -> None:
    assert _summary(add_messages(_left(), right)) == expected


def test_remove_all_messages() -> None:
    assert add_messages(_left(), [RemoveMessage(id=REMOVE_ALL_MESSAGES)]) == []
    merged = add_messages(
        _left(),
        [
            HumanMessage("p", id="p"),
            RemoveMessage(id=REMOVE_ALL_MESSAGES),
            HumanMessage("q", id="q"),
        ],
    )
    assert _summary(merged) == [("human", "q", "q")]
    # The last REMOVE_ALL wins; messages after it are merged onto an empty list.
    merged = add_messages(
        _left(),
        [
            RemoveMessage(REMOVE_ALL_MESSAGES),
            RemoveMessage(REMOVE_ALL_MESSAGES),
            HumanMessage("z", id="z"),
            HumanMessage("z2", id="z"),
            HumanMessage("w", id="w"),
            RemoveMessage("w"),
        ],
    )
    assert _summary(merged) == [("human", "z2", "z")]
    # Deviation from LangGraph, on purpose: a RemoveMessage is never stored in state.
    with pytest.raises(ValueError, match=r"\('1'\)"):
        add_messages(_left(), [RemoveMessage(REMOVE_ALL_MESSAGES), RemoveMessage("1")])


def test_remove_all_as_dict() -> None:
    assert add_messages(_left(), [{"role": "remove", "id": REMOVE_ALL_MESSAGES}]) == []


def test_dict_tuple_and_string_inputs() -> None:
    merged = add_messages(
        [],
        [
            ("user", "hi"),
            ("assistant", "yo"),
            ("system", "s"),
            "plain",
            {
                "role": "assistant",
                "content": "",
                "id": "a",
                "tool_calls": [{"name": "f", "args": {"x": 1}, "id": "c1"}],
            },
            {"role": "tool", "content": "r", "tool_call_id": "c1", "name": "f", "id": "t"},
        ],
    )
    assert [type(m) for m in merged] == [
        HumanMessage,
        AIMessage,
        SystemMessage,
        HumanMessage,
        AIMessage,
        ToolMessage,
    ]
    assert all(_is_uuid(m.id) for m in merged[:4])
    assert merged[4].tool_calls == [
        {"name": "f", "args": {"x": 1}, "id": "c1", "type": "tool_call"}
    ]
    assert (merged[5].tool_call_id, merged[5].name, merged[5].id) == ("c1", "f", "t")


def test_left_may_hold_dicts_or_messages_without_ids() -> None:
    merged = add_messages(
        [{"role": "user", "content": "x"}, HumanMessage("b", id="2")], [HumanMessage("B", id="2")]
    )
    assert _summary(merged)[1] == ("human", "B", "2")
    assert _is_uuid(merged[0].id) and merged[0].content == "x"
    lone = HumanMessage("no id")
    assert _is_uuid(add_messages([lone], [])[0].id) and lone.id is None


def test_invalid_input_raises_value_error() -> None:
    with pytest.raises(ValueError, match="unknown role 'bogus'"):
        add_messages([], [{"role": "bogus", "content": "x"}])
    with pytest.raises(ValueError, match="unsupported type int"):
        add_messages([], [123])


def test_none_sides() -> None:
    with pytest.raises(ValueError, match="'left' is None"):
        add_messages(None, [HumanMessage("a")])
    with pytest.raises(ValueError, match="'right' is None"):
        add_messages([], None)


class _ForeignMessage:
    def __init__(self, content: str, id: str | None = None, type: str = "human") -> None:
        self.content = content
        self.id = id
        self.type = type


class _ForeignModel(_ForeignMessage):
    def model_copy(self, *, update: dict[str, Any]) -> _ForeignModel:
        new = _ForeignModel(self.content, self.id, self.type)
        new.__dict__.update(update)
        return new


def test_foreign_message_objects_are_kept_and_copied_for_ids() -> None:
    with_id = _ForeignMessage("x", id="f1")
    without_id = _ForeignMessage("y")
    model = _ForeignModel("z")
    merged = add_messages([with_id], [without_id, model])
    assert merged[0] is with_id
    assert isinstance(merged[1], _ForeignMessage) and merged[1] is not without_id
    assert _is_uuid(merged[1].id) and without_id.id is None
    assert isinstance(merged[2], _ForeignModel) and model.id is None and _is_uuid(merged[2].id)
    # A foreign message of type "remove" deletes like ours.
    assert add_messages(merged, [_ForeignMessage("", id="f1", type="remove")])[0] is merged[1]


def test_format_langchain_openai() -> None:
    reducer = add_messages(format="langchain-openai")
    left = [HumanMessage([{"type": "text", "text": "a"}, "b"], id="1")]
    ai = AIMessage(
        [{"type": "text", "text": "c"}, {"type": "tool_use", "id": "c1", "name": "f", "input": {}}],
        tool_calls=[{"name": "f", "args": {}, "id": "c1"}],
        id="2",
    )
    image = HumanMessage(
        [{"type": "text", "text": "d"}, {"type": "image_url", "image_url": {"url": "u"}}], id="3"
    )
    plain = HumanMessage("plain", id="4")
    merged = reducer(left, [ai, image, plain])
    assert [m.content for m in merged] == ["a\nb", "c", image.content, "plain"]
    assert [m.id for m in merged] == ["1", "2", "3", "4"]
    assert merged[2] is image and merged[3] is plain
    assert left[0].content == [{"type": "text", "text": "a"}, "b"]
    with pytest.raises(ValueError, match="Unrecognized format='bogus'"):
        add_messages([], [], format="bogus")  # type: ignore[call-overload]


def test_signature_is_a_two_positional_reducer() -> None:
    for reducer in (add_messages, add_messages(format="langchain-openai")):
        params = list(inspect.signature(reducer).parameters.values())
        positional = [p for p in params if p.kind is p.POSITIONAL_OR_KEYWORD]
        assert [p.name for p in positional] == ["left", "right"]
        assert all(p.kind is p.KEYWORD_ONLY for p in params[2:])


def test_messages_state_schema() -> None:
    hints = typing.get_type_hints(MessagesState, include_extras=True)
    assert hints["messages"] == Annotated[list[AnyMessage], add_messages]
    assert typing.get_args(hints["messages"])[1] is add_messages

    class Extended(MessagesState):
        summary: str

    extended = typing.get_type_hints(Extended, include_extras=True)
    assert set(extended) == {"messages", "summary"}
    assert typing.get_args(extended["messages"])[1] is add_messages


def test_appending_to_a_long_history_is_fast() -> None:
    history = add_messages([], [HumanMessage(f"m{i}") for i in range(1000)])
    new = AIMessage("reply", id="new")
    replace = HumanMessage("edited", id=history[500].id)
    for right in ([new], [replace]):
        add_messages(history, right)  # warm up
        timings = []
        for _ in range(200):
            start = time.perf_counter()
            result = add_messages(history, right)
            timings.append(time.perf_counter() - start)
        per_call = min(timings)  # the fastest call: what the code costs, not the machine's load
        assert len(result) in (1000, 1001)
        # Typically ~50 µs (append) / ~300 µs (replace) on 3.11, about twice that on
        # 3.10 under load; a quadratic merge would take ~1000x longer, far past 5 ms.
        assert per_call < 5e-3, f"add_messages took {per_call * 1e6:.0f} µs for 1000 messages"
    assert add_messages(history, [replace])[500].content == "edited"
