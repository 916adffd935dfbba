"""``astream_events(version="v2")`` (and ``"v1"``): LangChain-style event dicts.

The events come from the same chain runs the callback handlers see: an
:class:`EventStreamHandler` is added to the run's ``config["callbacks"]`` and turns
``on_chain_start`` / ``on_chain_end`` / ``on_custom_event`` / tool and chat-model
callbacks into events; the chunks the graph itself streams become the root run's
``on_chain_stream`` events. Event names, fields, run ids, ``parent_ids`` and nesting
follow LangChain's ``astream_events`` for the same graph.
"""

from __future__ import annotations

import asyncio
import threading
import warnings
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn
from uuid import UUID

from stategraph.callbacks import BaseCallbackHandler, read_callbacks

__all__ = ["EventStreamHandler", "astream_events", "stream_events"]

_FILTERS = (
    "include_names",
    "include_types",
    "include_tags",
    "exclude_names",
    "exclude_types",
    "exclude_tags",
)
_VERSIONS = ("v1", "v2", "v3")


def check_version(version: Any) -> None:
    """Raise a clear error for an unknown ``version``."""
    if version not in _VERSIONS:
        raise ValueError(
            f"Unknown events version {version!r}: use version='v2' (event dicts, "
            "astream_events), 'v1' (deprecated) or 'v3' (run objects)."
        )


def stream_events(version: str) -> NoReturn:
    """Sync ``stream_events`` for ``v1``/``v2``: not offered (as in LangGraph)."""
    check_version(version)
    raise NotImplementedError(
        f"stream_events(version={version!r}) is not supported: use "
        f"`async for event in graph.astream_events(..., version={version!r})`, or "
        "stream_events(version='v3') for a synchronous run object."
    )


class _Filter:
    __slots__ = (
        "exclude_names",
        "exclude_tags",
        "exclude_types",
        "include",
        "names",
        "tags",
        "types",
    )

    def __init__(self, options: dict[str, Any]) -> None:
        def as_set(name: str) -> frozenset[str]:
            value = options.get(name)
            if value is None:
                return frozenset()
            if isinstance(value, str):
                raise TypeError(f"astream_events({name}=...) takes a list of strings, got a str.")
            return frozenset(value)

        self.names = as_set("include_names")
        self.types = as_set("include_types")
        self.tags = as_set("include_tags")
        self.exclude_names = as_set("exclude_names")
        self.exclude_types = as_set("exclude_types")
        self.exclude_tags = as_set("exclude_tags")
        self.include = bool(self.names or self.types or self.tags)

    def keep(self, name: str, run_type: str, tags: Sequence[str]) -> bool:
        included = name in self.names or run_type in self.types or not self.tags.isdisjoint(tags)
        excluded = (
            name in self.exclude_names
            or run_type in self.exclude_types
            or not self.exclude_tags.isdisjoint(tags)
        )
        return (included or not self.include) and not excluded


@dataclass(slots=True, eq=False)
class _RunInfo:
    """A run the handler has seen start: what its events carry."""

    name: str
    run_type: str
    tags: list[str]
    metadata: dict[str, Any]
    parent_ids: list[str]
    inputs: Any
    tool_call_id: Any = field(default=None, init=False)


def _run_name(name: str | None, serialized: Any, default: str) -> str:
    """The name a run is reported under: the ``name`` given, else the one LangChain's
    ``serialized`` description carries (its ``name``, else the last part of its id)."""
    if name:
        return name
    if isinstance(serialized, dict):
        named = serialized.get("name")
        if isinstance(named, str) and named:
            return named
        ident = serialized.get("id")
        if isinstance(ident, (list, tuple)) and ident:
            return str(ident[-1])
    return default


def _chain_kind(run_type: Any) -> str:
    """The event prefix of a chain-like run: LangChain marks prompts and output parsers
    with their ``run_type``."""
    return run_type if run_type in ("prompt", "parser") else "chain"


