"""Tests of stategraph's own message classes and ``convert_to_messages``."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import subprocess
import sys

import pytest

from stategraph.errors import ErrorCode
from stategraph.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
    convert_to_messages,
)

ALL_CLASSES = [HumanMessage, AIMessage, SystemMessage]


# --- construction -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("cls", "type_"), [(HumanMessage, "human"), (AIMessage, "ai"), (SystemMessage, "system")]
)
def test_positional_and_keyword_construction(cls: type[BaseMessage], type_: str) -> None:
    positional = cls("hi")
    keyword = cls(content="hi", id="1", name="bob")
    assert positional.content == "hi"
    assert positional.id is None and positional.name is None
    assert positional.additional_kwargs == {} and positional.response_metadata == {}
    assert positional.type == type_ == cls("x").type
    assert (keyword.content, keyword.id, keyword.name) == ("hi", "1", "bob")


def test_only_content_is_positional() -> None:
    with pytest.raises(TypeError):
        HumanMessage("hi", "id-1")  # type: ignore[call-arg]


def test_default_dicts_are_not_shared() -> None:
    a, b = HumanMessage("a"), HumanMessage("b")
    a.additional_kwargs["x"] = 1
    assert b.additional_kwargs == {}


def test_type_cannot_be_overridden() -> None:
    with pytest.raises(ValueError, match="HumanMessage has type 'human', got type='ai'"):
        HumanMessage("x", type="ai")  # type: ignore[arg-type]
    assert HumanMessage("x", type="human").type == "human"


def test_ai_message_fields_and_tool_call_normalisation() -> None:
    call = {"name": "search", "args": {"q": "x"}, "id": "c1"}
    msg = AIMessage(
        "",
        tool_calls=[call],  # type: ignore[list-item]
        invalid_tool_calls=[{"name": "f", "args": "{bad", "id": "c2", "error": "bad json"}],
        usage_metadata={"input_tokens": 1, "output_tokens": 2, "total_tokens": 3},
    )
    assert msg.tool_calls == [
        {"name": "search", "args": {"q": "x"}, "id": "c1", "type": "tool_call"}
    ]
    assert "type" not in call  # the caller's dict is untouched
    assert msg.invalid_tool_calls[0]["type"] == "invalid_tool_call"
    assert msg.usage_metadata == {"input_tokens": 1, "output_tokens": 2, "total_tokens": 3}
    assert AIMessage("x").tool_calls == [] and AIMessage("x").usage_metadata is None


def test_ai_message_rejects_malformed_tool_calls() -> None:
    with pytest.raises(ValueError, match="malformed tool call"):
        AIMessage("", tool_calls=["search"])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="args must be a dict"):
        AIMessage("", tool_calls=[{"name": "f", "args": "x", "id": "1"}])  # type: ignore[typeddict-item]


def test_tool_message_fields_and_coercion() -> None:
    msg = ToolMessage("result", tool_call_id="c1", name="search", artifact={"raw": 1})
    assert (msg.content, msg.tool_call_id, msg.name, msg.status) == (
        "result",
        "c1",
        "search",
        "success",
    )
    assert msg.artifact == {"raw": 1}
    assert ToolMessage(123, tool_call_id=7).content == "123"  # type: ignore[arg-type]
    assert ToolMessage("x", tool_call_id=7).tool_call_id == "7"  # type: ignore[arg-type]
    assert ToolMessage("x", tool_call_id="1", status="error").status == "error"
    with pytest.raises(ValueError, match="status 'failed'"):
        ToolMessage("x", tool_call_id="1", status="failed")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        ToolMessage("x")  # type: ignore[call-arg]


def test_remove_message() -> None:
    positional = RemoveMessage("m1")
    keyword = RemoveMessage(id="m1")
    assert positional == keyword
    assert (positional.id, positional.content, positional.type) == ("m1", "", "remove")
    with pytest.raises(ValueError, match="takes no content"):
        RemoveMessage("m1", content="x")
    with pytest.raises(ValueError, match="str id"):
        RemoveMessage(None)  # type: ignore[arg-type]


# --- value semantics ----------------------------------------------------------------


def test_equality_by_value_and_class() -> None:
    assert HumanMessage("a", id="1") == HumanMessage(content="a", id="1")
    assert HumanMessage("a", id="1") != HumanMessage("a", id="2")
    assert HumanMessage("a") != AIMessage("a")
    assert AIMessage("a", tool_calls=[{"name": "f", "args": {}, "id": "1"}]) == AIMessage(
        "a", tool_calls=[{"name": "f", "args": {}, "id": "1", "type": "tool_call"}]
    )


def test_repr_is_readable() -> None:
    assert repr(HumanMessage("hi", id="1")) == (
        "HumanMessage(content='hi', id='1', name=None, additional_kwargs={}, response_metadata={})"
    )
    assert repr(RemoveMessage("x")).startswith("RemoveMessage(content='', id='x'")


def test_copy_with_update_validates_and_does_not_mutate() -> None:
    original = AIMessage("a", id="1")
    updated = original.copy(update={"content": "b"})
    assert (updated.content, updated.id, original.content) == ("b", "1", "a")
    assert type(updated) is AIMessage
    assert original.model_copy(update={"id": "2"}).id == "2"
    assert original.copy() == original and original.copy() is not original
    with pytest.raises(ValueError):
        original.copy(update={"type": "human"})
    deep = AIMessage("x", additional_kwargs={"k": [1]})
    clone = deep.model_copy(deep=True)
    clone.additional_kwargs["k"].append(2)
    assert deep.additional_kwargs == {"k": [1]}
    assert RemoveMessage("a").copy(update={"id": "b"}) == RemoveMessage("b")
    assert dataclasses.replace(HumanMessage("a"), id="z").id == "z"


def test_text_property() -> None:
    assert HumanMessage("plain").text == "plain"
    blocks = [
        {"type": "text", "text": "a"},
        "b",
        {"type": "image_url", "image_url": "http://x"},
        {"type": "text", "text": "c"},
    ]
    assert HumanMessage(blocks).text == "abc"  # type: ignore[arg-type]


def test_pretty_repr() -> None:
    human = HumanMessage("hi", name="bob").pretty_repr()
    assert human.splitlines() == [
        "================================ Human Message =================================",
        "Name: bob",
        "",
        "hi",
    ]
    ai = AIMessage("", tool_calls=[{"name": "f", "args": {"a": 1}, "id": "c1"}]).pretty_repr()
    assert "Tool Calls:\n  f (c1)\n Call ID: c1\n  Args:\n    a: 1" in ai
    assert ai.splitlines()[0].count("=") == 80 - len(" Ai Message ")


def test_pretty_print(capsys: pytest.CaptureFixture[str]) -> None:
    SystemMessage("be nice").pretty_print()
    assert capsys.readouterr().out.endswith("\nbe nice\n")


SAMPLES: list[BaseMessage] = [
    HumanMessage("hi", id="1", name="n", additional_kwargs={"a": 1}),
    AIMessage(
        [{"type": "text", "text": "x"}],
        id="2",
        tool_calls=[{"name": "f", "args": {"a": 1}, "id": "c"}],
        usage_metadata={"input_tokens": 1, "output_tokens": 1, "total_tokens": 2},
        response_metadata={"model": "m"},
    ),
    SystemMessage("s", id="3"),
    ToolMessage("r", tool_call_id="c", status="error", artifact=[1], id="4"),
    RemoveMessage("5"),
]


@pytest.mark.parametrize("message", SAMPLES)
def test_rebuild_from_fields_pickle_and_copy(message: BaseMessage) -> None:
    fields = {f.name: getattr(message, f.name) for f in dataclasses.fields(message)}
    assert "type" in fields
    assert type(message)(**fields) == message
    assert pickle.loads(pickle.dumps(message)) == message
    assert copy.deepcopy(message) == message


@pytest.mark.parametrize("message", SAMPLES)
def test_round_trip_through_the_checkpoint_serializer(message: BaseMessage) -> None:
    from stategraph.checkpoint.serde.jsonplus import JsonPlusSerializer

    serde = JsonPlusSerializer()
    restored = serde.loads_typed(serde.dumps_typed({"messages": [message]}))
    assert restored == {"messages": [message]}
    assert type(restored["messages"][0]) is type(message)


def test_messages_are_unhashable_like_langchain() -> None:
    with pytest.raises(TypeError):
        hash(HumanMessage("x"))


def test_pydantic_accepts_messages_in_models() -> None:
    from pydantic import TypeAdapter

    adapter = TypeAdapter(list[AnyMessage])
    human = HumanMessage("x", id="1")
    validated = adapter.validate_python([human, {"type": "ai", "content": "y", "id": "2"}])
    assert validated[0] is human
    assert validated[1] == AIMessage("y", id="2")
    assert adapter.dump_python([human])[0]["type"] == "human"
    assert set(adapter.json_schema()["$defs"]) >= {"HumanMessage", "AIMessage", "ToolMessage"}


def test_import_does_not_load_pydantic_or_asyncio() -> None:
    code = (
        "import sys, stategraph.messages, stategraph.graph, stategraph.graph.message\n"
        "bad = [m for m in ('pydantic', 'asyncio', 'sqlite3', 'ormsgpack') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# --- convert_to_messages ------------------------------------------------------------


def test_convert_keeps_message_objects() -> None:
    msg = HumanMessage("x")
    assert convert_to_messages([msg])[0] is msg
    assert convert_to_messages(msg) == [msg]


@pytest.mark.parametrize(
    ("role", "cls"),
    [
        ("user", HumanMessage),
        ("human", HumanMessage),
        ("assistant", AIMessage),
        ("ai", AIMessage),
        ("system", SystemMessage),
        ("developer", SystemMessage),
    ],
)
def test_convert_roles_from_dicts_and_tuples(role: str, cls: type[BaseMessage]) -> None:
    from_dict = convert_to_messages([{"role": role, "content": "c", "id": "1", "name": "n"}])[0]
    from_tuple = convert_to_messages([(role, "c")])[0]
    assert type(from_dict) is cls and type(from_tuple) is cls
    assert (from_dict.content, from_dict.id, from_dict.name) == ("c", "1", "n")
    assert from_tuple.content == "c" and from_tuple.id is None
    if role == "developer":
        assert from_dict.additional_kwargs == {"__openai_role__": "developer"}


def test_convert_strings_and_single_dict() -> None:
    assert convert_to_messages(["a", "b"]) == [HumanMessage("a"), HumanMessage("b")]
    assert convert_to_messages("solo") == [HumanMessage("solo")]
    assert convert_to_messages({"role": "user", "content": "d"}) == [HumanMessage("d")]
    assert convert_to_messages([["user", "as list"]]) == [HumanMessage("as list")]


def test_convert_dict_details() -> None:
    (msg,) = convert_to_messages(
        [{"role": "user", "content": "x", "id": 5, "extra": 1, "additional_kwargs": {"a": 2}}]
    )
    assert msg.id == "5"
    assert msg.additional_kwargs == {"a": 2, "extra": 1}
    assert convert_to_messages([{"type": "ai", "content": "t"}]) == [AIMessage("t")]
    assert convert_to_messages([{"role": "user", "content": None}]) == [HumanMessage("")]
    typed = convert_to_messages([{"role": "user", "content": "x", "type": "ai"}])[0]
    assert type(typed) is HumanMessage and typed.additional_kwargs == {"type": "ai"}


def test_convert_tool_calls_both_formats() -> None:
    native, openai, broken = convert_to_messages(
        [
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"name": "f", "args": {"x": 1}, "id": "c1"}],
            },
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "type": "function",
                        "id": "c2",
                        "function": {"name": "g", "arguments": '{"y": 2}'},
                    }
                ],
            },
            {
                "role": "assistant",
                "tool_calls": [
                    {"type": "function", "id": "c3", "function": {"name": "h", "arguments": "{bad"}}
                ],
            },
        ]
    )
    assert native.tool_calls == [{"name": "f", "args": {"x": 1}, "id": "c1", "type": "tool_call"}]
    assert openai.tool_calls == [{"name": "g", "args": {"y": 2}, "id": "c2", "type": "tool_call"}]
    assert openai.content == ""
    assert broken.tool_calls == []
    assert broken.invalid_tool_calls[0]["name"] == "h"
    assert broken.invalid_tool_calls[0]["args"] == "{bad"
    assert "not valid JSON" in (broken.invalid_tool_calls[0]["error"] or "")


def test_convert_tool_and_remove_dicts() -> None:
    tool, remove = convert_to_messages(
        [
            {
                "role": "tool",
                "content": "r",
                "tool_call_id": "c1",
                "name": "f",
                "status": "error",
                "artifact": [1],
            },
            {"role": "remove", "id": "m1"},
        ]
    )
    assert tool == ToolMessage("r", tool_call_id="c1", name="f", status="error", artifact=[1])
    assert remove == RemoveMessage("m1")


class _Foreign:
    """A message from another library: duck-typed by type/content/id."""

    def __init__(self, content: str, id: str | None = None) -> None:
        self.type = "human"
        self.content = content
        self.id = id


def test_convert_keeps_foreign_message_objects() -> None:
    foreign = _Foreign("hello")
    assert convert_to_messages([foreign])[0] is foreign


@pytest.mark.parametrize(
    ("item", "problem"),
    [
        ({"role": "bogus", "content": "x"}, "unknown role 'bogus'"),
        (("bogus", "x"), "unknown role 'bogus'"),
        ({"content": "x"}, "needs a 'role'"),
        ({"role": "user"}, "needs a 'content' key"),
        ({"role": "tool", "content": "x"}, "needs a 'tool_call_id'"),
        (("tool", "x"), "role 'tool' needs an id"),
        ({"role": "remove"}, "needs the 'id'"),
        (("a", "b", "c"), "got 3 items"),
        (123, "unsupported type int"),
        (object(), "unsupported type object"),
        ({"role": "ai", "content": "", "tool_calls": ["x"]}, "malformed tool call"),
    ],
)
def test_convert_errors_name_the_item(item: object, problem: str) -> None:
    with pytest.raises(ValueError) as info:
        convert_to_messages([item])
    text = str(info.value)
    assert repr(item) in text
    assert problem in text
    assert "Accepted forms:" in text and "user/human, assistant/ai" in text
    assert ErrorCode.INVALID_CHAT_HISTORY.docs_url in text
