"""The path a run took: which nodes ran in which super-step, and assertions on it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["RunPath", "trace_path", "atrace_path", "assert_path"]


@dataclass
class RunPath:
    """Nodes run by one ``invoke``, super-step by super-step.

    ``steps[i]`` lists the nodes of the i-th step that ran (sorted: nodes of one step
    run in parallel, so their order means nothing); ``subgraphs`` holds the same for
    each subgraph node that ran (keyed by the node path, ``"outer|inner"`` when nested);
    ``interrupts`` the values of the interrupts the run stopped on.
    """

    steps: list[list[str]] = field(default_factory=list)
    subgraphs: dict[str, list[list[str]]] = field(default_factory=dict)
    interrupts: list[Any] = field(default_factory=list)

    @property
    def nodes(self) -> list[str]:
        """Every node that ran, step after step."""
        return [name for step in self.steps for name in step]

    def visited(self, name: str) -> bool:
        """True when node ``name`` ran (in the graph itself, not in a subgraph)."""
        return any(name in step for step in self.steps)

    @property
    def interrupted(self) -> bool:
        """True when the run stopped on an interrupt."""
        return bool(self.interrupts)


def _namespace(ns: tuple[str, ...]) -> str:
    return "|".join(part.split(":")[0] for part in ns)


class _Recorder:
    def __init__(self) -> None:
        self.path = RunPath()
        self._steps: dict[str, dict[int, list[str]]] = {}

    def add(self, ns: tuple[str, ...], event: Mapping[str, Any]) -> None:
        payload = event.get("payload") or {}
        key = _namespace(ns)
        if event.get("type") == "task":
            by_step = self._steps.setdefault(key, {})
            by_step.setdefault(int(event["step"]), []).append(payload["name"])
        elif event.get("type") == "task_result" and not ns:
            for item in payload.get("interrupts") or ():
                value = item.get("value") if isinstance(item, Mapping) else item
                self.path.interrupts.append(getattr(value, "value", value))

    def finish(self) -> RunPath:
        for key, by_step in self._steps.items():
            steps = [sorted(by_step[s]) for s in sorted(by_step)]
            if key:
                self.path.subgraphs[key] = steps
            else:
                self.path.steps = steps
        return self.path


def trace_path(
    graph: Any, input: Any, config: Mapping[str, Any] | None = None, **kwargs: Any
) -> RunPath:
    """Run ``graph`` like ``invoke(input, config, **kwargs)`` and return its :class:`RunPath`.

    Example::

        path = trace_path(graph, {"question": "hi"})
        assert_path(path, ["retrieve", "answer"])
    """
    recorder = _Recorder()
    for ns, _mode, event in graph.stream(
        input, config, stream_mode=["debug"], subgraphs=True, **kwargs
    ):
        recorder.add(ns, event)
    return recorder.finish()


async def atrace_path(
    graph: Any, input: Any, config: Mapping[str, Any] | None = None, **kwargs: Any
) -> RunPath:
    """Async twin of :func:`trace_path`."""
    recorder = _Recorder()
    async for ns, _mode, event in graph.astream(
        input, config, stream_mode=["debug"], subgraphs=True, **kwargs
    ):
        recorder.add(ns, event)
    return recorder.finish()


def _render(steps: Sequence[Sequence[str]]) -> str:
    return " -> ".join(s[0] if len(s) == 1 else "{" + ", ".join(s) + "}" for s in steps) or "(none)"


def assert_path(
    path: RunPath | Sequence[Sequence[str]],
    expected: Sequence[str | Sequence[str]],
    *,
    subgraph: str | None = None,
) -> None:
    """Assert the nodes that ran, step by step.

    ``expected`` lists one entry per super-step: a node name, or a list of the names
    that ran together in that step (any order). A flat list of names also matches a
    run whose parallel steps are given one name after another::

        assert_path(path, ["plan", ["search", "fetch"], "write"])
        assert_path(path, ["plan", "fetch", "search", "write"])  # same run

    ``subgraph="node"`` checks the steps inside that subgraph node instead.
    """
    if isinstance(path, RunPath):
        if subgraph is not None:
            if subgraph not in path.subgraphs:
                ran = ", ".join(path.subgraphs) or "none"
                raise AssertionError(
                    f"Subgraph '{subgraph}' did not run (subgraphs that ran: {ran})."
                )
            actual = path.subgraphs[subgraph]
        else:
            actual = path.steps
    else:
        actual = [sorted(step) for step in path]
    wanted = [[e] if isinstance(e, str) else sorted(e) for e in expected]
    if all(isinstance(e, str) for e in expected) and len(wanted) != len(actual):
        # a flat list: regroup it with the sizes of the actual steps
        flat = [e for e in expected if isinstance(e, str)]
        if len(flat) == sum(len(s) for s in actual):
            regrouped, at = [], 0
            for step in actual:
                regrouped.append(sorted(flat[at : at + len(step)]))
                at += len(step)
            wanted = regrouped
    if wanted != actual:
        lines = [
            "The run took a different path.",
            f"  expected: {_render(wanted)}",
            f"  actual:   {_render(actual)}",
        ]
        for i, (w, a) in enumerate(zip(wanted, actual, strict=False)):
            if w != a:
                lines.append(f"  first difference at step {i + 1}: expected {w}, ran {a}")
                break
        else:
            shorter = "expected more steps" if len(wanted) > len(actual) else "ran more steps"
            lines.append(f"  the common steps agree; {shorter}")
        raise AssertionError("\n".join(lines))
