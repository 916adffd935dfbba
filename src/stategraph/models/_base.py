"""The chat-model protocol and :class:`ChatModel`, the base of stategraph's adapters.

A chat model, for stategraph, is any object with::

    invoke(messages, config=None) -> AIMessage
    async ainvoke(messages, config=None) -> AIMessage
    stream(messages, config=None) -> Iterator[AIMessageChunk]
    astream(messages, config=None) -> AsyncIterator[AIMessageChunk]
    bind_tools(tools) -> a chat model that may answer with tool calls

(:class:`ChatModelProtocol`). ``create_react_agent``, ``ToolNode`` and hand-written
nodes use only that. :class:`ChatModel` implements it once for every adapter: a
subclass writes ``_stream`` (and ``_astream``), and gets ``invoke``/``stream`` that
report to the running graph — so ``model.invoke(...)`` inside a node streams its
tokens to ``stream_mode="messages"`` when, and only when, the caller asks for them.
"""

from __future__ import annotations

import asyncio
import copy
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from typing_extensions import Self

from stategraph.messages import AIMessage, AIMessageChunk, convert_to_messages
from stategraph.messages._chunks import message_chunk_to_message
from stategraph.models._tools import ToolSpec, tool_specs
from stategraph.observe import ModelCall, begin_model_call

__all__ = ["ChatModelProtocol", "ChatModel", "to_messages"]


@runtime_checkable
class ChatModelProtocol(Protocol):
    """What stategraph needs from a chat model (LangChain chat models fit it too)."""

    def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        """Answer ``input`` (a list of messages) with one AI message."""
        ...

    async def ainvoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        """Async :meth:`invoke`."""
        ...

    def stream(self, input: Any, config: Any = None, **kwargs: Any) -> Iterator[Any]:
        """Answer ``input`` as a stream of ``AIMessageChunk`` s."""
        ...

    def astream(self, input: Any, config: Any = None, **kwargs: Any) -> AsyncIterator[Any]:
        """Async :meth:`stream`."""
        ...

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        """A model that knows ``tools`` and may answer with tool calls."""
        ...


def to_messages(input: Any) -> list[Any]:
    """A model input as a list of messages (a string, message-likes or a prompt value)."""
    to_list = getattr(input, "to_messages", None)
    if callable(to_list):
        input = to_list()
    return convert_to_messages(input)


def _config_tags_and_metadata(config: Any) -> tuple[list[str], dict[str, Any]]:
    if not config:
        return [], {}
    if not isinstance(config, Mapping):
        raise TypeError(
            f"A chat model's config must be a dict (RunnableConfig), got {type(config).__name__}."
        )
    return list(config.get("tags") or ()), dict(config.get("metadata") or {})


