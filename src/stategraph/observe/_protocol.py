"""The record protocol between the runtime and its observers.

The runtime reports what happens in a run as calls on :class:`RunObserver`. Each call
carries small typed records: the run (:class:`RunRecord`), the task
(:class:`TaskRecord`) and its node (:class:`NodeRecord`). They are protocols: the
runtime's own run context and task objects satisfy them, so reporting costs no copy,
while an observer reads only the fields named here and never imports the loop or its
task internals. Adding a kind of observer means subclassing :class:`RunObserver`
inside this room; nothing in ``stategraph.pregel`` changes.

This module imports nothing from the rest of the library: it sits below the runtime,
which depends on it (the loop emits these records), and below every observer.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

if TYPE_CHECKING:
    from stategraph.observe._fanout import Observers

__all__ = [
    "RunObserver",
    "RunRecord",
    "TaskRecord",
    "NodeRecord",
    "LoopRecord",
    "StepRecord",
    "RunAndTask",
    "ToolCallRecord",
]


class NodeRecord(Protocol):
    """What observers read of the node a task runs."""

    @property
    def tags(self) -> Sequence[str]:
        """The node's tags (``langsmith:hidden`` hides it from traces)."""

    @property
    def metadata(self) -> Mapping[str, Any]:
        """The node's metadata (keys starting ``__`` are the runtime's own)."""

    @property
    def writers(self) -> Sequence[Any]:
        """The node's writers (routing writers carry a ``seq_step``)."""

    @property
    def trace_policy(self) -> Any:
        """What the node lets traces record of its inputs and outputs (or ``None``)."""

    @property
    def subgraphs(self) -> Sequence[Any]:
        """The graphs the node runs (empty for a plain function)."""

    @property
    def proc(self) -> Any:
        """The node's runnable (a subgraph when the node is the graph itself)."""


class StepRecord(Protocol):
    """The step a task was prepared in."""

    @property
    def step(self) -> int:
        """The super-step number."""


class TaskRecord(Protocol):
    """One task as observers see it."""

    @property
    def id(self) -> str:
        """The task id (stable across attempts and resumes)."""

    @property
    def name(self) -> str:
        """The node name."""

    @property
    def path(self) -> tuple[Any, ...]:
        """LangGraph's ``langgraph_path`` of the task."""

    @property
    def input(self) -> Any:
        """The node's input."""

    @property
    def triggers(self) -> Sequence[str]:
        """The channels (or push marker) that triggered the task."""

    @property
    def ns(self) -> str:
        """The task's checkpoint namespace (``node:task_id`` levels)."""

    @property
    def node(self) -> NodeRecord:
        """The node the task runs."""

    @property
    def scratchpad(self) -> StepRecord | None:
        """The task's step (``None`` before the task is prepared to run)."""

    @property
    def writes(self) -> Sequence[tuple[str, Any]]:
        """The writes the task produced so far, in order."""

    @property
    def interrupts(self) -> Sequence[Any]:
        """The ``Interrupt`` s the task raised."""

    @property
    def error(self) -> Any:
        """The error the task ended with (``None`` if it did not fail)."""


class LoopRecord(Protocol):
    """What observers read of the loop driving a run."""

    @property
    def checkpoint_id(self) -> Any:
        """The id of the checkpoint the run is at."""

    @property
    def step(self) -> int:
        """The current super-step."""

    @property
    def input(self) -> Any:
        """The run's input."""

    @property
    def output(self) -> Any:
        """The run's output so far."""


