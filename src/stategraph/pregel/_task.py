"""The runtime's task object and its scratchpad (interrupt/resume bookkeeping)."""

from __future__ import annotations

import itertools
import threading
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from stategraph._notes import add_note
from stategraph.constants import RESUME, RESUME_ASKED
from stategraph.errors import INVALID_RESUME_NOTE, ErrorCode, GraphInterrupt, create_error_message
from stategraph.types import (
    CacheKey,
    CachePolicy,
    Interrupt,
    RetryPolicy,
    TimeoutPolicy,
    TracePolicy,
)

if TYPE_CHECKING:
    from stategraph._context import TaskContext

__all__ = [
    "PadSeed",
    "Task",
    "TaskNode",
    "Scratchpad",
    "ResumeState",
    "InterruptMismatchError",
    "interrupt_id",
]

_MISSING = object()


class InterruptMismatchError(RuntimeError):
    """A resumed node asked a different question than the one its answer was given for."""


def interrupt_id(ns: str, index: int) -> str:
    """Deterministic id of the ``index``-th interrupt of the task with namespace ``ns``."""
    from xxhash import xxh3_128_hexdigest

    key = ns if index == 0 else f"{ns}|{index}"
    return xxh3_128_hexdigest(key.encode())


class ResumeState:
    """Resume values given to one run, shared by the graph and all its subgraphs.

    A bare ``Command(resume=v)`` is consumed by the first interrupt that asks for a
    value; ``Command(resume={id: v})`` answers the interrupts with those ids.
    """

    __slots__ = ("_lock", "by_id", "null")

    def __init__(self, null: Any = _MISSING, by_id: dict[str, Any] | None = None) -> None:
        self._lock = threading.Lock()
        self.null = null
        self.by_id = dict(by_id or {})

    def take(self, iid: str, task_iid: str | None = None) -> tuple[bool, Any]:
        """Consume the resume value for interrupt ``iid``; ``(False, None)`` if there is none.

        ``task_iid`` is the id of the task's first interrupt: a map keyed by it answers
        the task's later questions too, in order (one answer per question).
        """
        with self._lock:
            if iid in self.by_id:
                return True, self.by_id.pop(iid)
            if task_iid is not None and task_iid in self.by_id:
                return True, self.by_id.pop(task_iid)
            if self.null is not _MISSING:
                value, self.null = self.null, _MISSING
                return True, value
        return False, None


