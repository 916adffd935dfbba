"""trim_messages, filter_messages, dict round trips, transcripts and token estimates."""

from __future__ import annotations

import json

import pytest

from stategraph.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    count_tokens_approximately,
    filter_messages,
    get_buffer_string,
    messages_from_dict,
    messages_to_dict,
    trim_messages,
)


@pytest.fixture
def history() -> list[BaseMessage]:
    return [
        SystemMessage("sys", id="s"),
        HumanMessage("first question", id="h1", name="bob"),
        AIMessage("calling", id="a1", tool_calls=[{"name": "f", "args": {"x": 1}, "id": "c1"}]),
        ToolMessage("42", tool_call_id="c1", id="t1"),
        AIMessage("it is 42", id="a2"),
        HumanMessage("thanks", id="h2"),
        AIMessage("bye", id="a3"),
    ]


def ids(messages: list[BaseMessage]) -> list[str | None]:
    return [m.id for m in messages]


def chars(messages: list[BaseMessage]) -> int:
    return sum(len(m.content) for m in messages if isinstance(m.content, str))


# ---------------------------------------------------------------- transcripts


def test_buffer_string_names_each_speaker(history: list[BaseMessage]) -> None:
    text = get_buffer_string(history[:5])
    assert text.splitlines() == [
        "System: sys",
        "Human: first question",
        "AI: calling[{'name': 'f', 'args': {'x': 1}, 'id': 'c1', 'type': 'tool_call'}]",
        "Tool: 42",
        "AI: it is 42",
    ]
    assert get_buffer_string(history[5:], human_prefix="U", ai_prefix="B") == "U: thanks\nB: bye"


def test_buffer_string_uses_roles_and_text_blocks() -> None:
    messages = [ChatMessage("x", role="critic"), AIMessageChunk([{"type": "text", "text": "b"}])]
    assert get_buffer_string(messages) == "critic: x\nAI: b"


def test_buffer_string_rejects_unknown_kinds() -> None:
    class Odd:
        type, content, id = "odd", "?", None

    with pytest.raises(ValueError, match="unsupported type 'odd'"):
        get_buffer_string([Odd()])


# ---------------------------------------------------------------- dict round trip


def test_dict_round_trip_is_json_friendly(history: list[BaseMessage]) -> None:
    chunk = AIMessageChunk("c", id="k")
    data = messages_to_dict([*history, chunk])
    assert data[0] == {
        "type": "system",
        "data": {
            "content": "sys",
            "id": "s",
            "name": None,
            "additional_kwargs": {},
            "response_metadata": {},
            "type": "system",
        },
    }
    assert data[-1]["type"] == "AIMessageChunk"
    rebuilt = messages_from_dict(json.loads(json.dumps(data)))
    assert rebuilt == [*history, chunk]


def test_messages_from_dict_rejects_unknown_types() -> None:
    with pytest.raises(ValueError, match="kind among"):
        messages_from_dict([{"type": "alien", "data": {"content": "x"}}])


# ---------------------------------------------------------------- filtering


def test_filter_by_type_name_and_id(history: list[BaseMessage]) -> None:
    assert ids(filter_messages(history, include_types=["human", AIMessage])) == [
        "h1",
        "a1",
        "a2",
        "h2",
        "a3",
    ]
    assert ids(filter_messages(history, include_names=["bob"])) == ["h1"]
    assert ids(filter_messages(history, exclude_ids=["a1"])) == [
        "s",
        "h1",
        "t1",
        "a2",
        "h2",
        "a3",
    ]
    assert ids(filter_messages(history, include_types="human", exclude_ids=["h1"])) == ["h2"]


def test_filter_out_tool_calls(history: list[BaseMessage]) -> None:
    assert ids(filter_messages(history, exclude_tool_calls=True)) == [
        "s",
        "h1",
        "a2",
        "h2",
        "a3",
    ]
    two = AIMessage(
        [
            {"type": "text", "text": "t"},
            {"type": "tool_use", "id": "c1", "name": "f", "input": {}},
            {"type": "tool_use", "id": "c2", "name": "g", "input": {}},
        ],
        id="two",
        tool_calls=[
            {"name": "f", "args": {}, "id": "c1"},
            {"name": "g", "args": {}, "id": "c2"},
        ],
    )
    kept = filter_messages([two, ToolMessage("r", tool_call_id="c1")], exclude_tool_calls=["c1"])
    assert len(kept) == 1
    assert [c["id"] for c in kept[0].tool_calls] == ["c2"]
    assert [b.get("id") for b in kept[0].content] == [None, "c2"]


