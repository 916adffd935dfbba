"""The functional API: ``@entrypoint`` workflows made of ``@task`` calls.

An ``@entrypoint`` turns a function into a runnable graph (a :class:`Pregel` with one
node). Inside it, functions decorated with ``@task`` return futures; their results are
saved with the entrypoint's task, so when the workflow is resumed after an
``interrupt()`` (or re-run after a failure) completed tasks are not executed again.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import typing
from collections.abc import Awaitable, Callable, Generator, Sequence
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, overload

from typing_extensions import ParamSpec

from stategraph._context import CURRENT_TASK, TaskContext
from stategraph._sync_await import resolve as resolve_report
from stategraph.channels.ephemeral_value import EphemeralValue
from stategraph.channels.last_value import LastValue
from stategraph.constants import (
    CALL_RESULT,
    END,
    PUSH,
    RETURN,
    START,
)
from stategraph.errors import sync_timeout_error
from stategraph.func._calls import _call_context, _CallReport, _emit_call_event
from stategraph.observe import aresolve
from stategraph.pregel._cache_io import CACHE_NS
from stategraph.pregel._call import is_async_callable
from stategraph.pregel._retry import retry_delay
from stategraph.pregel.main import Pregel
from stategraph.pregel.node import PregelNode
from stategraph.types import CachePolicy, RetryPolicy, TimeoutPolicy, coerce_timeout
from stategraph.warnings import (
    LangGraphDeprecatedSinceV05,
    LangGraphDeprecatedSinceV10,
    renamed_argument,
    warn_deprecated,
)

if TYPE_CHECKING:
    from stategraph.cache.base import BaseCache

__all__ = ["entrypoint", "task", "TaskFuture"]

R = TypeVar("R")
S = TypeVar("S")
P = ParamSpec("P")
T = TypeVar("T")

PREVIOUS = "__previous__"
"""Channel holding the value an entrypoint saved on its previous run of the thread."""

_INJECTABLE = ("config", "previous", "runtime", "writer", "store")


class TaskFuture(Generic[R]):
    """The pending result of a ``@task`` call: ``.result()`` in sync code, ``await`` in async."""

    __slots__ = ("_future", "_has_value", "_value")

    def __init__(self, future: Any = None, *, value: Any = None, has_value: bool = False) -> None:
        self._future = future
        self._value = value
        self._has_value = has_value

    def done(self) -> bool:
        """Whether the result is available."""
        return self._has_value or bool(self._future is not None and self._future.done())

    def cancel(self) -> bool:
        """Cancel the task if it can still be stopped; True when it was cancelled.

        An async task is cancelled at its next ``await``; a sync task only if it has
        not started yet (a running thread cannot be stopped). A cancelled task saves
        no result, so a resumed workflow that calls it again runs it again.
        """
        if self._has_value or self._future is None:
            return False
        return bool(self._future.cancel())

    def cancelled(self) -> bool:
        """Whether the task was cancelled."""
        return bool(self._future is not None and self._future.cancelled())

    def result(self, timeout: float | None = None) -> R:
        """Block until the task finished and return its result (or raise its error)."""
        if self._has_value:
            return self._value
        fut = self._future
        if hasattr(fut, "get_loop"):
            if not fut.done():
                raise RuntimeError(
                    "This task runs on the event loop: use `await future` instead of "
                    "`future.result()` inside an async entrypoint."
                )
            return fut.result()
        return fut.result(timeout)

    def __await__(self) -> Generator[Any, None, R]:
        if self._has_value:
            return self._value
        fut = self._future
        if not hasattr(fut, "get_loop"):
            import asyncio

            fut = asyncio.wrap_future(fut)
        return (yield from fut.__await__())


_POOL: Any = None

_MISS = object()
"""No cached result for a ``@task`` call's arguments."""


def _pool() -> Any:
    global _POOL
    if _POOL is None:
        from concurrent.futures import ThreadPoolExecutor

        _POOL = ThreadPoolExecutor(max_workers=32, thread_name_prefix="stategraph-task")
    return _POOL