class Scratchpad:
    """Per-task interrupt bookkeeping: answers so far and the call counter.

    ``resume`` holds the answers this task already received (saved with its writes);
    ``asked`` the interrupt values those answers were given for, so a node that asks
    its questions in a different order on re-execution is detected.
    """

    __slots__ = (
        "_call_counter",
        "_counter",
        "asked",
        "call_resume",
        "calls",
        "inflight",
        "node",
        "pending_value",
        "resume",
        "resume_state",
        "step",
        "stop",
        "strict",
    )

    def __init__(
        self,
        step: int,
        stop: int,
        resume: list[Any],
        asked: list[Any],
        pending_value: Any,
        resume_state: ResumeState | None,
        strict: bool,
        node: str,
        calls: dict[str, Any] | None = None,
        call_resume: dict[str, list[Any]] | None = None,
        inflight: list[Any] | None = None,
    ) -> None:
        self.calls = calls if calls is not None else {}
        # futures of the @task calls started by this task (and the calls it made): the
        # task waits for them before it ends, so every result is saved with its writes
        self.inflight: list[Any] = inflight if inflight is not None else []
        # answers to interrupts raised inside this task's @task calls, per call id
        self.call_resume = call_resume if call_resume is not None else {}
        self._call_counter = itertools.count()
        self.step = step
        self.stop = stop
        self.resume = resume
        self.asked = asked
        self.pending_value = pending_value
        self._counter = itertools.count()
        self.resume_state = resume_state
        self.strict = strict
        self.node = node

    def paused_before(self) -> bool:
        """Whether this task paused on an interrupt before (this run resumes it)."""
        return self.pending_value is not _MISSING or bool(self.resume)

    def for_call(self, call_id: str, name: str) -> Scratchpad:
        """The scratchpad of one ``@task`` call made by this task: its own interrupt
        counter and answers (kept in :attr:`call_resume` under ``call_id``)."""
        return Scratchpad(
            step=self.step,
            stop=self.stop,
            resume=self.call_resume.setdefault(call_id, []),
            asked=[],
            pending_value=_MISSING,
            resume_state=self.resume_state,
            strict=False,
            node=name,
            calls=self.calls,
            call_resume=self.call_resume,
            inflight=self.inflight,
        )

    def next_call_id(self, task_id: str, name: str) -> str:
        """Deterministic id of the next ``@task`` call made by this task."""
        return f"{task_id}:{next(self._call_counter)}:{name}"

    def _check(self, index: int, expected: Any, actual: Any) -> None:
        if expected is _MISSING or expected == actual:
            return
        message = (
            f"Node '{self.node}' reached interrupt #{index} with value {actual!r}, but the "
            f"resume value it is receiving was given for the value {expected!r}. The node "
            "calls interrupt() in a different order than when it was first run, so an answer "
            "may reach the wrong question. Make the sequence of interrupt() calls in a node "
            "deterministic, or split the questions into separate nodes."
        )
        if self.strict:
            raise InterruptMismatchError(
                create_error_message(message=message, error_code=ErrorCode.INTERRUPT_MISMATCH)
            )
        warnings.warn(message, RuntimeWarning, stacklevel=4)

    def interrupt(self, ctx: TaskContext, value: Any, response_schema: Any) -> Any:
        """Implementation of :func:`stategraph.types.interrupt` for this task."""
        idx = next(self._counter)
        adapter = None
        schema_json = None
        if response_schema is not None:
            if isinstance(response_schema, dict):
                schema_json = response_schema
            else:
                from pydantic import TypeAdapter

                adapter = TypeAdapter(response_schema)
                schema_json = adapter.json_schema()
        if idx < len(self.resume):
            self._check(idx, self.asked[idx] if idx < len(self.asked) else _MISSING, value)
            answer = self.resume[idx]
            return adapter.validate_python(answer) if adapter is not None else answer
        iid = interrupt_id(ctx.checkpoint_ns, idx)
        if self.resume_state is not None:
            task_iid = interrupt_id(ctx.checkpoint_ns, 0) if idx else None
            found, answer = self.resume_state.take(iid, task_iid)
            if found:
                try:
                    validated = adapter.validate_python(answer) if adapter is not None else answer
                except Exception as exc:
                    # put the value back: nothing is consumed or saved by an invalid answer
                    if self.resume_state.null is _MISSING:
                        self.resume_state.null = answer
                    add_note(exc, INVALID_RESUME_NOTE)
                    raise
                self._check(idx, self.pending_value, value)
                self.pending_value = _MISSING
                self.resume.append(answer)
                self.asked.append(value)
                ctx.send([(RESUME, list(self.resume)), (RESUME_ASKED, list(self.asked))])
                return validated
        raise GraphInterrupt((Interrupt(value=value, id=iid, response_schema=schema_json),))


PadSeed = tuple[int, int, "ResumeState | None", bool]
"""What a task's scratchpad is built from when first used: ``(step, stop,
resume_state, strict)``, one tuple shared by the tasks of a step."""

_LOCAL_READ: Callable[..., Any] | None = None
"""``pregel._algo.local_read``, imported at first use (``import stategraph.pregel``
does not load the scheduling core)."""


def _load_local_read() -> Callable[..., Any]:
    global _LOCAL_READ
    from stategraph.pregel._algo import local_read

    _LOCAL_READ = local_read
    return local_read


_PAD_LOCK = threading.Lock()
"""Guards building a task's scratchpad on first use, so every thread gets the same one."""

_SEND_LOCK = threading.Lock()
"""Guards :meth:`Task.send` (one lock for all tasks: the appends are short, and a
task needs no lock of its own to allocate)."""


class TaskNode(Protocol):
    """What a task and those who watch it read of the node it runs: a
    :class:`~stategraph.pregel.node.PregelNode` (which imports this module, so it is
    not imported here)."""

    name: str
    proc: Any
    """A ``NodeCall``, or a compiled graph (a subgraph)."""
    writers: list[Callable[[Task, Any], None]]
    """Turn the node's output into writes (``pregel.node.Writer``)."""
    subgraphs: list[Any]
    metadata: dict[str, Any]
    tags: list[str]
    cache_policy: CachePolicy | None
    trace_policy: TracePolicy | None
    error_handler: str | None