class ChatModel(ABC):
    """Base class of stategraph chat models (adapters and the fake model).

    Subclasses implement :meth:`_stream` (chunks of one reply) and may override
    :meth:`_astream`, :meth:`_generate` and :meth:`_agenerate` when the provider has a
    cheaper non-streaming call. ``tools`` (neutral specs, see :meth:`bind_tools`) and
    ``tool_choice`` are passed to those methods.

    ``provider`` and ``model_name`` appear in the ``messages`` stream metadata as
    ``ls_provider`` and ``ls_model_name``; ``tags`` (e.g. ``["nostream"]``) are added to
    the calling task's tags.
    """

    provider: str = "stategraph"
    model_name: str = ""

    def __init__(self, *, tags: Sequence[str] | None = None, name: str | None = None) -> None:
        self.tags: list[str] = list(tags or ())
        self.name = name or type(self).__name__
        self.tools: list[ToolSpec] = []
        self.tool_choice: Any = None
        self.bound_tools: list[Any] = []

    # ------------------------------------------------------------- subclass API
    @abstractmethod
    def _stream(
        self, messages: list[Any], *, tools: list[ToolSpec], tool_choice: Any, **options: Any
    ) -> Iterator[AIMessageChunk]:
        """Yield the chunks of the reply to ``messages``."""

    async def _astream(
        self, messages: list[Any], *, tools: list[ToolSpec], tool_choice: Any, **options: Any
    ) -> AsyncIterator[AIMessageChunk]:
        """Async :meth:`_stream`; by default runs the sync one in a worker thread."""
        iterator = self._stream(messages, tools=tools, tool_choice=tool_choice, **options)
        done = object()
        while True:
            chunk = await asyncio.to_thread(next, iterator, done)
            if chunk is done:
                return
            yield chunk  # type: ignore[misc]

    def _generate(
        self, messages: list[Any], *, tools: list[ToolSpec], tool_choice: Any, **options: Any
    ) -> AIMessage:
        """The whole reply; by default the merged chunks of :meth:`_stream`."""
        return _fold(self._stream(messages, tools=tools, tool_choice=tool_choice, **options))

    async def _agenerate(
        self, messages: list[Any], *, tools: list[ToolSpec], tool_choice: Any, **options: Any
    ) -> AIMessage:
        """Async :meth:`_generate`; by default the merged chunks of :meth:`_astream`."""
        reply: Any = None
        async for chunk in self._astream(messages, tools=tools, tool_choice=tool_choice, **options):
            reply = chunk if reply is None else reply + chunk
        return _finish(reply)

    def _ls_metadata(self) -> dict[str, Any]:
        meta: dict[str, Any] = {"ls_provider": self.provider, "ls_model_type": "chat"}
        if self.model_name:
            meta["ls_model_name"] = self.model_name
        return meta

    # ------------------------------------------------------------- public API
    def bind_tools(self, tools: Sequence[Any], *, tool_choice: Any = None, **kwargs: Any) -> Self:
        """A copy of this model that offers ``tools`` to the provider.

        ``tools``: functions, stategraph ``Tool`` s, pydantic models, tool dicts or
        langchain-core tools. ``tool_choice``: ``"auto"``, ``"any"``/``"required"``,
        ``"none"`` or a tool name, passed on in each provider's terms.
        """
        if kwargs:
            raise TypeError(
                f"{type(self).__name__}.bind_tools() got unexpected options {sorted(kwargs)}; "
                "it takes the tools and tool_choice."
            )
        bound = copy.copy(self)
        bound.tools = tool_specs(tools)
        bound.bound_tools = list(tools)
        bound.tool_choice = tool_choice
        return bound

    def with_config(self, config: Mapping[str, Any] | None = None, **kwargs: Any) -> Self:
        """A copy with more ``tags`` (e.g. ``with_config(tags=["nostream"])``)."""
        merged = {**(config or {}), **kwargs}
        unknown = set(merged) - {"tags", "run_name"}
        if unknown:
            raise TypeError(
                f"{type(self).__name__}.with_config() supports tags and run_name, got "
                f"{sorted(unknown)}."
            )
        new = copy.copy(self)
        new.tags = [*self.tags, *(merged.get("tags") or ())]
        if merged.get("run_name"):
            new.name = merged["run_name"]
        return new

    def _begin(self, messages: list[Any], config: Any) -> ModelCall | None:
        tags, metadata = _config_tags_and_metadata(config)
        return begin_model_call(
            self,
            messages,
            name=self.name,
            tags=[*self.tags, *tags],
            metadata={**self._ls_metadata(), **metadata},
        )

    def _options(self) -> dict[str, Any]:
        return {"tools": self.tools, "tool_choice": self.tool_choice}

    def invoke(self, input: Any, config: Any = None, **options: Any) -> AIMessage:
        """Answer ``input`` with one ``AIMessage``.

        Inside a node of a run that streams ``"messages"`` (or has other model-call
        handlers), the reply is streamed under the hood and each chunk reported.
        """
        messages = to_messages(input)
        call = self._begin(messages, config)
        if call is None:
            return self._generate(messages, **self._options(), **options)
        try:
            if call.streams:
                reply = _Reply(call)
                for chunk in self._stream(messages, **self._options(), **options):
                    reply.add(chunk)
                message = reply.message()
            else:
                message = self._generate(messages, **self._options(), **options)
        except BaseException as exc:
            call.error(exc)
            raise
        return call.end(message)

    async def ainvoke(self, input: Any, config: Any = None, **options: Any) -> AIMessage:
        """Async :meth:`invoke`."""
        messages = to_messages(input)
        call = self._begin(messages, config)
        if call is None:
            return await self._agenerate(messages, **self._options(), **options)
        try:
            if call.streams:
                reply = _Reply(call)
                async for chunk in self._astream(messages, **self._options(), **options):
                    reply.add(chunk)
                message = reply.message()
            else:
                message = await self._agenerate(messages, **self._options(), **options)
        except BaseException as exc:
            call.error(exc)
            raise
        return call.end(message)

    def stream(self, input: Any, config: Any = None, **options: Any) -> Iterator[AIMessageChunk]:
        """Answer ``input`` as chunks (reported to the running graph as they come)."""
        messages = to_messages(input)
        call = self._begin(messages, config)
        if call is None:
            yield from self._stream(messages, **self._options(), **options)
            return
        reply = _Reply(call)
        try:
            for chunk in self._stream(messages, **self._options(), **options):
                yield reply.add(chunk)
        except BaseException as exc:
            call.error(exc)
            raise
        call.end(reply.message())

    async def astream(
        self, input: Any, config: Any = None, **options: Any
    ) -> AsyncIterator[AIMessageChunk]:
        """Async :meth:`stream`."""
        messages = to_messages(input)
        call = self._begin(messages, config)
        if call is None:
            async for chunk in self._astream(messages, **self._options(), **options):
                yield chunk
            return
        reply = _Reply(call)
        try:
            async for chunk in self._astream(messages, **self._options(), **options):
                yield reply.add(chunk)
        except BaseException as exc:
            call.error(exc)
            raise
        call.end(reply.message())

    def __repr__(self) -> str:
        model = f"model={self.model_name!r}, " if self.model_name else ""
        return f"{type(self).__name__}({model}tools={[t['name'] for t in self.tools]!r})"


class _Reply:
    """The chunks of one model call as they stream: each is reported to the running
    graph's ``call`` (which may hand back a changed chunk) and folded into the reply;
    the same for the sync and the async shells."""

    __slots__ = ("call", "reply")

    def __init__(self, call: ModelCall) -> None:
        self.call = call
        self.reply: Any = None

    def add(self, chunk: AIMessageChunk) -> AIMessageChunk:
        """Report ``chunk``; return what was reported (the one to pass on)."""
        chunk = self.call.chunk(chunk)
        self.reply = chunk if self.reply is None else self.reply + chunk
        return chunk

    def message(self) -> AIMessage:
        """The whole reply so far as one ``AIMessage``."""
        return _finish(self.reply)


def _finish(reply: Any) -> AIMessage:
    if reply is None:
        return AIMessage("")
    message = message_chunk_to_message(reply)
    if not isinstance(message, AIMessage):
        raise TypeError(
            f"A chat model streamed {type(reply).__name__} chunks; its _stream() must yield "
            "AIMessageChunk objects."
        )
    return message


def _fold(chunks: Iterator[AIMessageChunk]) -> AIMessage:
    reply: Any = None
    for chunk in chunks:
        reply = chunk if reply is None else reply + chunk
    return _finish(reply)