class _TaskFunction(Generic[P, R]):
    """A function decorated with ``@task``; calling it schedules it and returns a future."""

    def __init__(
        self,
        func: Callable[..., Any],
        name: str,
        retry_policy: tuple[RetryPolicy, ...],
        cache_policy: CachePolicy[Any] | None = None,
        timeout: TimeoutPolicy | None = None,
    ) -> None:
        is_async = is_async_callable(func)
        if timeout is not None and not is_async:
            raise sync_timeout_error(f"Task '{name}'")  # checked before anything is set
        self.func = func
        self.name = name
        self.retry_policy = retry_policy
        self.cache_policy = cache_policy
        self.timeout = timeout
        self.is_async = is_async
        functools.update_wrapper(self, func)

    def __repr__(self) -> str:
        return f"<task {self.name}>"

    # ------------------------------------------------------------------ cache
    @property
    def cache_namespace(self) -> tuple[str, ...]:
        """Where this task's cached results live in a graph's cache."""
        return (CACHE_NS, "@task", self.name)

    def _cache_key(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        assert self.cache_policy is not None
        raw = self.cache_policy.key_func(*args, **kwargs)
        key = raw.hex() if isinstance(raw, bytes) else str(raw)
        return (self.cache_namespace, key)

    def clear_cache(self, cache: BaseCache[Any]) -> None:
        """Forget every result of this task stored in ``cache``."""
        cache.clear([self.cache_namespace])

    async def aclear_cache(self, cache: BaseCache[Any]) -> None:
        """Async twin of :meth:`clear_cache`."""
        await cache.aclear([self.cache_namespace])

    # ------------------------------------------------------------------ running
    def _cached_sync(self, args: tuple[Any, ...], kwargs: dict[str, Any], cache: Any) -> Any:
        """The result cached for these arguments, or ``_MISS``."""
        if cache is None or self.cache_policy is None:
            return _MISS
        full_key = self._cache_key(args, kwargs)
        return cache.get([full_key]).get(full_key, _MISS)

    async def _cached_async(self, args: tuple[Any, ...], kwargs: dict[str, Any], cache: Any) -> Any:
        """Async twin of :meth:`_cached_sync`."""
        if cache is None or self.cache_policy is None:
            return _MISS
        full_key = self._cache_key(args, kwargs)
        return (await cache.aget([full_key])).get(full_key, _MISS)

    def _run_sync(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], cache: Any, report: _CallReport
    ) -> Any:
        """Run the function with its retries, each attempt reported as a run of its own
        (as LangGraph reports them), and cache the result when the task has a policy
        (the cache was already looked up)."""
        import time

        failures = 0
        while True:
            leave = report.begin()
            try:
                value = self.func(*args, **kwargs)
            except Exception as exc:
                resolve_report(report.failed(exc))
                failures += 1
                delay = retry_delay(self.retry_policy, exc, failures, self.name)
                if delay is None:
                    raise
                time.sleep(delay)
                continue
            finally:
                if leave is not None:
                    leave()
            resolve_report(report.finished(value))
            break
        if cache is not None and self.cache_policy is not None:
            cache.set({self._cache_key(args, kwargs): (value, self.cache_policy.ttl)})
        return value

    async def _run_async(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], cache: Any, report: _CallReport
    ) -> Any:
        """Async twin of :meth:`_run_sync` (``timeout`` bounds each attempt)."""
        import asyncio

        from stategraph.pregel._async_shell import Beat, call_with_timeout

        failures = 0
        while True:
            await aresolve(report.started())
            leave = report.enter()
            try:
                if self.timeout is None:
                    value = await self.func(*args, **kwargs)
                else:
                    beat = Beat() if self.timeout.idle_timeout is not None else None
                    value = await call_with_timeout(
                        self.timeout, self.name, self.func(*args, **kwargs), beat
                    )
            except Exception as exc:
                await aresolve(report.failed(exc))
                failures += 1
                delay = retry_delay(self.retry_policy, exc, failures, self.name)
                if delay is None:
                    raise
                await asyncio.sleep(delay)
                continue
            finally:
                if leave is not None:
                    leave()
            await aresolve(report.finished(value))
            break
        if cache is not None and self.cache_policy is not None:
            await cache.aset({self._cache_key(args, kwargs): (value, self.cache_policy.ttl)})
        return value

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> TaskFuture[R]:
        ctx = CURRENT_TASK.get()
        if ctx is None or ctx.scratchpad is None:
            raise RuntimeError(
                f"Task '{self.name}' was called outside a running graph. Call @task functions "
                "from an @entrypoint function or a StateGraph node."
            )
        pad = ctx.scratchpad
        call_id = pad.next_call_id(ctx.task_id, self.name)
        run_ctx = ctx.run[0] if isinstance(ctx.run, tuple) else None
        events = run_ctx is not None and bool(run_ctx.modes & {"tasks", "debug"})
        if events:
            start = {"name": self.name, "input": (args, kwargs), "triggers": (PUSH,)}
            _emit_call_event(run_ctx, call_id, "task", start)
        if call_id in pad.calls:
            # finished in an earlier attempt of this task: do not run it again (as in
            # LangGraph, its start is reported, not a second result)
            return TaskFuture(value=pad.calls[call_id], has_value=True)
        cache = run_ctx.cache if run_ctx is not None and self.cache_policy is not None else None

        def record(value: Any, cached: bool = False) -> None:
            pad.calls[call_id] = value
            if run_ctx is not None and run_ctx.messages is not None and "messages" in run_ctx.modes:
                step = run_ctx.loop.step if run_ctx.loop is not None else 0
                run_ctx.messages.call_finished(run_ctx, ctx.run[1], step, call_id, self.name, value)
            ctx.send([(CALL_RESULT, (call_id, value))])
            if run_ctx is not None:
                if cached:
                    # as LangGraph reports a cache hit: marked, and without a result event
                    run_ctx.emit("updates", {self.name: value, "__metadata__": {"cached": True}})
                    return
                run_ctx.emit("updates", {self.name: value})
                if events:
                    _emit_call_event(
                        run_ctx,
                        call_id,
                        "task_result",
                        {
                            "name": self.name,
                            "error": None,
                            "result": {RETURN: value},
                            "interrupts": [],
                        },
                    )

        import contextvars

        call_ctx = _call_context(ctx, call_id, self.name)
        cvars = contextvars.copy_context()
        report = _CallReport(ctx, call_ctx, call_id, self.name, self.func, args, kwargs)
        if self.is_async:
            import asyncio

            async def run() -> Any:
                CURRENT_TASK.set(call_ctx)  # this asyncio task's own context
                hit = await self._cached_async(args, kwargs, cache)
                if hit is not _MISS:
                    record(hit, cached=True)
                    return hit
                value = await self._run_async(args, kwargs, cache, report)
                record(value)
                return value

            afut = asyncio.ensure_future(run(), loop=asyncio.get_running_loop())
            pad.inflight.append(afut)
            return TaskFuture(afut)

        def run_sync() -> Any:
            CURRENT_TASK.set(call_ctx)  # runs inside its own copy of the context
            hit = self._cached_sync(args, kwargs, cache)
            if hit is not _MISS:
                record(hit, cached=True)
                return hit
            value = self._run_sync(args, kwargs, cache, report)
            record(value)
            return value

        fut = _pool().submit(cvars.run, run_sync)
        pad.inflight.append(fut)
        return TaskFuture(fut)