def test_filter_without_messages_returns_a_reusable_transform(
    history: list[BaseMessage],
) -> None:
    only_humans = filter_messages(include_types="human")
    assert ids(only_humans(history)) == ["h1", "h2"]
    assert ids(only_humans.invoke(history)) == ["h1", "h2"]


# ---------------------------------------------------------------- trimming


def test_trim_last_by_message_count(history: list[BaseMessage]) -> None:
    assert ids(trim_messages(history, max_tokens=3, token_counter=len)) == ["a2", "h2", "a3"]
    assert ids(trim_messages(history, max_tokens=3, token_counter=len, include_system=True)) == [
        "s",
        "h2",
        "a3",
    ]
    assert ids(
        trim_messages(
            history, max_tokens=4, token_counter=len, include_system=True, start_on="human"
        )
    ) == ["s", "h2", "a3"]
    assert ids(trim_messages(history, max_tokens=5, token_counter=len, end_on=("human",))) == [
        "h1",
        "a1",
        "t1",
        "a2",
        "h2",
    ]


def test_trim_first(history: list[BaseMessage]) -> None:
    assert ids(trim_messages(history, max_tokens=4, token_counter=len, strategy="first")) == [
        "s",
        "h1",
        "a1",
        "t1",
    ]
    assert ids(
        trim_messages(history, max_tokens=4, token_counter=len, strategy="first", end_on="human")
    ) == ["s", "h1"]


def test_trim_with_a_token_counter(history: list[BaseMessage]) -> None:
    # chars: s=3 h1=14 a1=7 t1=2 a2=8 h2=6 a3=3
    assert ids(trim_messages(history, max_tokens=20, token_counter=chars)) == [
        "t1",
        "a2",
        "h2",
        "a3",
    ]

    def per_message(message: BaseMessage) -> int:
        return 1

    assert ids(trim_messages(history, max_tokens=2, token_counter=per_message)) == ["h2", "a3"]


def test_trim_partially_by_lines() -> None:
    long = [HumanMessage("one\ntwo\nthree", id="x"), AIMessage("ok", id="y")]
    kept = trim_messages(long, max_tokens=12, token_counter=chars, allow_partial=True)
    assert [(m.id, m.content) for m in kept] == [("x", "two\nthree"), ("y", "ok")]
    first = trim_messages(
        long, max_tokens=8, token_counter=chars, strategy="first", allow_partial=True
    )
    assert [(m.id, m.content) for m in first] == [("x", "one\ntwo\n")]


def test_trim_approximately(history: list[BaseMessage]) -> None:
    assert count_tokens_approximately([HumanMessage("abcde")]) == 6
    assert count_tokens_approximately([AIMessage("abcd")]) == 7
    assert count_tokens_approximately([ToolMessage("abcd", tool_call_id="x")]) == 6
    assert ids(trim_messages(history, max_tokens=12, token_counter="approximate")) == ["h2", "a3"]


def test_trim_option_errors(history: list[BaseMessage]) -> None:
    with pytest.raises(ValueError, match=r"include_system.*strategy='last'"):
        trim_messages(
            history, max_tokens=2, token_counter=len, strategy="first", include_system=True
        )
    with pytest.raises(ValueError, match=r"start_on.*strategy='last'"):
        trim_messages(history, max_tokens=2, token_counter=len, strategy="first", start_on="human")
    with pytest.raises(ValueError, match="token_counter=42"):
        trim_messages(history, max_tokens=2, token_counter=42)


def test_trimmer_transform(history: list[BaseMessage]) -> None:
    trimmer = trim_messages(max_tokens=2, token_counter=len)
    assert ids(trimmer(history)) == ["h2", "a3"]