class EventStreamHandler(BaseCallbackHandler):
    """Turns callbacks into ``astream_events`` dicts, delivered to ``sink``.

    ``sink(event)`` may be called from worker threads; the caller makes it safe.
    """

    def __init__(self, sink: Any, version: str, flt: _Filter) -> None:
        self.sink = sink
        self.version = version
        self.filter = flt
        self.runs: dict[UUID, _RunInfo] = {}
        self.root: UUID | None = None
        self.root_info: _RunInfo | None = None
        self._lock = threading.Lock()

    def _send(
        self,
        event: str,
        run_id: UUID,
        info: _RunInfo,
        data: dict[str, Any],
        name: str | None = None,
    ) -> None:
        shown = name if name is not None else info.name
        if not self.filter.keep(shown, info.run_type, info.tags):
            return
        self.sink(
            {
                "event": event,
                "data": data,
                "name": shown,
                "tags": list(info.tags),
                "run_id": str(run_id),
                "metadata": dict(info.metadata),
                "parent_ids": list(info.parent_ids),
            }
        )

    def _begin(
        self, run_id: UUID, name: str, run_type: str, inputs: Any, options: dict[str, Any]
    ) -> _RunInfo:
        """Record a run that starts; ``options`` are the keyword arguments of its
        ``on_*_start`` callback (``parent_run_id``, ``tags``, ``metadata``)."""
        parent_run_id = options.get("parent_run_id")
        with self._lock:
            parent = self.runs.get(parent_run_id) if parent_run_id is not None else None
            parent_ids = [*parent.parent_ids, str(parent_run_id)] if parent is not None else []
            meta = dict(options.get("metadata") or {})
            if self.root is None:
                self.root = run_id
                if self.version == "v1":
                    meta.pop("ls_integration", None)
            tags = list(options.get("tags") or ())
            info = _RunInfo(name, run_type, tags, meta, parent_ids, inputs)
            self.runs[run_id] = info
            if run_id == self.root:
                self.root_info = info
        return info

    # ----------------------------------------------------------------- chains
    def on_chain_start(self, serialized: Any, inputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        kind = _chain_kind(kwargs.get("run_type"))
        name = _run_name(kwargs.get("name"), serialized, "chain")
        info = self._begin(run_id, name, kind, inputs, kwargs)
        self._send(f"on_{kind}_start", run_id, info, {"input": inputs})

    def on_chain_stream(self, chunk: Any, *, run_id: UUID, **kwargs: Any) -> None:
        info = self.runs.get(run_id)
        if info is not None:
            self._send("on_chain_stream", run_id, info, {"chunk": chunk})

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        info = self.runs.pop(run_id, None)
        if info is None:
            return
        if run_id == self.root:
            # the root's end is sent after its last chunk (see _astream)
            self.root_output = outputs
            return
        kind = _chain_kind(info.run_type)
        self._send(f"on_{kind}_end", run_id, info, {"output": outputs, "input": info.inputs})

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        if run_id != self.root:
            self.runs.pop(run_id, None)

    def on_custom_event(
        self,
        name: str,
        data: Any,
        *,
        run_id: UUID,
        tags: Any = None,
        metadata: Any = None,
        **kwargs: Any,
    ) -> None:
        info = self.runs.get(run_id)
        parent_ids = [*info.parent_ids] if info is not None else []
        shown = _RunInfo(name, "custom", list(tags or ()), dict(metadata or {}), parent_ids, None)
        self._send("on_custom_event", run_id, shown, data, name=name)

    # ----------------------------------------------------------------- tools
    def on_tool_start(
        self, serialized: Any, input_str: str, *, run_id: UUID, **kwargs: Any
    ) -> None:
        inputs = kwargs.get("inputs")
        value = inputs if inputs is not None else input_str
        name = _run_name(kwargs.get("name"), serialized, "tool")
        info = self._begin(run_id, name, "tool", value, kwargs)
        info.tool_call_id = kwargs.get("tool_call_id")
        self._send("on_tool_start", run_id, info, {"input": value})

    def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> None:
        info = self.runs.pop(run_id, None)
        if info is not None:
            self._send("on_tool_end", run_id, info, {"output": output, "input": info.inputs})

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        info = self.runs.pop(run_id, None)
        if info is not None:
            # as LangChain's event stream: the failing call's id goes with the error
            call_id = kwargs.get("tool_call_id") or info.tool_call_id
            data = {"error": error, "input": info.inputs, "tool_call_id": call_id}
            self._send("on_tool_error", run_id, info, data)

    # ----------------------------------------------------------------- chat models
    def on_chat_model_start(
        self, serialized: Any, messages: Any, *, run_id: UUID, **kwargs: Any
    ) -> None:
        name = _run_name(kwargs.get("name"), serialized, "chat_model")
        info = self._begin(run_id, name, "chat_model", {"messages": messages}, kwargs)
        self._send("on_chat_model_start", run_id, info, {"input": {"messages": messages}})

    def on_llm_new_token(
        self, token: str, *, run_id: UUID, chunk: Any = None, **kwargs: Any
    ) -> None:
        info = self.runs.get(run_id)
        if info is None:
            return
        message = getattr(chunk, "message", chunk)
        self._send(
            "on_chat_model_stream",
            run_id,
            info,
            {"chunk": message if message is not None else token},
        )

    def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
        info = self.runs.pop(run_id, None)
        if info is None:
            return
        output = response
        generations = getattr(response, "generations", None)
        if generations:
            first = generations[0][0] if generations[0] else None
            output = getattr(first, "message", first)
        self._send("on_chat_model_end", run_id, info, {"output": output, "input": info.inputs})

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self.runs.pop(run_id, None)


def astream_events(
    graph: Any,
    input: Any,
    config: Any,
    version: str,
    transformers: Sequence[Any] | None,
    kwargs: dict[str, Any],
) -> AsyncIterator[dict[str, Any]]:
    """The ``v1``/``v2`` event iterator (arguments checked before anything runs)."""
    check_version(version)
    if transformers:
        raise TypeError("transformers=[...] applies to version='v3' only.")
    options = {name: kwargs.pop(name) for name in _FILTERS if name in kwargs}
    flt = _Filter(options)
    read_callbacks((config or {}).get("callbacks"))  # a bad value fails here, not later
    if version == "v1":
        warnings.warn(
            "astream_events version='v1' is deprecated; use version='v2' (same events, "
            "with parent_ids) or version='v3'.",
            DeprecationWarning,
            stacklevel=3,
        )
    return _astream(graph, input, dict(config or {}), version, flt, kwargs)


async def _astream(
    graph: Any,
    input: Any,
    config: dict[str, Any],
    version: str,
    flt: _Filter,
    kwargs: dict[str, Any],
) -> AsyncIterator[dict[str, Any]]:
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[Any] = asyncio.Queue()
    loop_thread = threading.get_ident()

    def sink(event: dict[str, Any]) -> None:
        if threading.get_ident() == loop_thread:
            queue.put_nowait(event)
        else:
            loop.call_soon_threadsafe(queue.put_nowait, event)

    handler = EventStreamHandler(sink, version, flt)
    existing = config.get("callbacks")
    if existing is None:
        config["callbacks"] = [handler]
    else:
        setup = read_callbacks(existing)
        if isinstance(existing, (list, tuple)) or not hasattr(existing, "add_handler"):
            config["callbacks"] = [*setup.handlers, handler]
        else:
            manager = existing.copy() if hasattr(existing, "copy") else existing
            manager.add_handler(handler, inherit=True)
            config["callbacks"] = manager
    done = object()
    last_chunk: list[Any] = []

    async def drive() -> None:
        try:
            async for chunk in graph.astream(input, config, **kwargs):
                last_chunk[:] = [chunk]
                info = handler.root_info
                if info is not None and handler.root is not None:
                    handler._send("on_chain_stream", handler.root, info, {"chunk": chunk})
            info = handler.root_info
            if info is not None and handler.root is not None:
                output = getattr(handler, "root_output", None)
                if version == "v1":
                    output = last_chunk[0] if last_chunk else output
                handler._send("on_chain_end", handler.root, info, {"output": output})
        finally:
            queue.put_nowait(done)

    task = asyncio.ensure_future(drive())
    try:
        while True:
            item = await queue.get()
            if item is done:
                break
            yield item
        await task
    finally:
        if not task.done():
            task.cancel()
            try:
                await task
            except BaseException:
                pass