class _TaskDecorator(Protocol):
    """What ``task(name=..., retry_policy=...)`` returns: a decorator keeping types."""

    @overload
    def __call__(self, func: Callable[P, Awaitable[T]]) -> _TaskFunction[P, T]: ...

    @overload
    def __call__(self, func: Callable[P, T]) -> _TaskFunction[P, T]: ...


@overload
def task(
    func: Callable[P, Awaitable[T]],
    *,
    name: str | None = None,
    retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None,
    cache_policy: CachePolicy[Any] | None = None,
    timeout: TimeoutPolicy | float | Any | None = None,
) -> _TaskFunction[P, T]: ...


@overload
def task(
    func: Callable[P, T],
    *,
    name: str | None = None,
    retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None,
    cache_policy: CachePolicy[Any] | None = None,
    timeout: TimeoutPolicy | float | Any | None = None,
) -> _TaskFunction[P, T]: ...


@overload
def task(
    func: None = None,
    *,
    name: str | None = None,
    retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None,
    cache_policy: CachePolicy[Any] | None = None,
    timeout: TimeoutPolicy | float | Any | None = None,
) -> _TaskDecorator: ...


def task(
    func: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None,
    cache_policy: CachePolicy[Any] | None = None,
    timeout: TimeoutPolicy | float | Any | None = None,
    **deprecated: Any,
) -> Any:
    """Decorate a function as a task of the functional API.

    Calling the task inside an ``@entrypoint`` (or a StateGraph node) starts it and
    returns a :class:`TaskFuture` of its result (``.result()`` in sync code, ``await``
    it in async code). Its result is saved with the calling task, so a resumed
    workflow gets the saved result instead of running the task again.
    ``cache_policy`` stores results in the graph's cache, keyed by the arguments (the
    cache outlives threads; ``clear_cache(cache)`` empties it). ``timeout`` (async
    tasks only) bounds each attempt; an idle limit counts from the start of the attempt.
    Use it bare (``@task``) or with options (``@task(name=..., retry_policy=...)``);
    either way type checkers keep the function's parameters and result type.
    """
    retry_policy = _deprecated_retry("task", retry_policy, deprecated)
    policies: tuple[RetryPolicy, ...]
    if retry_policy is None:
        policies = ()
    elif isinstance(retry_policy, RetryPolicy):
        policies = (retry_policy,)
    else:
        policies = tuple(retry_policy)

    def decorate(f: Callable[..., Any]) -> _TaskFunction[Any, Any]:
        tname = name or _callable_name(f)
        policy = coerce_timeout(timeout, f"Task '{tname}'")
        return _TaskFunction(f, tname, policies, cache_policy, policy)

    if func is not None:
        return decorate(func)
    return decorate