class Task:
    """One unit of work of a super-step: a node run with a given input.

    ``writes`` collects ``(channel, value)`` pairs; they are applied to the channels
    only after every task of the step has finished.
    """

    __slots__ = (
        "_scratchpad",
        "cache_key",
        "cached",
        "channels",
        "config",
        "done",
        "error",
        "handled",
        "id",
        "input",
        "interrupted",
        "interrupts",
        "is_push",
        "name",
        "node",
        "node_error",
        "ns",
        "pad_seed",
        "path",
        "previews",
        "resume_unfinished",
        "resuming",
        "retry_policy",
        "timeout",
        "triggers",
        "writes",
    )

    def __init__(
        self,
        id: str,
        name: str,
        path: tuple[Any, ...],
        node: TaskNode,
        input: Any,
        triggers: Sequence[str],
        ns: str,
        scratchpad: Scratchpad | None,
        retry_policy: Sequence[RetryPolicy],
        is_push: bool = False,
        timeout: TimeoutPolicy | None = None,
        pad_seed: PadSeed | None = None,
        channels: Mapping[str, Any] | None = None,
    ) -> None:
        self.id = id
        self.name = name
        self.path = path
        self.node = node
        self.input = input
        self.triggers = triggers
        self.writes: list[tuple[str, Any]] = []
        self.ns = ns
        self._scratchpad = scratchpad
        # what builds the scratchpad on first use when none is given (see scratchpad)
        self.pad_seed = pad_seed
        # the step's channels, which read() sees with this task's own writes applied
        self.channels = channels
        self.retry_policy = retry_policy
        self.cache_key: CacheKey | None = None
        self.timeout = timeout
        self.is_push = is_push
        self.error: BaseException | None = None
        self.interrupts: tuple[Interrupt, ...] = ()
        # stopped by an interrupt; True with no interrupt values when a subgraph it ran
        # stopped at a breakpoint
        self.interrupted = False
        self.done = False
        self.cached = False
        self.config: dict[str, Any] | None = None
        # reducer results its conditional edges computed over its writes (local_read)
        self.previews: dict[str, Any] | None = None
        self.resuming = False
        # a subgraph run by this task continues its own saved run if that run has
        # tasks left (the parent resumes the step this task belongs to)
        self.resume_unfinished = False
        # error handlers: the failure handled (NodeError); on a failed task: whether an
        # error-handler task took over (the failure then does not fail the step)
        self.node_error: Any = None
        self.handled = False

    @property
    def scratchpad(self) -> Scratchpad | None:
        """The task's interrupt bookkeeping, built on first use from :attr:`pad_seed`
        (most tasks never interrupt nor call a ``@task``: they never build one).
        ``None`` for a task prepared only to be shown (not executed)."""
        pad = self._scratchpad
        if pad is None and self.pad_seed is not None:
            with _PAD_LOCK:  # (an observer's thread may ask while the task's builds it)
                pad = self._scratchpad
                if pad is None:
                    step, stop, resume_state, strict = self.pad_seed
                    pad = self._scratchpad = Scratchpad(
                        step, stop, [], [], _MISSING, resume_state, strict, self.name
                    )
        return pad

    @scratchpad.setter
    def scratchpad(self, pad: Scratchpad | None) -> None:
        self._scratchpad = pad

    @property
    def built_scratchpad(self) -> Scratchpad | None:
        """The scratchpad if it was built (``None`` when nothing used it yet: then it
        holds no answers, ``@task`` results nor calls in flight)."""
        return self._scratchpad

    def read(self, select: str | Sequence[str]) -> Any:
        """Read ``select`` as this task's conditional edges see it: the step's channels
        with the task's own writes applied (``{}`` for a task without channels)."""
        channels = self.channels
        if channels is None:
            return {}
        read = _LOCAL_READ
        if read is None:
            read = _load_local_read()
        return read(channels, select, self.writes, self)

    def send(self, writes: list[tuple[str, Any]]) -> None:
        """Append writes from inside the running node (used by ``interrupt()``)."""
        with _SEND_LOCK:
            self.writes.extend(writes)

    def __repr__(self) -> str:
        return f"Task({self.name!r}, id={self.id!r}, path={self.path!r})"
