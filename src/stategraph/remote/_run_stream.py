"""Run streams of ``RemoteGraph.stream_events(..., version="v3")`` over an SDK thread stream.

LangGraph's SDK (``langgraph_sdk``) opens a thread stream with
``client.threads.stream(thread_id=..., assistant_id=..., headers=...)``: an object that
starts a run (``run.start(input=, config=, metadata=)``) and exposes the run's
projections (``values``, ``messages``, ``tool_calls``, ``subgraphs``), its raw
``events``, ``subscribe(channels)``, ``output``, ``interrupted`` and ``interrupts``.
:class:`RemoteGraphRunStream` and :class:`AsyncRemoteGraphRunStream` give it the shape of
a local v3 run stream: enter to start the run, iterate for events, ``abort()`` to cancel
it. The underscore names are the ones LangGraph's tests import.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from typing import Any

from stategraph.remote._config import merge_configs
from stategraph.types import Command

__all__ = [
    "V3_SUPPORTED_KWARGS",
    "open_v3",
    "reject_unsupported",
    "RemoteGraphRunStream",
    "AsyncRemoteGraphRunStream",
    "ProjectionRegistry",
    "ChannelProjection",
    "translate_command_input",
]


V3_SUPPORTED_KWARGS = frozenset({"metadata", "headers"})
"""Keyword arguments a v3 remote run stream takes besides input and config."""


def translate_command_input(input: Any) -> Any:
    """The wire ``input`` of a v3 run: a resume ``Command`` becomes its raw resume value
    (the server wraps it as ``{"resume": input}``); ``goto``/``update`` cannot be sent."""
    if not isinstance(input, Command):
        return input
    if input.goto:
        raise NotImplementedError(
            "RemoteGraph v3 run streams cannot send Command(goto=...): the v3 protocol "
            "only resumes interrupts; use stream()/invoke() for goto."
        )
    if input.update is not None:
        raise NotImplementedError(
            "RemoteGraph v3 run streams cannot send Command(update=...): use "
            "update_state() first, or stream()/invoke()."
        )
    return input.resume


class ChannelProjection:
    """One protocol channel of a run (``updates``, ``checkpoints``, ...): iterating it
    subscribes to the channel and yields each event's ``params.data``."""

    def __init__(self, sdk_thread: Any, channel: str) -> None:
        self._sdk = sdk_thread
        self._channel = channel

    def _pick(self, event: Any) -> tuple[bool, Any]:
        """``(True, data)`` for an event of this channel that carries data."""
        if not isinstance(event, Mapping) or event.get("method") != self._channel:
            return False, None
        params = event.get("params")
        if not isinstance(params, Mapping) or "data" not in params:
            return False, None
        return True, params["data"]

    def __iter__(self) -> Iterator[Any]:
        for event in self._sdk.subscribe([self._channel]):
            has, data = self._pick(event)
            if has:
                yield data

    async def __aiter__(self) -> AsyncIterator[Any]:
        async for event in self._sdk.subscribe([self._channel]):
            has, data = self._pick(event)
            if has:
                yield data


class ProjectionRegistry(Mapping[str, Any]):
    """A run's projections by name: the SDK's typed ones, decoded protocol channels, and
    custom extension channels (looked up in the SDK's ``extensions``)."""

    _NATIVE = ("values", "messages", "tool_calls", "subgraphs")
    _DECODED = ("updates", "checkpoints", "tasks", "custom")

    def __init__(self, sdk_thread: Any) -> None:
        self._sdk = sdk_thread

    def __getitem__(self, name: str) -> Any:
        if name in self._NATIVE:
            return getattr(self._sdk, name)
        if name in self._DECODED:
            return ChannelProjection(self._sdk, name)
        extensions = getattr(self._sdk, "extensions", None) or {}
        if name in extensions:
            return extensions[name]
        raise KeyError(
            f"No projection '{name}': use one of {', '.join(self._NATIVE + self._DECODED)} "
            "or a custom extension channel the server sends."
        )

    def __iter__(self) -> Iterator[str]:
        return iter(self._NATIVE + self._DECODED)

    def __len__(self) -> int:
        return len(self._NATIVE) + len(self._DECODED)