def _deprecated_retry(where: str, retry_policy: Any, deprecated: dict[str, Any]) -> Any:
    """Accept LangGraph's old ``retry=`` spelling with a deprecation warning."""
    if "retry" in deprecated:
        warn_deprecated(
            LangGraphDeprecatedSinceV05, renamed_argument("retry", "retry_policy"), stacklevel=4
        )
        given = deprecated.pop("retry")
        retry_policy = retry_policy if retry_policy is not None else given
    if deprecated:
        raise TypeError(f"{where}() got unexpected arguments: {', '.join(deprecated)}")
    return retry_policy


def _callable_name(func: Any) -> str:
    """A task's default name: the function's name (through ``functools.partial``)."""
    while isinstance(func, functools.partial):
        func = func.func
    name = getattr(func, "__name__", None)
    return name if isinstance(name, str) else type(func).__name__.lower()


class _EntrypointCall:
    """Calls the entrypoint function with its input and the arguments it asks for."""

    streams_calls = True
    """Its ``@task`` calls emit ``updates`` chunks while it runs."""

    def __init__(self, func: Callable[..., Any], name: str) -> None:
        self.func = func
        self.name = name
        self.is_async = is_async_callable(func)
        try:
            params = inspect.signature(func).parameters
        except (TypeError, ValueError):
            params = {}  # type: ignore[assignment]
        self.inject = tuple(n for n in params if n in _INJECTABLE)
        positional = [
            p
            for p in params.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.name not in _INJECTABLE
        ]
        if len(positional) != 1:
            raise ValueError(
                f"@entrypoint function '{name}' must take exactly one positional input "
                f"parameter (plus optional {', '.join(_INJECTABLE)} keywords); it takes "
                f"{len(positional)}."
            )

    def _kwargs(self, ctx: TaskContext) -> dict[str, Any]:
        previous = _previous(ctx) if self.inject else None
        kwargs: dict[str, Any] = {}
        for n in self.inject:
            if n == "previous":
                kwargs[n] = previous
            elif n == "config":
                kwargs[n] = ctx.config
            elif n == "runtime":
                kwargs[n] = ctx.runtime.override(previous=previous)
            elif n == "writer":
                kwargs[n] = ctx.stream_writer
            elif n == "store":
                kwargs[n] = ctx.runtime.store
        return kwargs

    def __call__(self, value: Any, ctx: TaskContext) -> Any:
        return self.func(value, **self._kwargs(ctx))


def _previous(ctx: TaskContext) -> Any:
    """What the entrypoint returned (or saved) on the thread's previous run.

    Read from the run's channels: they change only between steps, so this is the value
    of the step the entrypoint runs in.
    """
    run = ctx.run[0] if isinstance(ctx.run, tuple) else None
    loop = getattr(run, "loop", None)
    channel = loop.channels.get(PREVIOUS) if loop is not None else None
    if channel is None or not channel.is_available():
        return None
    return channel.get()


class _EntrypointWriter:
    def static_routes(self) -> list[Any]:
        """For drawings: the entrypoint's end is its return, drawn as a conditional
        (dotted) edge to ``END``, as LangGraph draws it."""
        from stategraph.drawing._structure import Route

        return [Route(None, conditional=True)]

    def __call__(self, task: Any, output: Any) -> None:
        if isinstance(output, entrypoint.final):
            task.writes.extend([(END, output.value), (PREVIOUS, output.save)])
        else:
            task.writes.extend([(END, output), (PREVIOUS, output)])