class RunRecord(Protocol):
    """One graph run as observers see it (a subgraph run is a nested run)."""

    @property
    def graph(self) -> Any:
        """The compiled graph (observers read its ``name``)."""

    @property
    def config(self) -> dict[str, Any]:
        """The run's config."""

    @property
    def configurable(self) -> dict[str, Any]:
        """``config["configurable"]``."""

    @property
    def metadata(self) -> dict[str, Any]:
        """The run's metadata (from its config)."""

    @property
    def tags(self) -> list[str]:
        """The run's tags (from its config)."""

    @property
    def thread_id(self) -> Any:
        """The thread (``None`` without one)."""

    @property
    def run_id(self) -> Any:
        """The run's id."""

    @property
    def ns(self) -> str:
        """The graph's checkpoint namespace (``""`` at the root)."""

    @property
    def stream_ns(self) -> tuple[str, ...]:
        """The namespace tuple stream chunks carry."""

    @property
    def parent_ids(self) -> dict[str, Any]:
        """The checkpoints the enclosing graphs run from, by namespace."""

    @property
    def nested(self) -> bool:
        """Whether this run is a subgraph of another run."""

    @property
    def parent_run(self) -> RunRecord | None:
        """The run this one is nested in."""

    @property
    def parent_task(self) -> TaskRecord | None:
        """The task of :attr:`parent_run` this run executes in."""

    @property
    def parent_call(self) -> str | None:
        """The id of the ``@task`` call of :attr:`parent_task` this run executes in
        (``None`` when the task's own code runs it)."""

    @property
    def driven_sync(self) -> bool:
        """Whether the run is driven by ``invoke``/``stream`` (not their async twins)."""

    @property
    def loop(self) -> LoopRecord:
        """The loop driving the run."""

    @property
    def modes(self) -> Any:
        """The stream modes the caller asked for."""

    @property
    def checkpointer(self) -> Any:
        """The run's saver (``None`` without one)."""

    @property
    def observers(self) -> Observers | None:
        """The run's observers (``None`` when nobody listens)."""

    @property
    def model_handlers(self) -> Sequence[Any]:
        """The model-call hook's handlers of this run."""

    def emit(self, mode: str, payload: Any) -> None:
        """Send a stream chunk of ``mode``."""


class RunAndTask(NamedTuple):
    """Where node code runs: its run and its task (what
    :func:`~stategraph.observe.current_run_and_task` returns to observers and hooks).

    A named pair: read ``.run`` and ``.task``, or unpack ``run, task = pair``.
    """

    run: RunRecord
    """The run the task belongs to."""
    task: TaskRecord
    """The task whose code is running."""


@dataclass(frozen=True)
class ToolCallRecord(Mapping[str, Any]):
    """A tool call as observers receive it: the call (``{"name", "args", "id"}``, read
    as a mapping) and whether the tool library reports the call itself.

    ``by_library`` is true for a LangChain tool run with the node's config: its own
    callbacks already reach the run's LangChain-style handlers, nested under the node,
    so those handlers do not report it again (the ``tools`` stream and tracing do).
    """

    __slots__ = ("by_library", "call")

    call: Mapping[str, Any]
    by_library: bool

    def __getitem__(self, key: str) -> Any:
        return self.call[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.call)

    def __len__(self) -> int:
        return len(self.call)


