"""The handlers of ``config["callbacks"]``, fed from a run's observations.

:class:`CallbackObserver` turns observations into LangChain's callback calls: one
*chain run* for the graph (named ``config["run_name"]`` or the graph's name), one per
node attempt (named after the node, tagged ``graph:step:N``), one per routing
function of a conditional edge and one per subgraph, with LangChain's ``run_id`` /
``parent_run_id`` nesting, tags and metadata (``langgraph_step``, ``langgraph_node``,
``langgraph_triggers``, ``langgraph_path``, ``langgraph_checkpoint_ns``, ...), the way
LangGraph reports the same graph. Tool calls, custom events and chat-model calls
nest under the node that made them. :class:`~stategraph.callbacks.GraphCallbackHandler`
handlers also receive ``on_interrupt`` / ``on_resume``.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any
from uuid import UUID

from stategraph._failures import report_failure
from stategraph.callbacks import (
    CallbackSetup,
    GraphInterruptEvent,
    GraphResumeEvent,
    handle_event,
    is_graph_handler,
    is_tracer,
    read_callbacks,
)
from stategraph.constants import NS_SEP, TAG_HIDDEN
from stategraph.errors import GraphInterrupt
from stategraph.observe._protocol import RunObserver
from stategraph.observe._run_metadata import call_run_metadata

if TYPE_CHECKING:
    from stategraph.observe._protocol import RunRecord as RunContext
    from stategraph.observe._protocol import TaskRecord as Task

__all__ = ["CallbackObserver", "ChainRun", "new_run_id"]


def new_run_id() -> UUID:
    """A new time-ordered run id."""
    from stategraph.checkpoint._ids import uuid6

    return uuid6()


class ChainRun:
    """One run as the handlers know it: ids, name, tags, metadata."""

    __slots__ = ("inheritable_tags", "metadata", "name", "parent_run_id", "run_id", "tags")

    def __init__(
        self,
        run_id: UUID,
        parent_run_id: UUID | None,
        name: str,
        tags: list[str],
        inheritable_tags: list[str],
        metadata: dict[str, Any],
    ) -> None:
        self.run_id = run_id
        self.parent_run_id = parent_run_id
        self.name = name
        self.tags = tags
        self.inheritable_tags = inheritable_tags
        self.metadata = metadata

    def child(self, name: str, local_tag: str | None) -> ChainRun:
        """A run nested in this one (it inherits tags and metadata)."""
        tags = [local_tag, *self.inheritable_tags] if local_tag else list(self.inheritable_tags)
        return ChainRun(
            new_run_id(), self.run_id, name, tags, list(self.inheritable_tags), self.metadata
        )


_CONFIGURABLE_IN_METADATA = ("thread_id",)


def _metadata_from_configurable(configurable: dict[str, Any], metadata: dict[str, Any]) -> None:
    # as LangGraph with langchain-core 1.x: of the configurable values only the thread
    # is visible in the metadata (user values such as user_id stay in the config)
    for key in _CONFIGURABLE_IN_METADATA:
        value = configurable.get(key)
        if value is not None and key not in metadata:
            metadata[key] = value


def _graph_name(run: RunContext) -> str:
    if not run.nested:
        name = run.config.get("run_name")
        if isinstance(name, str) and name:
            return name
    return str(getattr(run.graph, "name", None) or "LangGraph")


def _is_traced(task: Task) -> bool:
    node = task.node
    if not node.metadata.get("__hidden__") and TAG_HIDDEN not in node.tags:
        return True
    # a hidden node is traced only when it evaluates routing functions (START with a
    # conditional entry), as in LangGraph
    return any(getattr(w, "seq_step", None) for w in node.writers)


def _apply(process: Any, value: Any, what: str) -> Any:
    try:
        return process(value)
    except Exception as exc:  # fail-open: record the real value
        report_failure(process, exc, f"TracePolicy.{what}")
        return value


class CallbackObserver(RunObserver):
    """Calls the handlers of ``config["callbacks"]`` for every run it observes."""

    # handler errors are isolated per handler by handle_event (raise_error handlers
    # propagate on purpose), so nothing this observer raises is swallowed
    raise_error = True

    def __init__(self, setup: CallbackSetup) -> None:
        self.handlers = list(setup.handlers)
        self.graph_handlers = [h for h in self.handlers if is_graph_handler(h)]
        self.tracers = [h for h in self.handlers if is_tracer(h)]
        self.plain = [h for h in self.handlers if not is_tracer(h)]
        self.parent_run_id = setup.parent_run_id
        self.base_tags = setup.tags
        self.base_metadata = setup.metadata
        self._runs: dict[int, ChainRun] = {}
        self._tasks: dict[tuple[int, str], ChainRun] = {}
        self._children: dict[tuple[int, str, Any], ChainRun] = {}
        self._reserved: dict[tuple[int, str], ChainRun] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"CallbackObserver({self.handlers!r})"

    @classmethod
    def for_callbacks(
        cls, callbacks: Any, known: Sequence[CallbackObserver] = ()
    ) -> CallbackObserver | None:
        """An observer for the handlers of ``callbacks`` that ``known`` observers do
        not already call; ``None`` when there is none."""
        setup = read_callbacks(callbacks)
        present = {id(h) for observer in known for h in observer.handlers}
        fresh = [h for h in setup.handlers if id(h) not in present]
        if not fresh:
            return None
        setup.handlers = fresh
        return cls(setup)

    # ----------------------------------------------------------------- lookup
    def run_of(self, run: RunContext) -> ChainRun | None:
        """The chain run reported for graph run ``run``."""
        return self._runs.get(id(run))

    def task_run(self, run: RunContext, task: Task) -> ChainRun | None:
        """The chain run of ``task``'s current attempt (``None`` for untraced tasks)."""
        return self._tasks.get((id(run), task.id))

    def call_run(self, run: RunContext, task: Task, call_id: str) -> ChainRun | None:
        """The chain run of the running ``@task`` call ``call_id`` made by ``task``."""
        return self._children.get((id(run), task.id, call_id))

    def parent_for(self, run: RunContext, task: Task) -> ChainRun | None:
        """The run that work done inside ``task`` nests under: the task's run, or the
        graph's run for a task that is not traced itself."""
        return self._tasks.get((id(run), task.id)) or self._runs.get(id(run))

    def _emit(self, event: str, ignore: str | None, *args: Any, **kwargs: Any) -> Any:
        return handle_event(self.handlers, event, ignore, *args, **kwargs)

    def _start(self, span: ChainRun, inputs: Any, policy: Any = None) -> Any:
        kwargs = {
            "run_id": span.run_id,
            "parent_run_id": span.parent_run_id,
            "tags": span.tags,
            "metadata": span.metadata,
            "name": span.name,
        }
        process = getattr(policy, "process_inputs", None) if policy is not None else None
        if process is None or not self.tracers:
            return handle_event(
                self.handlers, "on_chain_start", "ignore_chain", None, inputs, **kwargs
            )
        first = handle_event(self.plain, "on_chain_start", "ignore_chain", None, inputs, **kwargs)
        recorded = _apply(process, inputs, "process_inputs")
        second = handle_event(
            self.tracers, "on_chain_start", "ignore_chain", None, recorded, **kwargs
        )
        return _both(first, second)

    def _end(self, span: ChainRun, output: Any, policy: Any = None) -> Any:
        kwargs = {"run_id": span.run_id, "parent_run_id": span.parent_run_id, "tags": span.tags}
        process = getattr(policy, "process_outputs", None) if policy is not None else None
        if process is None or not self.tracers:
            return handle_event(self.handlers, "on_chain_end", "ignore_chain", output, **kwargs)
        first = handle_event(self.plain, "on_chain_end", "ignore_chain", output, **kwargs)
        recorded = _apply(process, output, "process_outputs")
        second = handle_event(self.tracers, "on_chain_end", "ignore_chain", recorded, **kwargs)
        return _both(first, second)

    def _on_span(
        self, span: ChainRun, event: str, ignore: str | None, *args: Any, **kwargs: Any
    ) -> Any:
        """Call ``event`` on the handlers for ``span`` (its ids and tags, plus ``kwargs``)."""
        return handle_event(
            self.handlers,
            event,
            ignore,
            *args,
            run_id=span.run_id,
            parent_run_id=span.parent_run_id,
            tags=span.tags,
            **kwargs,
        )

    def _on_popped(self, key: Any, event: str, ignore: str | None, arg: Any, named: bool) -> Any:
        """End the child run under ``key`` (if it is still open) with ``event``; a
        ``named`` event also carries the run's name."""
        span = self._pop(self._children, key)
        if span is None:
            return None
        if named:
            return self._on_span(span, event, ignore, arg, name=span.name)
        return self._on_span(span, event, ignore, arg)

    def _error(self, span: ChainRun, error: BaseException) -> Any:
        return self._on_span(span, "on_chain_error", "ignore_chain", error)

    # ----------------------------------------------------------------- runs
    def run_started(self, run: RunContext) -> Any:
        parent = None
        parent_run, parent_task = run.parent_run, run.parent_task
        if parent_run is not None and parent_task is not None:
            call = run.parent_call
            parent = (
                (None if call is None else self.call_run(parent_run, parent_task, call))
                or self._tasks.get((id(parent_run), parent_task.id))
                or self._runs.get(id(parent_run))
            )
        config = run.config
        if parent is not None:
            inheritable = list(parent.inheritable_tags)
            metadata = dict(parent.metadata)
            parent_id: UUID | None = parent.run_id
        else:
            inheritable = [*self.base_tags, *(config.get("tags") or ())]
            metadata = {**self.base_metadata, **(config.get("metadata") or {})}
            parent_id = self.parent_run_id
        _metadata_from_configurable(run.configurable, metadata)
        if run.nested:
            metadata["checkpoint_ns"] = run.ns
        metadata["ls_integration"] = "langgraph"
        tags = list(inheritable)
        if parent_task is not None:
            # the subgraph is the node itself, or is run by the node's (or a @task
            # call's) function: either way LangGraph's first step of the node (call)
            tags.insert(0, "seq:step:1")
        run_id = config.get("run_id") if not run.nested else None
        span = ChainRun(
            UUID(str(run_id)) if run_id is not None else new_run_id(),
            parent_id,
            _graph_name(run),
            tags,
            inheritable,
            metadata,
        )
        self._runs[id(run)] = span
        return self._start(span, run.loop.input if run.loop is not None else None)

    def run_resumed(self, run: RunContext) -> Any:
        span = self._runs.get(id(run))
        if not self.graph_handlers or span is None:
            return None
        event = GraphResumeEvent(
            run_id=span.run_id,
            status="pending",
            checkpoint_id=str(run.loop.checkpoint_id or ""),
            checkpoint_ns=tuple(run.ns.split(NS_SEP)) if run.ns else (),
        )
        return handle_event(self.graph_handlers, "on_resume", None, event)

    def run_finished(self, run: RunContext, output: Any) -> Any:
        span = self._runs.pop(id(run), None)
        if span is None:
            return None
        return self._end(span, output)

    def run_interrupted(self, run: RunContext, interrupts: Sequence[Any], status: str) -> Any:
        span = self._runs.pop(id(run), None)
        if span is None:
            return None
        if run.nested:
            # the pause bubbles up through the node that runs this subgraph: report the
            # exception being raised (with its traceback, which tracers render)
            raised = sys.exc_info()[1]
            if not isinstance(raised, GraphInterrupt) or raised.args != (tuple(interrupts),):
                raised = GraphInterrupt(tuple(interrupts))
            return self._error(span, raised)
        told = None
        if self.graph_handlers:
            event = GraphInterruptEvent(
                run_id=span.run_id,
                status=status,  # type: ignore[arg-type]
                checkpoint_id=str(run.loop.checkpoint_id or ""),
                checkpoint_ns=(),
                interrupts=tuple(interrupts),
            )
            told = handle_event(self.graph_handlers, "on_interrupt", None, event)
        return _both(told, self._end(span, run.loop.output))

    def run_failed(self, run: RunContext, error: BaseException) -> Any:
        span = self._runs.pop(id(run), None)
        if span is None:
            return None
        return self._error(span, error)

    # ----------------------------------------------------------------- tasks
    def reserve_task_run(self, run: RunContext, task: Task) -> ChainRun | None:
        """The chain run ``task``'s attempt about to start will be reported as, made now
        so code entering the task (a model library's context) can nest under it;
        ``None`` for a task that is not traced. :meth:`task_started` reports it."""
        key = (id(run), task.id)
        with self._lock:
            span = self._reserved.get(key)
        if span is None:
            span = self._task_span(run, task)
            if span is not None:
                with self._lock:
                    self._reserved[key] = span
        return span

    def task_started(self, run: RunContext, task: Task, attempt: int) -> Any:
        key = (id(run), task.id)
        with self._lock:
            span = self._reserved.pop(key, None)
        if span is None:
            span = self._task_span(run, task)
            if span is None:
                return None
        with self._lock:
            self._tasks[key] = span
        return self._start(span, task.input, task.node.trace_policy)

    def _task_span(self, run: RunContext, task: Task) -> ChainRun | None:
        graph_run = self._runs.get(id(run))
        if graph_run is None or not _is_traced(task):
            return None
        node = task.node
        step = task.scratchpad.step if task.scratchpad is not None else run.loop.step
        metadata = dict(graph_run.metadata)
        for key, value in node.metadata.items():
            if not key.startswith("__"):
                metadata[key] = value
        metadata["langgraph_step"] = step
        metadata["langgraph_node"] = task.name
        metadata["langgraph_triggers"] = tuple(task.triggers)
        metadata["langgraph_path"] = task.path
        metadata["langgraph_checkpoint_ns"] = task.ns
        inheritable = [*graph_run.inheritable_tags, *node.tags]
        return ChainRun(
            new_run_id(),
            graph_run.run_id,
            task.name,
            [f"graph:step:{step}", *inheritable],
            inheritable,
            metadata,
        )

    def _pop(self, table: dict[Any, ChainRun], key: Any) -> ChainRun | None:
        with self._lock:
            return table.pop(key, None)

    def _finish(self, span: ChainRun | None, output: Any, policy: Any = None) -> Any:
        # a task or @task call: its output is streamed, then the run ends
        if span is None:
            return None
        streamed = self._on_span(span, "on_chain_stream", "ignore_chain", output)
        return _both(streamed, self._end(span, output, policy))

    def _fail(self, span: ChainRun | None, error: BaseException) -> Any:
        return None if span is None else self._error(span, error)

    def task_finished(self, run: RunContext, task: Task, output: Any) -> Any:
        span = self._pop(self._tasks, (id(run), task.id))
        if span is not None and run.driven_sync:
            # LangGraph streams a node's output (on_chain_stream) only when the node's
            # graph runs async (astream); a graph run with invoke/stream just ends it
            return self._end(span, output, task.node.trace_policy)
        return self._finish(span, output, task.node.trace_policy)

    def task_failed(self, run: RunContext, task: Task, error: BaseException, retrying: bool) -> Any:
        return self._fail(self._pop(self._tasks, (id(run), task.id)), error)

    # ----------------------------------------------------------------- inside nodes
    def custom_event(self, run: RunContext, task: Task, name: str, data: Any) -> Any:
        graph_run = self._runs.get(id(run))
        span = self.parent_for(run, task)
        if span is None or graph_run is None:
            return None
        return self._emit(
            "on_custom_event",
            "ignore_custom_event",
            name,
            data,
            run_id=span.run_id,
            tags=graph_run.tags,
            metadata=span.metadata,
        )

    def branch_started(self, run: RunContext, task: Task, key: Any, name: str, input: Any) -> Any:
        parent = self.parent_for(run, task)
        if parent is None:
            return None
        seq_step = getattr(key, "seq_step", None)
        span = parent.child(name, f"seq:step:{seq_step}" if seq_step else None)
        with self._lock:
            self._children[(id(run), task.id, id(key))] = span
        return self._start(span, input)

    def branch_finished(self, run: RunContext, task: Task, key: Any, output: Any) -> Any:
        span = self._pop(self._children, (id(run), task.id, id(key)))
        return None if span is None else self._end(span, output)

    def branch_failed(self, run: RunContext, task: Task, key: Any, error: BaseException) -> Any:
        return self._fail(self._pop(self._children, (id(run), task.id, id(key))), error)

    # ----------------------------------------------------------------- @task calls
    def call_started(self, run: RunContext, task: Task, call_id: str, name: str, input: Any) -> Any:
        parent = self.parent_for(run, task)
        if parent is None:
            return None
        metadata = call_run_metadata(parent.metadata, task, call_id, name)
        inheritable = list(parent.inheritable_tags)
        span = ChainRun(
            new_run_id(), parent.run_id, name, ["seq:step:1", *inheritable], inheritable, metadata
        )
        with self._lock:
            self._children[(id(run), task.id, call_id)] = span
        return self._start(span, input)

    def call_finished(self, run: RunContext, task: Task, call_id: str, output: Any) -> Any:
        return self._finish(self._pop(self._children, (id(run), task.id, call_id)), output)

    def call_failed(self, run: RunContext, task: Task, call_id: str, error: BaseException) -> Any:
        return self._fail(self._pop(self._children, (id(run), task.id, call_id)), error)

    # ----------------------------------------------------------------- tools
    def _tool_key(
        self, run: RunContext, task: Task, call: Mapping[str, Any]
    ) -> tuple[int, str, int]:
        return (id(run), task.id, hash(("tool", call.get("id"), call.get("name"))))

    def tool_started(self, run: RunContext, task: Task, call: Mapping[str, Any]) -> Any:
        if getattr(call, "by_library", False):
            return None  # LangChain's own tool run reaches the handlers, nested
        parent = self.parent_for(run, task)
        if parent is None:
            return None
        name = str(call.get("name") or "tool")
        # ToolNode is the node's first step, as LangGraph tags its tool runs
        span = parent.child(name, "seq:step:1")
        with self._lock:
            self._children[self._tool_key(run, task, call)] = span
        args = call.get("args")
        # a tool is a runnable under LangGraph: its run copies the task's configurable
        # checkpoint namespace into its metadata (unless a subgraph's is there already)
        metadata = dict(span.metadata)
        metadata.setdefault("checkpoint_ns", task.ns)
        return self._on_span(
            span,
            "on_tool_start",
            None,
            {"name": name},
            str(args),
            metadata=metadata,
            name=name,
            inputs=args,
            tool_call_id=call.get("id"),
        )

    def tool_finished(
        self, run: RunContext, task: Task, call: Mapping[str, Any], output: Any
    ) -> Any:
        key = self._tool_key(run, task, call)
        return self._on_popped(key, "on_tool_end", None, output, named=True)

    def tool_failed(
        self, run: RunContext, task: Task, call: Mapping[str, Any], error: BaseException
    ) -> Any:
        key = self._tool_key(run, task, call)
        return self._on_popped(key, "on_tool_error", None, error, named=True)

    # ----------------------------------------------------------------- chat models
    def _model_key(self, run: RunContext, task: Task, call: Any) -> tuple[int, str, int]:
        return (id(run), task.id, id(call))

    def model_started(self, run: RunContext, task: Task, call: Any) -> Any:
        if getattr(call, "bridged", False):
            # a LangChain model: its own run reaches these handlers, nested under the
            # node through the config the bridge publishes, so it is not reported twice
            return None
        parent = self.parent_for(run, task)
        if parent is None:
            return None
        span = ChainRun(
            new_run_id(),
            parent.run_id,
            call.name,
            list(call.tags),
            list(parent.inheritable_tags),
            dict(call.metadata),
        )
        with self._lock:
            self._children[self._model_key(run, task, call)] = span
        return self._on_span(
            span,
            "on_chat_model_start",
            "ignore_chat_model",
            {"name": call.name},
            [list(call.messages)],
            metadata=span.metadata,
            name=span.name,
        )

    def model_chunk(self, run: RunContext, task: Task, call: Any, chunk: Any) -> Any:
        span = self._children.get(self._model_key(run, task, call))
        if span is None:
            return None
        content = getattr(chunk, "content", "")
        token = content if isinstance(content, str) else ""
        return self._on_span(
            span, "on_llm_new_token", "ignore_llm", token, chunk=_generation(chunk, chunk=True)
        )

    def model_finished(self, run: RunContext, task: Task, call: Any, message: Any) -> Any:
        key = self._model_key(run, task, call)
        return self._on_popped(key, "on_llm_end", "ignore_llm", _llm_result(message), False)

    def model_failed(self, run: RunContext, task: Task, call: Any, error: BaseException) -> Any:
        key = self._model_key(run, task, call)
        return self._on_popped(key, "on_llm_error", "ignore_llm", error, False)


class _Generation:
    """A generation holding ``message`` (LangChain's shape, for handlers that read it)."""

    __slots__ = ("generation_info", "message", "text")

    def __init__(self, message: Any) -> None:
        self.message = message
        content = getattr(message, "content", "")
        self.text = content if isinstance(content, str) else ""
        self.generation_info = None


class _LLMResult:
    """A model call's result in LangChain's shape (``generations``, ``llm_output``)."""

    __slots__ = ("generations", "llm_output", "run")

    def __init__(self, message: Any) -> None:
        self.generations = [[_Generation(message)]]
        self.llm_output = None
        self.run = None


def _generation(message: Any, *, chunk: bool) -> Any:
    return _Generation(message)


def _llm_result(message: Any) -> Any:
    return _LLMResult(message)


def _both(first: Any, second: Any) -> Any:
    if first is None:
        return second
    if second is None:
        return first

    async def both() -> None:
        await first
        await second

    return both()
