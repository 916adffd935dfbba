"""Message chunks: merging with ``+``, tool-call assembly, conversion, add_messages."""

from __future__ import annotations

import pytest

from stategraph.graph import END, START, StateGraph
from stategraph.graph.message import MessagesState, add_messages
from stategraph.messages import (
    AIMessage,
    AIMessageChunk,
    ChatMessageChunk,
    HumanMessage,
    HumanMessageChunk,
    SystemMessageChunk,
    ToolMessage,
    ToolMessageChunk,
    message_chunk_to_message,
)
from stategraph.messages._merge import merge_dicts, parse_partial_json


def _tool_piece(args: str | None, *, name: str | None = "add", id: str | None = "c1", index=0):
    return AIMessageChunk(
        "", tool_call_chunks=[{"name": name, "args": args, "id": id, "index": index}]
    )


def test_string_content_concatenates_and_keeps_first_id() -> None:
    merged = AIMessageChunk("Hel", id="m1") + AIMessageChunk("lo", id="m2")
    assert merged == AIMessageChunk("Hello", id="m1")
    assert merged.type == "AIMessageChunk"


def test_generated_id_gives_way_to_the_providers() -> None:
    assert (AIMessageChunk("a", id="lc_run--1") + AIMessageChunk("b", id="prov")).id == "prov"
    assert (AIMessageChunk("a") + AIMessageChunk("b", id="x")).id == "x"
    assert (AIMessageChunk("a", id="run-7") + AIMessageChunk("b", id="lc_run--2")).id == "run-7"


def test_content_blocks_merge_by_index() -> None:
    left = AIMessageChunk([{"type": "text", "text": "ab", "index": 0}])
    right = AIMessageChunk(
        [
            {"type": "text", "text": "cd", "index": 0},
            {"type": "tool_use", "id": "t", "index": 1, "partial_json": "{"},
        ]
    )
    more = AIMessageChunk([{"type": "tool_use", "index": 1, "partial_json": "}"}])
    assert (left + right + more).content == [
        {"type": "text", "text": "abcd", "index": 0},
        {"type": "tool_use", "id": "t", "index": 1, "partial_json": "{}"},
    ]


def test_mixed_string_and_block_content() -> None:
    assert (AIMessageChunk("x") + AIMessageChunk([{"type": "text", "text": "y"}])).content == [
        "x",
        {"type": "text", "text": "y"},
    ]
    assert (AIMessageChunk(["a"]) + AIMessageChunk("b")).content == ["ab"]
    assert (AIMessageChunk([{"type": "text", "text": "a"}]) + AIMessageChunk("")).content == [
        {"type": "text", "text": "a"}
    ]


def test_tool_call_chunks_assemble_into_tool_calls() -> None:
    first = _tool_piece('{"a": 1,')
    assert first.tool_calls == [{"name": "add", "args": {"a": 1}, "id": "c1", "type": "tool_call"}]
    second = AIMessageChunk(
        "",
        tool_call_chunks=[
            {"name": None, "args": ' "b": 2}', "id": None, "index": 0},
            {"name": "mul", "args": '{"x": "hal', "id": "c2", "index": 1},
        ],
    )
    merged = first + second
    assert merged.tool_call_chunks[0]["args"] == '{"a": 1, "b": 2}'
    assert merged.tool_calls == [
        {"name": "add", "args": {"a": 1, "b": 2}, "id": "c1", "type": "tool_call"},
        {"name": "mul", "args": {"x": "hal"}, "id": "c2", "type": "tool_call"},
    ]
    assert merged.invalid_tool_calls == []


def test_two_calls_sharing_an_index_stay_apart_when_ids_differ() -> None:
    merged = _tool_piece("{}", name="f", id="1") + _tool_piece("{}", name="g", id="2")
    assert [c["name"] for c in merged.tool_calls] == ["f", "g"]


