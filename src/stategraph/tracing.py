"""OpenTelemetry tracing of graph runs (optional extra ``otel``: ``opentelemetry-api``).

Call :func:`instrument` once; every run started afterwards produces spans:

* ``graph <name>`` for each run (subgraphs nest under the task that runs them),
* ``step <n>`` for each super-step, under its run,
* ``<node>`` for each task attempt, under its step, and *current* while the node
  runs, so spans the node's own code creates (HTTP clients, databases...) nest under
  it, in sync and async nodes and across threads,
* ``chat <model>`` for each chat-model call and ``tool <name>`` for each ``ToolNode``
  tool call, under their task.

Attributes follow the ``langgraph.*`` names below (graph name, node, step,
``thread_id``, ``checkpoint_id``, checkpoint namespace, task id, attempt,
interrupts); a failed task or run gets status ERROR and the exception recorded.
With ``record_payloads=True`` a task span also records its input and output (as
text, processed by the node's ``TracePolicy``). Configure the SDK and exporter as
usual (see ``docs/tracing.md``); without :func:`instrument`, nothing is traced and
runs pay nothing for it.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from stategraph.constants import TAG_HIDDEN
from stategraph.observe import RunObserver, register_observer, unregister_observer

if TYPE_CHECKING:
    from stategraph.observe import RunRecord as RunContext
    from stategraph.observe import TaskRecord as Task

__all__ = ["GraphTracer", "instrument", "uninstrument", "is_instrumented"]

_SCOPE = "stategraph"
_MAX_PAYLOAD = 4096

_current: GraphTracer | None = None
_lock = threading.Lock()


def _import_otel() -> Any:
    try:
        from opentelemetry import context, trace
    except ImportError:
        raise ImportError(
            "stategraph.tracing needs the OpenTelemetry API: pip install 'stategraph[otel]' "
            "(and an SDK/exporter such as opentelemetry-sdk to export spans)."
        ) from None
    return context, trace


def _text(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _MAX_PAYLOAD else text[: _MAX_PAYLOAD - 3] + "..."


def _hidden(node: Any) -> bool:
    """Whether a node is left out of traces (``__start__`` and nodes tagged hidden)."""
    return bool(node.metadata.get("__hidden__")) or TAG_HIDDEN in node.tags


class GraphTracer(RunObserver):
    """The observer that turns runs into OpenTelemetry spans (see the module docs)."""

    def __init__(self, tracer_provider: Any = None, *, record_payloads: bool = False) -> None:
        context, trace = _import_otel()
        self._context = context
        self._trace = trace
        self.tracer = trace.get_tracer(_SCOPE, tracer_provider=tracer_provider)
        self.record_payloads = record_payloads
        self._runs: dict[int, Any] = {}
        self._steps: dict[int, Any] = {}
        self._tasks: dict[tuple[int, str], tuple[Any, Any]] = {}
        self._children: dict[tuple[int, str, int], Any] = {}
        self._lock = threading.Lock()

    # ----------------------------------------------------------------- helpers
    def _under(self, parent: Any) -> Any:
        return self._trace.set_span_in_context(parent)

    def _fail(self, span: Any, error: BaseException) -> None:
        from opentelemetry.trace import Status, StatusCode

        span.record_exception(error)
        span.set_status(Status(StatusCode.ERROR, f"{type(error).__name__}: {error}"))

    def _task_parent(self, run: RunContext, task: Task) -> Any:
        entry = self._tasks.get((id(run), task.id))
        if entry is not None:
            return entry[0]
        return self._steps.get(id(run)) or self._runs.get(id(run))

    # ----------------------------------------------------------------- runs
    def run_started(self, run: RunContext) -> None:
        name = run.config.get("run_name") if not run.nested else None
        graph_name = str(getattr(run.graph, "name", None) or "LangGraph")
        attributes: dict[str, Any] = {
            "langgraph.graph.name": graph_name,
            "langgraph.checkpoint_ns": run.ns,
            "langgraph.nested": run.nested,
        }
        if run.thread_id is not None:
            attributes["langgraph.thread_id"] = str(run.thread_id)
        if run.run_id is not None:
            attributes["langgraph.run_id"] = str(run.run_id)
        span = self.tracer.start_span(f"graph {name or graph_name}", attributes=attributes)
        self._runs[id(run)] = span

    def run_resumed(self, run: RunContext) -> None:
        span = self._runs.get(id(run))
        if span is not None:
            span.set_attribute("langgraph.resumed", True)
            span.set_attribute("langgraph.resumed_from", str(run.loop.checkpoint_id or ""))

    def run_finished(self, run: RunContext, output: Any) -> None:
        span = self._runs.pop(id(run), None)
        if span is not None:
            self._end_run(run, span)

    def _end_run(self, run: RunContext, span: Any) -> None:
        checkpoint_id = run.loop.checkpoint_id if run.loop is not None else None
        if checkpoint_id and run.checkpointer is not None:
            span.set_attribute("langgraph.checkpoint_id", str(checkpoint_id))
        span.end()

    def run_interrupted(self, run: RunContext, interrupts: Any, status: str) -> None:
        span = self._runs.pop(id(run), None)
        if span is None:
            return
        span.set_attribute("langgraph.interrupted", True)
        span.set_attribute("langgraph.interrupt.status", status)
        span.set_attribute("langgraph.interrupt.count", len(interrupts))
        if interrupts:
            span.set_attribute("langgraph.interrupt.ids", [str(i.id) for i in interrupts])
        self._end_run(run, span)

    def run_failed(self, run: RunContext, error: BaseException) -> None:
        span = self._runs.pop(id(run), None)
        if span is None:
            return
        self._fail(span, error)
        self._end_run(run, span)

    # ----------------------------------------------------------------- steps
    def step_started(self, run: RunContext, step: int, tasks: Any) -> None:
        parent = self._runs.get(id(run))
        if parent is None:
            return
        visible = sum(1 for task in tasks if not _hidden(task.node))
        if not visible:
            # only hidden tasks (the input step's __start__): nothing to show in it
            return
        span = self.tracer.start_span(
            f"step {step}",
            context=self._under(parent),
            attributes={"langgraph.step": step, "langgraph.step.tasks": visible},
        )
        with self._lock:
            self._steps[id(run)] = span

    def step_finished(self, run: RunContext, step: int) -> None:
        with self._lock:
            span = self._steps.pop(id(run), None)
        if span is not None:
            span.end()

    # ----------------------------------------------------------------- tasks
    def task_started(self, run: RunContext, task: Task, attempt: int) -> None:
        node = task.node
        if _hidden(node):
            return
        parent = self._steps.get(id(run)) or self._runs.get(id(run))
        if parent is None:
            return
        step = task.scratchpad.step if task.scratchpad is not None else run.loop.step
        attributes: dict[str, Any] = {
            "langgraph.graph.name": str(getattr(run.graph, "name", None) or "LangGraph"),
            "langgraph.node": task.name,
            "langgraph.step": step,
            "langgraph.task.id": task.id,
            "langgraph.task.attempt": attempt,
            "langgraph.checkpoint_ns": task.ns,
        }
        if run.thread_id is not None:
            attributes["langgraph.thread_id"] = str(run.thread_id)
        checkpoint_id = run.loop.checkpoint_id if run.loop is not None else ""
        if checkpoint_id and run.checkpointer is not None:
            attributes["langgraph.checkpoint_id"] = str(checkpoint_id)
        if self.record_payloads:
            attributes["langgraph.task.input"] = _text(self._policy(node, "inputs", task.input))
        span = self.tracer.start_span(task.name, context=self._under(parent), attributes=attributes)
        token = self._context.attach(self._under(span))
        with self._lock:
            self._tasks[(id(run), task.id)] = (span, token)

    def _policy(self, node: Any, what: str, value: Any) -> Any:
        policy = getattr(node, "trace_policy", None)
        process = getattr(policy, f"process_{what}", None) if policy is not None else None
        if process is None:
            return value
        try:
            return process(value)
        except Exception:
            return value

    def _end_task(self, run: RunContext, task: Task) -> Any:
        with self._lock:
            entry = self._tasks.pop((id(run), task.id), None)
        if entry is None:
            return None
        span, token = entry
        try:
            self._context.detach(token)
        except Exception:  # detached in another context: the span still ends
            pass
        return span

    def task_finished(self, run: RunContext, task: Task, output: Any) -> None:
        span = self._end_task(run, task)
        if span is None:
            return
        if self.record_payloads:
            span.set_attribute(
                "langgraph.task.output", _text(self._policy(task.node, "outputs", output))
            )
        span.end()

    def task_failed(
        self, run: RunContext, task: Task, error: BaseException, retrying: bool
    ) -> None:
        span = self._end_task(run, task)
        if span is None:
            return
        from stategraph.errors import GraphInterrupt

        if isinstance(error, GraphInterrupt):
            span.set_attribute("langgraph.interrupted", True)
            span.set_attribute("langgraph.interrupt.count", len(error.interrupts))
        else:
            self._fail(span, error)
            span.set_attribute("langgraph.task.retrying", retrying)
        span.end()

    def checkpoint_saved(
        self, run: RunContext, config: dict[str, Any], checkpoint: Any, metadata: Any
    ) -> None:
        span = self._runs.get(id(run))
        if span is None:
            return
        span.set_attribute("langgraph.checkpoint_id", str(checkpoint["id"]))
        span.add_event(
            "checkpoint",
            {
                "langgraph.checkpoint_id": str(checkpoint["id"]),
                "langgraph.checkpoint.source": str(metadata.get("source", "")),
                "langgraph.step": int(metadata.get("step", 0)),
            },
        )

    def custom_event(self, run: RunContext, task: Task, name: str, data: Any) -> None:
        span = self._task_parent(run, task)
        if span is not None:
            span.add_event(name, {"langgraph.custom_event": True})

    # ----------------------------------------------------------------- calls inside tasks
    def _start_child(
        self, run: RunContext, task: Task, key: int, name: str, attributes: dict[str, Any]
    ) -> None:
        parent = self._task_parent(run, task)
        if parent is None:
            return
        span = self.tracer.start_span(name, context=self._under(parent), attributes=attributes)
        with self._lock:
            self._children[(id(run), task.id, key)] = span

    def _pop_child(self, run: RunContext, task: Task, key: int) -> Any:
        with self._lock:
            return self._children.pop((id(run), task.id, key), None)

    @staticmethod
    def _tool_key(call: Mapping[str, Any]) -> int:
        return hash(("tool", call.get("id"), call.get("name")))

    def tool_started(self, run: RunContext, task: Task, call: Mapping[str, Any]) -> None:
        attributes = {"langgraph.tool.name": str(call.get("name")), "langgraph.node": task.name}
        if call.get("id") is not None:
            attributes["langgraph.tool.call_id"] = str(call.get("id"))
        self._start_child(run, task, self._tool_key(call), f"tool {call.get('name')}", attributes)

    def tool_finished(
        self, run: RunContext, task: Task, call: Mapping[str, Any], output: Any
    ) -> None:
        span = self._pop_child(run, task, self._tool_key(call))
        if span is not None:
            span.end()

    def tool_failed(
        self, run: RunContext, task: Task, call: Mapping[str, Any], error: BaseException
    ) -> None:
        span = self._pop_child(run, task, self._tool_key(call))
        if span is not None:
            self._fail(span, error)
            span.end()

    def model_started(self, run: RunContext, task: Task, call: Any) -> None:
        attributes = {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": str(call.name),
            "langgraph.node": task.name,
        }
        self._start_child(run, task, id(call), f"chat {call.name}", attributes)

    def model_finished(self, run: RunContext, task: Task, call: Any, message: Any) -> None:
        span = self._pop_child(run, task, id(call))
        if span is None:
            return
        usage = getattr(message, "usage_metadata", None)
        if isinstance(usage, Mapping):
            for key, attr in (
                ("input_tokens", "gen_ai.usage.input_tokens"),
                ("output_tokens", "gen_ai.usage.output_tokens"),
            ):
                if isinstance(usage.get(key), int):
                    span.set_attribute(attr, usage[key])
        span.end()

    def model_failed(self, run: RunContext, task: Task, call: Any, error: BaseException) -> None:
        span = self._pop_child(run, task, id(call))
        if span is not None:
            self._fail(span, error)
            span.end()


def instrument(tracer_provider: Any = None, *, record_payloads: bool = False) -> GraphTracer:
    """Trace every graph run started from now on (replacing a previous instrumentation).

    ``tracer_provider`` defaults to the globally configured one. Returns the observer.
    """
    global _current
    tracer = GraphTracer(tracer_provider, record_payloads=record_payloads)
    with _lock:
        if _current is not None:
            unregister_observer(_current)
        _current = tracer
        register_observer(tracer)
    return tracer


def uninstrument() -> None:
    """Stop tracing new runs (runs already started finish their spans)."""
    global _current
    with _lock:
        if _current is not None:
            unregister_observer(_current)
            _current = None


def is_instrumented() -> bool:
    """Whether :func:`instrument` is in effect."""
    return _current is not None
