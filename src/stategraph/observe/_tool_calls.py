"""Reports of tool calls made inside a node (``ToolNode``).

Each report goes to the ``tools`` stream mode (when the caller streams it) and to the
run's observers (callback handlers get ``on_tool_start`` / ``on_tool_end`` /
``on_tool_error``, tracing gets a span). Outside a running graph they do nothing.
``by_library=True`` marks a call whose tool library reports it to those handlers
itself (a LangChain tool run with the node's config).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from stategraph._sync_await import resolve
from stategraph.observe._fanout import current_run_and_task
from stategraph.observe._protocol import ToolCallRecord

if TYPE_CHECKING:
    from stategraph.observe._fanout import Observers
    from stategraph.observe._protocol import RunRecord, TaskRecord

__all__ = ["tool_started", "tool_finished", "tool_failed", "tool_output_delta"]


def _record(call: Mapping[str, Any], by_library: bool) -> Mapping[str, Any]:
    return ToolCallRecord(call, True) if by_library else call


def _report(
    event: dict[str, Any], notify: Callable[[Observers, RunRecord, TaskRecord], Any]
) -> None:
    """Send ``event`` to the ``tools`` stream mode and ``notify`` the run's observers
    (nothing outside a running graph)."""
    current = current_run_and_task()
    if current is None:
        return
    run, task = current
    if "tools" in run.modes:
        run.emit("tools", event)
    if run.observers is not None:
        resolve(notify(run.observers, run, task))


def tool_started(call: Mapping[str, Any], *, by_library: bool = False) -> None:
    """The tool call ``{"name", "args", "id"}`` starts."""
    event = {
        "event": "tool-started",
        "tool_call_id": call.get("id"),
        "tool_name": call.get("name"),
        "input": call.get("args"),
    }
    _report(event, lambda obs, run, task: obs.tool_started(run, task, _record(call, by_library)))


def tool_output_delta(call: Mapping[str, Any], delta: Any) -> None:
    """The running tool streamed ``delta``."""
    event = {"event": "tool-output-delta", "tool_call_id": call.get("id"), "delta": delta}
    _report(event, lambda obs, run, task: obs.tool_output_delta(run, task, call, delta))


def tool_finished(call: Mapping[str, Any], output: Any, *, by_library: bool = False) -> None:
    """The tool call produced ``output`` (its message or command)."""
    event = {"event": "tool-finished", "tool_call_id": call.get("id"), "output": output}
    _report(
        event,
        lambda obs, run, task: obs.tool_finished(run, task, _record(call, by_library), output),
    )


def tool_failed(call: Mapping[str, Any], error: BaseException, *, by_library: bool = False) -> None:
    """The tool raised ``error`` (interrupts and other control flow are not failures)."""
    event = {"event": "tool-error", "tool_call_id": call.get("id"), "message": str(error)}
    _report(
        event, lambda obs, run, task: obs.tool_failed(run, task, _record(call, by_library), error)
    )