class _FromSdk:
    """A read-only attribute of a run stream, read from its SDK thread stream."""

    def __init__(self, doc: str) -> None:
        self.__doc__ = doc
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        return self if obj is None else getattr(obj._sdk, self.name)


class _Base:
    def __init__(
        self, client: Any, sdk_thread: Any, input: Any, config: Any, metadata: Any
    ) -> None:
        self._client = client
        self._sdk = sdk_thread
        self._start_kwargs = {
            "input": translate_command_input(input),
            "config": config,
            "metadata": metadata,
        }
        self._run_id: str | None = None
        self._aborted = False
        self._events: Any = None

    @staticmethod
    def _run_id_of(started: Any) -> str | None:
        if isinstance(started, Mapping):
            return started.get("run_id")
        return getattr(started, "run_id", None)

    values = _FromSdk("The run's state values, as the SDK projects them.")
    messages = _FromSdk("The run's messages, as the SDK projects them.")
    tool_calls = _FromSdk("The run's tool calls, as the SDK projects them.")
    subgraphs = _FromSdk("The run's subgraph runs, as the SDK projects them.")

    @property
    def extensions(self) -> ProjectionRegistry:
        """Every projection by name (typed, decoded channels, custom extensions)."""
        return ProjectionRegistry(self._sdk)


class RemoteGraphRunStream(_Base):
    """A remote v3 run: ``with graph.stream_events(..., version="v3") as run: ...``."""

    def __init__(
        self, *, sync_client: Any, sdk_thread: Any, input: Any, config: Any, metadata: Any
    ) -> None:
        super().__init__(sync_client, sdk_thread, input, config, metadata)

    def __enter__(self) -> RemoteGraphRunStream:
        self._sdk.__enter__()
        try:
            started = self._sdk.run.start(**self._start_kwargs)
        except BaseException as exc:
            self._sdk.__exit__(type(exc), exc, exc.__traceback__)
            raise
        self._run_id = self._run_id_of(started)
        return self

    def __exit__(self, *exc_info: Any) -> Any:
        return self._sdk.__exit__(*exc_info)

    def __iter__(self) -> Iterator[Any]:
        if self._events is None:
            self._events = iter(self._sdk.events)
        events: Iterator[Any] = self._events
        return events

    @property
    def output(self) -> Any:
        """The run's final values."""
        return self._sdk.output

    @property
    def interrupted(self) -> bool:
        """Whether the run paused on an interrupt."""
        return bool(self._sdk.interrupted)

    @property
    def interrupts(self) -> Any:
        """The interrupts the run paused on."""
        return self._sdk.interrupts

    def interleave(self, *names: str) -> Iterator[tuple[str, Any]]:
        """``(projection name, item)`` pairs of several projections, in arrival order."""
        return iter(self._sdk.interleave_projections(list(names)))

    def abort(self) -> None:
        """Cancel the run (once; a failing cancel is ignored) and close the stream."""
        if self._aborted:
            return
        self._aborted = True
        if self._run_id is not None:
            try:
                self._client.runs.cancel(self._sdk.thread_id, self._run_id, wait=False)
            except Exception:  # the run may have ended already: closing is what matters
                pass
        self._sdk.close()