@pytest.mark.parametrize("args", ["not json", '{"a": 1}}', "[1, 2]", "123", "null", '"s"'])
def test_arguments_that_are_not_an_object_are_invalid_tool_calls(args: str) -> None:
    chunk = _tool_piece(args)
    assert chunk.tool_calls == []
    assert chunk.invalid_tool_calls == [
        {"name": "add", "args": args, "id": "c1", "error": None, "type": "invalid_tool_call"}
    ]
    message = message_chunk_to_message(chunk)
    assert isinstance(message, AIMessage) and message.invalid_tool_calls[0]["args"] == args


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", {}),
        ("{", {}),
        ('{"a": ', {}),
        ('{"a": tru', {}),
        ('{"a": 1.', {"a": 1}),
        ('{"a": [1, 2', {"a": [1, 2]}),
        ('{"a": {"b": "x\\', {"a": {"b": "x"}}),
        ('{"a": 1, "a_long_key_still_being_writ', {"a": 1}),
        ('{"a": "two\nlines', {"a": "two\nlines"}),
    ],
)
def test_partial_arguments_read_as_far_as_they_go(text: str, expected: dict) -> None:
    assert _tool_piece(text).tool_calls[0]["args"] == expected


def test_partial_json_rejects_mismatched_brackets() -> None:
    with pytest.raises(ValueError, match="Not valid"):
        parse_partial_json('{"a": [1}')


def test_tool_calls_given_directly_become_chunks() -> None:
    chunk = AIMessageChunk("", tool_calls=[{"name": "f", "args": {"a": 1}, "id": "1"}])
    assert chunk.tool_call_chunks == [
        {"name": "f", "args": '{"a": 1}', "id": "1", "index": None, "type": "tool_call_chunk"}
    ]


def test_usage_is_summed_with_details() -> None:
    a = AIMessageChunk(
        "a",
        usage_metadata={
            "input_tokens": 3,
            "output_tokens": 1,
            "total_tokens": 4,
            "input_token_details": {"cache_read": 2},
        },
    )
    b = AIMessageChunk(
        "b",
        usage_metadata={
            "input_tokens": 0,
            "output_tokens": 2,
            "total_tokens": 2,
            "input_token_details": {"cache_read": 1, "audio": 1},
        },
    )
    assert (a + b).usage_metadata == {
        "input_tokens": 3,
        "output_tokens": 3,
        "total_tokens": 6,
        "input_token_details": {"cache_read": 3, "audio": 1},
    }
    assert (a + AIMessageChunk("c")).usage_metadata == a.usage_metadata


def test_response_metadata_and_kwargs_merge() -> None:
    a = AIMessageChunk("a", response_metadata={"model_name": "m", "n": 1, "id": "r"})
    b = AIMessageChunk("b", response_metadata={"finish_reason": "stop", "n": 2, "id": "r"})
    assert (a + b).response_metadata == {
        "model_name": "m",
        "n": 3,
        "id": "r",
        "finish_reason": "stop",
    }
    assert merge_dicts({"l": [1], "d": {"x": "a"}}, {"l": [2], "d": {"x": "b", "y": None}}) == {
        "l": [1, 2],
        "d": {"x": "ab", "y": None},
    }


def test_merging_incompatible_metadata_names_the_field() -> None:
    with pytest.raises(TypeError, match=r"field 'f'.*int.*str"):
        AIMessageChunk("", response_metadata={"f": 1}) + AIMessageChunk(
            "", response_metadata={"f": "x"}
        )


def test_last_position_sticks() -> None:
    merged = AIMessageChunk("a") + AIMessageChunk("b", chunk_position="last")
    assert merged.chunk_position == "last"
    with pytest.raises(ValueError, match="chunk_position"):
        AIMessageChunk("a", chunk_position="first")  # type: ignore[arg-type]


def test_sum_and_list_addition() -> None:
    parts = [AIMessageChunk(t) for t in "abc"]
    assert sum(parts[1:], parts[0]).content == "abc"
    assert (parts[0] + parts[1:]).content == "abc"


