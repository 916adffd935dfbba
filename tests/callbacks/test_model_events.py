"""Chat-model calls inside nodes reach callback handlers and astream_events."""

from __future__ import annotations

from typing import Any

from stategraph.callbacks import BaseCallbackHandler
from stategraph.graph import START, StateGraph
from stategraph.graph.message import MessagesState
from stategraph.messages import AIMessage, AIMessageChunk, HumanMessage, message_chunk_to_message
from stategraph.observe._model_calls import begin_model_call


class WordModel:
    """Replies with ``text``, one chunk per word when somebody wants tokens."""

    def __init__(self, text: str) -> None:
        self.text = text

    def invoke(self, messages: list[Any]) -> AIMessage:
        call = begin_model_call(self, messages, name="word-model")
        if call is None:
            return AIMessage(self.text)
        if not call.streams:
            return call.end(AIMessage(self.text))
        reply = None
        for word in self.text.split(" "):
            chunk = call.chunk(AIMessageChunk(word + " "))
            reply = chunk if reply is None else reply + chunk
        return call.end(message_chunk_to_message(reply))


def _graph(model: WordModel) -> Any:
    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    return StateGraph(MessagesState).add_node("agent", agent).add_edge(START, "agent").compile()


async def test_model_events_stream_tokens_under_their_node() -> None:
    events = [
        e
        async for e in _graph(WordModel("hi there")).astream_events(
            {"messages": [HumanMessage("hello", id="h")]}, version="v2"
        )
    ]
    kinds = [(e["event"], e["name"]) for e in events if "chat_model" in e["event"]]
    assert kinds == [
        ("on_chat_model_start", "word-model"),
        ("on_chat_model_stream", "word-model"),
        ("on_chat_model_stream", "word-model"),
        ("on_chat_model_end", "word-model"),
    ]
    start = next(e for e in events if e["event"] == "on_chat_model_start")
    node = next(e for e in events if e["event"] == "on_chain_start" and e["name"] == "agent")
    assert start["parent_ids"][-1] == node["run_id"]
    assert [m.content for m in start["data"]["input"]["messages"][0]] == ["hello"]
    chunks = [e["data"]["chunk"].content for e in events if e["event"] == "on_chat_model_stream"]
    assert chunks == ["hi ", "there "]
    end = next(e for e in events if e["event"] == "on_chat_model_end")
    assert end["data"]["output"].content == "hi there "
    assert start["metadata"]["langgraph_node"] == "agent"


class LLMLog(BaseCallbackHandler):
    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def on_chat_model_start(self, serialized: Any, messages: Any, **kw: Any) -> None:
        self.calls.append(("start", kw["name"]))

    def on_llm_new_token(self, token: str, **kw: Any) -> None:
        self.calls.append(("token", token))

    def on_llm_end(self, response: Any, **kw: Any) -> None:
        self.calls.append(("end", response.generations[0][0].message.content))


def test_callback_handlers_see_model_calls() -> None:
    log = LLMLog()
    _graph(WordModel("a b")).invoke({"messages": []}, {"callbacks": [log]})
    assert log.calls == [("start", "word-model"), ("token", "a "), ("token", "b "), ("end", "a b ")]
