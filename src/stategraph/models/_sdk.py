"""What the SDK adapters (``ChatOpenAI``, ``ChatAnthropic``) share: written once.

An adapter says how to build a request, which SDK method creates a reply, how to read
a reply and a stream's events; :class:`SdkChatModel` does the rest for both shells:
choosing and checking the clients, the sync and async calls, streaming and closing
the stream, and falling back to the sync client in a worker thread when there is no
async one.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from typing import Any, ClassVar

from stategraph.messages import AIMessage, AIMessageChunk
from stategraph.models._base import ChatModel
from stategraph.models._clients import ClientSettings, build_clients
from stategraph.models._tools import ToolSpec

__all__ = ["SdkChatModel", "sdk_field"]


def sdk_field(obj: Any, key: str, default: Any = None) -> Any:
    """Field ``key`` of a reply, event or part of one, whether the SDK gave an object
    or a dict (``default`` when it is missing, or when ``obj`` is ``None``)."""
    if obj is None:
        return default
    if isinstance(obj, Mapping):
        return obj.get(key, default)
    return getattr(obj, key, default)


class SdkChatModel(ChatModel):
    """Base of the chat models that talk through a vendor SDK's sync and async clients.

    A subclass sets ``_settings`` (its :class:`ClientSettings`) and ``_example_model``
    (named in the error for a missing model), calls :meth:`_connect` from its
    ``__init__``, and writes :meth:`_request`, :meth:`_create`, :meth:`_reply` and
    :meth:`_chunk_reader` (plus :meth:`_streaming` for stream-only request options).
    """

    _settings: ClassVar[ClientSettings]
    _example_model: ClassVar[str]

    client: Any
    async_client: Any

    def _connect(self, model: Any, client: Any, async_client: Any, extra: dict[str, Any]) -> None:
        """Check ``model``, take the client settings out of ``extra``, and set
        ``model_name``, ``client`` and ``async_client`` (built from the settings when
        no client is given; a lone async client serves the async calls)."""
        adapter = self._settings.adapter
        if not model or not isinstance(model, str):
            raise ValueError(
                f"{adapter} needs the model name: {adapter}(model='{self._example_model}', ...)."
            )
        settings = self._settings.pop_settings(extra)
        if client is None and async_client is None:
            client, async_client = build_clients(self._settings, settings)
        elif settings:
            raise TypeError(
                f"{adapter} got a ready client and the client settings {sorted(settings)}; "
                f"configure the client you pass ({self._sdk_class()}(api_key=..., "
                f"base_url=...)), or pass only the settings and let {adapter} build the client."
            )
        if self._is_async_client(client) and async_client is None:
            self.client, self.async_client = None, client
        else:
            self.client, self.async_client = client, async_client
        self.model_name = model

    def _sdk_class(self) -> str:
        return f"{self._settings.module}.{self._settings.sync_class}"

    def _is_async_client(self, client: Any) -> bool:
        """Whether ``client`` is the SDK's async client."""
        return type(client).__name__.startswith("Async")

    # ------------------------------------------------------------- adapter API
    @abstractmethod
    def _request(self, messages: list[Any], tools: list[ToolSpec], tool_choice: Any) -> dict:
        """The SDK call's keyword arguments for ``messages`` (model, tools, options)."""

    @abstractmethod
    def _create(self, client: Any) -> Callable[..., Any]:
        """The SDK method of ``client`` that answers a request."""

    @abstractmethod
    def _reply(self, response: Any) -> AIMessage:
        """The SDK's whole reply as an ``AIMessage``."""

    @abstractmethod
    def _chunk_reader(self) -> Callable[[Any], AIMessageChunk | None]:
        """A reader for one stream: each event as a chunk, or ``None`` for none."""

    def _streaming(self, request: dict[str, Any]) -> None:
        """Add what a streaming request needs besides ``stream=True`` (nothing here)."""

    # ------------------------------------------------------------- the shells
    def _stream_request(
        self, messages: list[Any], tools: list[ToolSpec], tool_choice: Any, options: Any
    ) -> dict[str, Any]:
        request = {**self._request(messages, tools, tool_choice), **options, "stream": True}
        self._streaming(request)
        return request

    def _sync_client(self) -> Any:
        if self.client is None:
            raise RuntimeError(
                f"This {self._settings.adapter} has only an async client; call it with "
                f"ainvoke()/astream() or give it an {self._sdk_class()} client too."
            )
        return self.client

    def _generate(
        self, messages: list[Any], *, tools: list[ToolSpec], tool_choice: Any, **options: Any
    ) -> AIMessage:
        request = {**self._request(messages, tools, tool_choice), **options}
        return self._reply(self._create(self._sync_client())(**request))

    def _stream(
        self, messages: list[Any], *, tools: list[ToolSpec], tool_choice: Any, **options: Any
    ) -> Iterator[AIMessageChunk]:
        request = self._stream_request(messages, tools, tool_choice, options)
        stream = self._create(self._sync_client())(**request)
        read = self._chunk_reader()
        try:
            for event in stream:
                chunk = read(event)
                if chunk is not None:
                    yield chunk
        finally:
            close = getattr(stream, "close", None)
            if callable(close):
                close()

    async def _agenerate(
        self, messages: list[Any], *, tools: list[ToolSpec], tool_choice: Any, **options: Any
    ) -> AIMessage:
        if self.async_client is None:
            import asyncio

            return await asyncio.to_thread(
                self._generate, messages, tools=tools, tool_choice=tool_choice, **options
            )
        request = {**self._request(messages, tools, tool_choice), **options}
        return self._reply(await self._create(self.async_client)(**request))

    async def _astream(
        self, messages: list[Any], *, tools: list[ToolSpec], tool_choice: Any, **options: Any
    ) -> AsyncIterator[AIMessageChunk]:
        if self.async_client is None:
            async for chunk in super()._astream(
                messages, tools=tools, tool_choice=tool_choice, **options
            ):
                yield chunk
            return
        request = self._stream_request(messages, tools, tool_choice, options)
        stream = await self._create(self.async_client)(**request)
        read = self._chunk_reader()
        try:
            async for event in stream:
                piece = read(event)
                if piece is not None:
                    yield piece
        finally:
            close = getattr(stream, "close", None)
            if callable(close):
                result = close()
                if hasattr(result, "__await__"):
                    await result