def _allow_types(holder: Any, *types: Any) -> None:
    """Let ``holder``'s serializer load the entrypoint's annotated input and output
    types (saved as the run's input and ``previous``), as a StateGraph's schemas are."""
    allow = getattr(getattr(holder, "serde", None), "allow", None)
    if allow is None:
        return
    from stategraph.checkpoint.serde.jsonplus import collect_schema_types

    allow(*collect_schema_types(*[t for t in types if t is not Any]))


def _io_types(func: Callable[..., Any]) -> tuple[Any, Any]:
    """The input and output types of an entrypoint function, from its annotations.

    The input is the first parameter's type; the output the return type (the value
    type of ``entrypoint.final[value, save]``). ``Any`` where not annotated.
    """
    try:
        hints = typing.get_type_hints(func)
        params = list(inspect.signature(func).parameters)
    except Exception:
        return Any, Any
    in_type = hints.get(params[0], Any) if params else Any
    out_type = hints.get("return", Any)
    if out_type is entrypoint.final:
        out_type = Any
    elif typing.get_origin(out_type) is entrypoint.final:
        out_type = typing.get_args(out_type)[0]
    return in_type, out_type


class entrypoint:
    """Decorator turning a function into a workflow graph.

    Example::

        @entrypoint(checkpointer=InMemorySaver())
        def workflow(topic: str, *, previous=None) -> dict:
            essay = write_essay(topic).result()
            approved = interrupt({"essay": essay})
            return {"essay": essay, "approved": approved}

    The function takes one input and may ask for ``previous`` (what it returned, or
    saved with ``entrypoint.final``, on the previous run of the thread), ``config``,
    ``runtime``, ``writer`` and ``store``. It returns the workflow's output.
    """

    @dataclasses.dataclass(kw_only=True)
    class final(Generic[R, S]):
        """Return ``entrypoint.final(value=..., save=...)`` to output ``value`` but keep
        ``save`` as ``previous`` for the next run of the thread.

        Usable as a return annotation: ``-> entrypoint.final[str, int]``.
        """

        value: R
        """What the run returns."""
        save: S
        """What the next run of the thread receives as ``previous``."""

    def __init__(
        self,
        checkpointer: Any = None,
        store: Any = None,
        cache: Any = None,
        context_schema: type[Any] | None = None,
        cache_policy: CachePolicy[Any] | None = None,
        retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None,
        timeout: TimeoutPolicy | float | Any | None = None,
        **deprecated: Any,
    ) -> None:
        if "config_schema" in deprecated:
            warn_deprecated(
                LangGraphDeprecatedSinceV10, renamed_argument("config_schema", "context_schema")
            )
            given = deprecated.pop("config_schema")
            context_schema = context_schema if context_schema is not None else given
        retry_policy = _deprecated_retry("entrypoint", retry_policy, deprecated)
        self.checkpointer = checkpointer
        self.store = store
        self.cache = cache
        self.context_schema = context_schema
        self.cache_policy = cache_policy
        self.retry_policy = retry_policy
        self.timeout = coerce_timeout(timeout, "@entrypoint")

    def __call__(self, func: Callable[..., Any]) -> Pregel[Any, Any, Any, Any]:
        """Build the workflow graph around ``func``."""
        name = getattr(func, "__name__", "entrypoint")
        if inspect.isgeneratorfunction(func) or inspect.isasyncgenfunction(func):
            raise NotImplementedError(
                f"@entrypoint function '{name}' is a generator; entrypoints must return "
                "their output. Collect the values in a list and return it (stream "
                "intermediate values with the `writer` argument)."
            )
        proc = _EntrypointCall(func, name)
        in_type, out_type = _io_types(func)
        if self.timeout is not None and not proc.is_async:
            raise sync_timeout_error(f"Entrypoint '{name}'")
        node = PregelNode(
            channels=START,
            triggers=[START],
            proc=proc,
            writers=[_EntrypointWriter()],
            retry_policy=self.retry_policy,
            cache_policy=self.cache_policy,
            timeout=self.timeout,
            name=name,
        )
        graph = Pregel(
            nodes={name: node},
            channels={
                START: EphemeralValue(in_type),
                END: LastValue(out_type),
                PREVIOUS: LastValue(Any),
            },
            input_channels=START,
            output_channels=END,
            stream_channels=END,
            stream_mode="updates",
            checkpointer=self.checkpointer,
            store=self.store,
            cache=self.cache,
            context_schema=self.context_schema,
        )
        _allow_types(self.checkpointer, in_type, out_type)
        _allow_types(self.cache, in_type, out_type)
        functools.update_wrapper(graph, func, updated=())  # type: ignore[arg-type]
        return graph