def test_adding_a_chunk_of_another_kind_is_a_type_error() -> None:
    with pytest.raises(TypeError, match=r"Cannot add HumanMessageChunk to AIMessageChunk"):
        AIMessageChunk("a") + HumanMessageChunk("b")
    with pytest.raises(TypeError, match="AIMessage to AIMessageChunk"):
        AIMessageChunk("a") + AIMessage("b")


def test_adding_mismatched_chunks_inside_a_node_names_the_node() -> None:
    def bad(state: MessagesState) -> dict:
        return {"messages": [AIMessageChunk("a") + SystemMessageChunk("b")]}

    builder = StateGraph(MessagesState)
    builder.add_node("writer", bad)
    builder.add_edge(START, "writer")
    builder.add_edge("writer", END)
    with pytest.raises(TypeError, match="in node 'writer'"):
        builder.compile().invoke({"messages": []})


def test_tool_and_chat_chunks_check_their_identity() -> None:
    merged = ToolMessageChunk("a", tool_call_id="1") + ToolMessageChunk(
        "b", tool_call_id="1", status="error"
    )
    assert (merged.content, merged.status) == ("ab", "error")
    with pytest.raises(ValueError, match="different tool calls"):
        ToolMessageChunk("a", tool_call_id="1") + ToolMessageChunk("b", tool_call_id="2")
    assert (ChatMessageChunk("a", role="x") + ChatMessageChunk("b", role="x")).content == "ab"
    with pytest.raises(ValueError, match="different roles"):
        ChatMessageChunk("a", role="x") + ChatMessageChunk("b", role="y")


def test_chunk_to_message() -> None:
    chunk = AIMessageChunk("hi", id="m", chunk_position="last") + _tool_piece('{"a": 1}')
    message = message_chunk_to_message(chunk)
    assert type(message) is AIMessage
    assert message == AIMessage(
        "hi", id="m", tool_calls=[{"name": "add", "args": {"a": 1}, "id": "c1"}]
    )
    tool = message_chunk_to_message(ToolMessageChunk("r", tool_call_id="c1"))
    assert type(tool) is ToolMessage
    plain = HumanMessage("x")
    assert message_chunk_to_message(plain) is plain


def test_chunks_are_instances_of_their_message_class() -> None:
    chunk = AIMessageChunk("x")
    assert isinstance(chunk, AIMessage)
    assert chunk != AIMessage("x")


def test_add_messages_stores_chunks_as_messages() -> None:
    reply = AIMessageChunk("Hel", id="r") + AIMessageChunk("lo")
    merged = add_messages([HumanMessage("hi", id="h")], [reply])
    assert merged == [HumanMessage("hi", id="h"), AIMessage("Hello", id="r")]
    assert type(merged[1]) is AIMessage
    no_id = add_messages([], AIMessageChunk("x"))
    assert type(no_id[0]) is AIMessage and no_id[0].id


def test_graph_state_holds_full_messages_for_streamed_replies() -> None:
    def node(state: MessagesState) -> dict:
        return {"messages": AIMessageChunk("a", id="r") + AIMessageChunk("b")}

    builder = StateGraph(MessagesState)
    builder.add_node("n", node)
    builder.add_edge(START, "n")
    out = builder.compile().invoke({"messages": [HumanMessage("q", id="q")]})
    assert out["messages"][-1] == AIMessage("ab", id="r")


def test_a_node_writing_a_non_message_is_named() -> None:
    def writer(state: MessagesState) -> dict:
        return {"messages": [42]}

    builder = StateGraph(MessagesState)
    builder.add_node("writer", writer)
    builder.add_edge(START, "writer")
    with pytest.raises(ValueError, match="Cannot convert 42 to a message") as info:
        builder.compile().invoke({"messages": []})
    assert "While applying the update of node(s) writer to key 'messages'." in str(
        getattr(info.value, "__notes__", None) or info.value
    )