async def _resolved(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


class AsyncRemoteGraphRunStream(_Base):
    """Async twin of :class:`RemoteGraphRunStream` (``async with``; no ``interleave``)."""

    def __init__(
        self, *, client: Any, sdk_thread: Any, input: Any, config: Any, metadata: Any
    ) -> None:
        super().__init__(client, sdk_thread, input, config, metadata)

    async def __aenter__(self) -> AsyncRemoteGraphRunStream:
        await self._sdk.__aenter__()
        try:
            started = await self._sdk.run.start(**self._start_kwargs)
        except BaseException as exc:
            await self._sdk.__aexit__(type(exc), exc, exc.__traceback__)
            raise
        self._run_id = self._run_id_of(started)
        return self

    async def __aexit__(self, *exc_info: Any) -> Any:
        return await self._sdk.__aexit__(*exc_info)

    def __aiter__(self) -> AsyncIterator[Any]:
        if self._events is None:
            self._events = self._sdk.events.__aiter__()
        events: AsyncIterator[Any] = self._events
        return events

    async def output(self) -> Any:
        """The run's final values."""
        return await _resolved(self._sdk.output)

    async def interrupted(self) -> bool:
        """Whether the run paused on an interrupt."""
        return bool(await _resolved(self._sdk.interrupted))

    async def interrupts(self) -> Any:
        """The interrupts the run paused on."""
        return await _resolved(self._sdk.interrupts)

    async def abort(self) -> None:
        """Cancel the run (once; a failing cancel is ignored) and close the stream."""
        if self._aborted:
            return
        self._aborted = True
        if self._run_id is not None:
            try:
                await self._client.runs.cancel(self._sdk.thread_id, self._run_id, wait=False)
            except Exception:  # the run may have ended already: closing is what matters
                pass
        await self._sdk.close()


def reject_unsupported(
    *,
    control: Any,
    transformers: Any,
    interrupt_before: Any,
    interrupt_after: Any,
    extra_kwargs: Mapping[str, Any],
) -> None:
    """Refuse the arguments a remote v3 run stream cannot honour, before any request."""
    for name, value in (
        ("control", control),
        ("transformers", transformers),
        ("interrupt_before", interrupt_before),
        ("interrupt_after", interrupt_after),
    ):
        if value:
            raise NotImplementedError(
                f"RemoteGraph.stream_events(version='v3') cannot take `{name}=`: the "
                "remote protocol has no such option; use stream() for it."
            )
    unknown = sorted(set(extra_kwargs) - V3_SUPPORTED_KWARGS)
    if unknown:
        raise NotImplementedError(
            f"RemoteGraph.stream_events(version='v3') cannot take {', '.join(unknown)}: "
            f"only {', '.join(sorted(V3_SUPPORTED_KWARGS))} go with a v3 run."
        )


def open_v3(
    graph: Any,
    get_client: Callable[[], Any],
    is_async: bool,
    input: Any,
    config: Mapping[str, Any] | None,
    version: str,
    kwargs: dict[str, Any],
) -> Any:
    """The v3 run stream of ``graph.stream_events`` (or ``astream_events``: ``is_async``)
    over the SDK thread stream of the client ``get_client()`` returns; every argument
    is checked before any request."""
    what = "astream_events" if is_async else "stream_events"
    if version != "v3":
        plain = "astream()" if is_async else "stream()"
        raise NotImplementedError(
            f"RemoteGraph.{what}(version={version!r}) is not implemented: use "
            f"version='v3', or {plain}."
        )
    kwargs = dict(kwargs)
    graph._reject_v3_unsupported(
        control=kwargs.pop("control", None),
        transformers=kwargs.pop("transformers", None),
        interrupt_before=kwargs.pop("interrupt_before", None),
        interrupt_after=kwargs.pop("interrupt_after", None),
        extra_kwargs=kwargs,
    )
    translate_command_input(input)  # refuses goto/update before any request
    merged = merge_configs(graph.config, config)
    conf = dict(merged.get("configurable") or {})
    thread_id = conf.pop("thread_id", None)
    merged["configurable"] = conf
    client = get_client()
    opener = getattr(getattr(client, "threads", None), "stream", None)
    if opener is None:
        arg, factory = ("client", "get_client") if is_async else ("sync_client", "get_sync_client")
        raise ValueError(
            f"{what}(version='v3') needs LangGraph's SDK client: pass "
            f"{arg}=langgraph_sdk.{factory}(url=...)."
        )
    sdk_thread = opener(
        thread_id=thread_id,
        assistant_id=graph.assistant_id,
        headers=graph._tracing_headers(kwargs.get("headers")),
    )
    run_args = {
        "sdk_thread": sdk_thread,
        "input": input,
        "config": graph._sanitize_config(merged),
        "metadata": kwargs.get("metadata"),
    }
    if is_async:
        return AsyncRemoteGraphRunStream(client=client, **run_args)
    return RemoteGraphRunStream(sync_client=client, **run_args)


# the names LangGraph's own code and tests use
_RemoteGraphRunStream = RemoteGraphRunStream
_AsyncRemoteGraphRunStream = AsyncRemoteGraphRunStream
_ProjectionRegistry = ProjectionRegistry
_ChannelProjection = ChannelProjection
_translate_command_input = translate_command_input
