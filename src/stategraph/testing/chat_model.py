"""``FakeChatModel``: a chat model that answers from a script, for tests and examples.

It behaves like a real model in a graph: it takes tools with ``bind_tools``, answers
with text or tool calls, and streams each reply token by token (tool-call arguments
in pieces of JSON), so ``stream_mode="messages"`` shows what a real model would.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from typing import Any, Union

from stategraph.messages import AIMessage, AIMessageChunk
from stategraph.models._base import ChatModel
from stategraph.models._tools import ToolSpec

__all__ = ["FakeChatModel", "ScriptedReply"]

ScriptedReply = Union[AIMessage, str, Mapping[str, Any], Callable[[list[Any]], Any]]
"""One scripted answer: an ``AIMessage``, its text, a dict of ``AIMessage`` fields
(``{"content": ..., "tool_calls": [...]}``), or a function of the input messages
returning one of those."""

_TOKEN = re.compile(r"\s+|[^\s]+")
_ARG_PIECES = 3


def _as_message(value: Any, index: int) -> AIMessage:
    if isinstance(value, AIMessage):
        return value
    if isinstance(value, str):
        return AIMessage(value)
    if isinstance(value, Mapping):
        data = dict(value)
        return AIMessage(data.pop("content", ""), **data)
    raise TypeError(
        f"FakeChatModel reply #{index} is {type(value).__name__} {value!r:.100}; script "
        "replies as AIMessage objects, strings, dicts of AIMessage fields, or functions "
        "of the input messages returning one of those."
    )


class _Script:
    """The replies and the record of calls, shared by a model and its bound copies."""

    def __init__(self, replies: Sequence[ScriptedReply], cycle: bool) -> None:
        self.replies = list(replies)
        self.cycle = cycle
        self.position = 0
        self.calls: list[list[Any]] = []
        self.bound: list[list[str]] = []
        self.lock = threading.Lock()

    def next(self, messages: list[Any]) -> AIMessage:
        with self.lock:
            if self.position >= len(self.replies):
                if not self.cycle or not self.replies:
                    raise IndexError(
                        f"FakeChatModel has no reply left: it was scripted with "
                        f"{len(self.replies)} replies and this is call #{self.position + 1}. "
                        "Script more replies, or pass cycle=True to start over."
                    )
                self.position = 0
            index = self.position
            self.position += 1
            self.calls.append(list(messages))
        reply = self.replies[index]
        if callable(reply) and not isinstance(reply, (AIMessage, Mapping)):
            reply = reply(list(messages))
        return _as_message(reply, index)


def _pieces(text: str, count: int) -> list[str]:
    size = max(1, -(-len(text) // count))
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


class FakeChatModel(ChatModel):
    """A chat model answering from ``replies``, one per call, streaming token by token.

    ``replies``: ``AIMessage`` s, strings, dicts of ``AIMessage`` fields, or
    functions of the input messages (see :data:`ScriptedReply`). Tool calls are
    written as usual: ``AIMessage("", tool_calls=[{"name": "add", "args": {...},
    "id": "call_1"}])``. When the script runs out, the next call raises
    ``IndexError`` (or starts over with ``cycle=True``).

    ``calls`` records the messages of each call; ``bound_tool_names`` the names of
    the tools of each ``bind_tools`` (a bound copy shares the script and the records).

    Example::

        model = FakeChatModel([
            AIMessage("", tool_calls=[{"name": "add", "args": {"a": 1, "b": 2}, "id": "1"}]),
            "The sum is 3.",
        ])
        agent = create_react_agent(model, [add])
    """

    provider = "fake"

    def __init__(
        self,
        replies: Sequence[ScriptedReply],
        *,
        cycle: bool = False,
        model_name: str = "fake-chat-model",
        tags: Sequence[str] | None = None,
        name: str | None = None,
    ) -> None:
        if isinstance(replies, (str, AIMessage)) or not isinstance(replies, Sequence):
            raise TypeError(
                "FakeChatModel takes a list of replies, e.g. FakeChatModel(['hi', 'bye'])."
            )
        super().__init__(tags=tags, name=name)
        self.model_name = model_name
        self._script = _Script(replies, cycle)
        for index, reply in enumerate(self._script.replies):
            if not callable(reply) or isinstance(reply, (AIMessage, Mapping)):
                _as_message(reply, index)  # reject bad replies now, not mid-run

    @property
    def calls(self) -> list[list[Any]]:
        """The input messages of each call so far (shared with bound copies)."""
        return self._script.calls

    @property
    def bound_tool_names(self) -> list[list[str]]:
        """The tool names of each ``bind_tools`` call on this model or its copies."""
        return self._script.bound

    def bind_tools(
        self, tools: Sequence[Any], *, tool_choice: Any = None, **kwargs: Any
    ) -> FakeChatModel:
        """A copy offering ``tools`` (sharing this model's script and records)."""
        bound = super().bind_tools(tools, tool_choice=tool_choice, **kwargs)
        self._script.bound.append([t["name"] for t in bound.tools])
        return bound

    def _generate(
        self, messages: list[Any], *, tools: list[ToolSpec], tool_choice: Any, **options: Any
    ) -> AIMessage:
        return self._script.next(messages)

    async def _agenerate(
        self, messages: list[Any], *, tools: list[ToolSpec], tool_choice: Any, **options: Any
    ) -> AIMessage:
        return self._script.next(messages)

    def _stream(
        self, messages: list[Any], *, tools: list[ToolSpec], tool_choice: Any, **options: Any
    ) -> Iterator[AIMessageChunk]:
        yield from self.reply_chunks(self._script.next(messages))

    async def _astream(
        self, messages: list[Any], *, tools: list[ToolSpec], tool_choice: Any, **options: Any
    ) -> AsyncIterator[AIMessageChunk]:
        for chunk in self.reply_chunks(self._script.next(messages)):
            yield chunk

    @staticmethod
    def reply_chunks(reply: AIMessage) -> list[AIMessageChunk]:
        """The chunks ``reply`` streams as: one per word or space, then the tool calls
        in pieces of JSON; the last chunk also carries the usage and response metadata
        (and ``chunk_position="last"``)."""
        chunks: list[AIMessageChunk] = []
        first: dict[str, Any] = {"name": reply.name, "additional_kwargs": reply.additional_kwargs}
        content = reply.content
        if isinstance(content, str):
            for token in _TOKEN.findall(content):
                chunks.append(AIMessageChunk(token, id=reply.id, **(first if not chunks else {})))
        elif content:
            chunks.append(AIMessageChunk(list(content), id=reply.id, **first))
        calls: list[tuple[str | None, str, str | None]] = [
            (c["name"], json.dumps(c["args"]), c.get("id")) for c in reply.tool_calls
        ]
        calls += [
            (c.get("name"), c.get("args") or "", c.get("id")) for c in reply.invalid_tool_calls
        ]
        for index, (name, args, call_id) in enumerate(calls):
            for n, piece in enumerate(_pieces(args, _ARG_PIECES)):
                head = n == 0
                chunks.append(
                    AIMessageChunk(
                        "",
                        id=reply.id,
                        tool_call_chunks=[
                            {
                                "name": name if head else None,
                                "args": piece,
                                "id": call_id if head else None,
                                "index": index,
                            }
                        ],
                        **(first if not chunks else {}),
                    )
                )
        if not chunks:
            chunks.append(AIMessageChunk("", id=reply.id, **first))
        last = chunks[-1]
        chunks[-1] = AIMessageChunk(
            last.content,
            id=last.id,
            name=last.name,
            additional_kwargs=last.additional_kwargs,
            tool_call_chunks=last.tool_call_chunks,
            usage_metadata=reply.usage_metadata,
            response_metadata=dict(reply.response_metadata),
            chunk_position="last",
        )
        return chunks