class RunObserver:
    """Receives the observations of runs; override only the methods you need.

    ``run`` is the run's :class:`RunRecord` (read its
    ``graph``, ``config``, ``thread_id``, ``ns``, ``nested``, ``loop``...); ``task`` a
    :class:`TaskRecord` (``id``, ``name``, ``path``, ``input``,
    ``triggers``, ``ns``, ``node``). Nested runs (subgraphs) report to the observers of
    the run that started them, so one observer sees the whole tree; a nested run's
    ``run.parent_task`` is the task it runs in.
    """

    raise_error: bool = False
    """When True, an exception raised by this observer propagates into the run."""

    # ----------------------------------------------------------------- runs
    def run_started(self, run: RunRecord) -> Any:
        """The run begins (before its checkpoint is loaded)."""

    def run_resumed(self, run: RunRecord) -> Any:
        """The run continues a saved checkpoint (input ``None`` or a ``Command``);
        ``run.loop.checkpoint_id`` is the checkpoint it continues from."""

    def run_finished(self, run: RunRecord, output: Any) -> Any:
        """The run ended normally; ``output`` is its output value."""

    def run_interrupted(self, run: RunRecord, interrupts: Sequence[Any], status: str) -> Any:
        """The run paused: ``interrupts`` from ``interrupt()`` calls (empty at a static
        breakpoint); ``status`` is ``"pending"``, ``"interrupt_before"`` or
        ``"interrupt_after"``. A nested run reports this and then bubbles up."""

    def run_failed(self, run: RunRecord, error: BaseException) -> Any:
        """The run ended with an exception (also when the caller stopped consuming it)."""

    # ----------------------------------------------------------------- steps
    def step_started(self, run: RunRecord, step: int, tasks: Sequence[TaskRecord]) -> Any:
        """Super-step ``step`` starts running ``tasks``."""

    def step_finished(self, run: RunRecord, step: int) -> Any:
        """Every task of super-step ``step`` has finished (its writes are not yet applied)."""

    # ----------------------------------------------------------------- tasks
    def task_started(self, run: RunRecord, task: TaskRecord, attempt: int) -> Any:
        """Attempt number ``attempt`` (from 1) of ``task`` starts, in the task's context."""

    def task_finished(self, run: RunRecord, task: TaskRecord, output: Any) -> Any:
        """The attempt returned ``output`` and its writes were recorded."""

    def task_failed(
        self, run: RunRecord, task: TaskRecord, error: BaseException, retrying: bool
    ) -> Any:
        """The attempt raised ``error`` (``GraphInterrupt`` for an ``interrupt()``);
        ``retrying`` tells whether the retry policy runs the task again."""

    # ----------------------------------------------------------------- persistence
    def checkpoint_saved(
        self, run: RunRecord, config: dict[str, Any], checkpoint: Any, metadata: Any
    ) -> Any:
        """A checkpoint was handed to the saver (with durability ``"async"`` the write
        completes in the background); ``config`` names its parent."""

    # ----------------------------------------------------------------- inside nodes
    def custom_event(self, run: RunRecord, task: TaskRecord, name: str, data: Any) -> Any:
        """Node code called ``dispatch_custom_event(name, data)``."""

    def branch_started(
        self, run: RunRecord, task: TaskRecord, key: Any, name: str, input: Any
    ) -> Any:
        """A routing function of a conditional edge starts (after the task's node ran)."""

    def branch_finished(self, run: RunRecord, task: TaskRecord, key: Any, output: Any) -> Any:
        """The routing function returned ``output``."""

    def branch_failed(
        self, run: RunRecord, task: TaskRecord, key: Any, error: BaseException
    ) -> Any:
        """The routing function raised ``error``."""

    def call_started(
        self, run: RunRecord, task: TaskRecord, call_id: str, name: str, input: Any
    ) -> Any:
        """``task`` called the ``@task`` function ``name`` (``input``: its arguments by
        parameter name); ``call_id`` identifies the call in the later reports."""

    def call_finished(self, run: RunRecord, task: TaskRecord, call_id: str, output: Any) -> Any:
        """The ``@task`` call returned ``output``."""

    def call_failed(
        self, run: RunRecord, task: TaskRecord, call_id: str, error: BaseException
    ) -> Any:
        """The ``@task`` call raised ``error``."""

    def tool_started(self, run: RunRecord, task: TaskRecord, call: Mapping[str, Any]) -> Any:
        """A tool call (``{"name", "args", "id"}``) starts inside ``task`` (``ToolNode``)."""

    def tool_output_delta(
        self, run: RunRecord, task: TaskRecord, call: Mapping[str, Any], delta: Any
    ) -> Any:
        """A running tool streamed a piece of its output."""

    def tool_finished(
        self, run: RunRecord, task: TaskRecord, call: Mapping[str, Any], output: Any
    ) -> Any:
        """The tool call returned ``output`` (the message or command it produced)."""

    def tool_failed(
        self, run: RunRecord, task: TaskRecord, call: Mapping[str, Any], error: BaseException
    ) -> Any:
        """The tool call raised ``error`` (control-flow exceptions are not reported)."""

    def model_started(self, run: RunRecord, task: TaskRecord, call: Any) -> Any:
        """A chat model is called inside ``task`` (``call`` is the hook's
        :class:`~stategraph.observe.ModelCall`: name, messages, tags, metadata)."""

    def model_chunk(self, run: RunRecord, task: TaskRecord, call: Any, chunk: Any) -> Any:
        """The model streamed ``chunk`` (observers overriding this make models stream)."""

    def model_finished(self, run: RunRecord, task: TaskRecord, call: Any, message: Any) -> Any:
        """The call returned ``message``."""

    def model_failed(
        self, run: RunRecord, task: TaskRecord, call: Any, error: BaseException
    ) -> Any:
        """The call raised ``error``."""
