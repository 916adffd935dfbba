"""Running one scenario in every observation mode and recording what is seen.

A scenario's ``build(ns)`` returns a fresh :class:`Setup` (graph, steps, config) each
time it is called, so every mode starts from nothing (new model script, new
checkpointer). The modes:

* ``invoke``: each step's result (``invoke``, or ``ainvoke`` for async scenarios);
* ``stream``: each step's chunks of ``stream(stream_mode=[every mode], subgraphs=True)``,
  grouped by mode;
* ``events``: each step's ``astream_events(version="v2")`` (name, run, parents, tags,
  metadata, data);
* ``tracer``: each step's run tree as a LangSmith-style tracer (a ``BaseTracer``) sees it;
* ``history``: the state history after the ``invoke`` mode's steps (with a checkpointer).

A step is an input (run with the setup's config, updated with the step's own), or a
function ``(graph, config) -> value`` for work between runs (``update_state`` ...).
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from langchain_core.tracers.base import BaseTracer
from normalize import Masker, to_data

__all__ = ["MODES", "STREAM_MODES", "Scenario", "Setup", "Step", "observe"]

MODES = ("invoke", "stream", "events", "tracer", "history")
STREAM_MODES = ["values", "updates", "messages", "custom", "tasks", "checkpoints", "debug"]


@dataclass
class Step:
    """One call of a scenario: ``input`` with ``config`` merged over the setup's, or
    ``action(graph, config)`` (then ``input`` is unused)."""

    input: Any = None
    config: dict[str, Any] = field(default_factory=dict)
    action: Callable[[Any, dict[str, Any]], Any] | None = None
    label: str = ""


@dataclass
class Setup:
    """What a scenario runs: the graph, its steps and the base config."""

    graph: Any
    steps: list[Step]
    config: dict[str, Any] = field(default_factory=dict)
    is_async: bool = False
    concurrent: bool = False
    """Sync branches run at the same time in worker threads: the order of their items
    varies from run to run (in LangGraph too); see ``compare.parts``."""


@dataclass
class Scenario:
    """A named, realistic app combining ``features``; ``build(ns) -> Setup``."""

    name: str
    features: list[str]
    build: Callable[[Any], Setup]
    doc: str = ""


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = {**base, **extra}
    if "configurable" in base or "configurable" in extra:
        out["configurable"] = {**base.get("configurable", {}), **extra.get("configurable", {})}
    return out


class RunTreeTracer(BaseTracer):
    """Keeps every finished root run (with its child runs), as LangSmith receives them."""

    def __init__(self) -> None:
        super().__init__()
        self.roots: list[Any] = []

    def _persist_run(self, run: Any) -> None:
        self.roots.append(run)


def _run_tree(run: Any, m: Masker) -> dict[str, Any]:
    error = run.error.strip().splitlines()[0] if run.error else None
    tokens = [
        e.get("kwargs", {}).get("token") for e in run.events or [] if e.get("name") == "new_token"
    ]
    node: dict[str, Any] = {
        "name": run.name,
        "run_type": run.run_type,
        "tags": list(run.tags or []),
        "metadata": to_data((run.extra or {}).get("metadata", {}), m),
        "inputs": to_data(run.inputs, m),
        "outputs": to_data(run.outputs, m),
        "error": m.text(error) if error else None,
    }
    if tokens:
        node["tokens"] = tokens
    node["children"] = [_run_tree(child, m) for child in run.child_runs]
    return node


def _event(event: dict[str, Any], m: Masker) -> dict[str, Any]:
    return {
        "event": event["event"],
        "name": m.text(str(event.get("name"))),
        "run_id": m.label(str(event["run_id"])),
        "parent_ids": [m.label(str(p)) for p in event.get("parent_ids", [])],
        "tags": list(event.get("tags") or []),
        "metadata": to_data(event.get("metadata", {}), m),
        "data": to_data(event.get("data", {}), m),
    }


def _stream_chunk(chunk: Any, m: Masker) -> tuple[str, Any]:
    ns, mode, data = chunk
    return mode, {"ns": to_data(ns, m), "data": to_data(data, m)}


class _Runner:
    """Runs one setup's steps in one mode (sync calls, or one event loop per async call)."""

    def __init__(self, setup: Setup, m: Masker) -> None:
        self.setup = setup
        self.m = m

    def configs(self) -> list[tuple[Step, dict[str, Any]]]:
        return [(step, _merge(self.setup.config, step.config)) for step in self.setup.steps]

    def call(self, fn: Callable[[], Any]) -> Any:
        """``fn()`` (awaited in a fresh event loop when it returns a coroutine) as data."""
        try:
            result = fn()
            if asyncio.iscoroutine(result):
                result = asyncio.run(result)
            return to_data(result, self.m)
        except Exception as exc:
            return to_data(exc, self.m)

    def run_graph(self, step: Step, config: dict[str, Any]) -> Any:
        g = self.setup.graph
        if self.setup.is_async:
            return self.call(lambda: g.ainvoke(step.input, config))
        return self.call(lambda: g.invoke(step.input, config))

    def action(self, step: Step, config: dict[str, Any]) -> Any:
        assert step.action is not None
        action = step.action
        return self.call(lambda: action(self.setup.graph, config))

    def invoke(self) -> list[Any]:
        out = []
        for step, config in self.configs():
            if step.action is not None:
                out.append(self.action(step, config))
            else:
                out.append(self.run_graph(step, config))
        return out

    def _chunks(self, step: Step, config: dict[str, Any]) -> dict[str, Any]:
        g = self.setup.graph
        by_mode: dict[str, list[Any]] = {}
        error = None

        def keep(chunk: Any) -> None:
            mode, item = _stream_chunk(chunk, self.m)
            by_mode.setdefault(mode, []).append(item)

        async def consume() -> None:
            async for chunk in g.astream(
                step.input, config, stream_mode=STREAM_MODES, subgraphs=True
            ):
                keep(chunk)

        try:
            if self.setup.is_async:
                asyncio.run(consume())
            else:
                for chunk in g.stream(step.input, config, stream_mode=STREAM_MODES, subgraphs=True):
                    keep(chunk)
        except Exception as exc:
            error = to_data(exc, self.m)
        return {"chunks": by_mode, "error": error}

    def stream(self) -> list[Any]:
        out: list[Any] = []
        for step, config in self.configs():
            if step.action is not None:
                out.append({"action": self.action(step, config)})
            else:
                out.append(self._chunks(step, config))
        return out

    def _events(self, step: Step, config: dict[str, Any]) -> dict[str, Any]:
        g = self.setup.graph
        events: list[Any] = []
        error = None

        async def consume() -> None:
            async for event in g.astream_events(step.input, config, version="v2"):
                events.append(_event(event, self.m))

        try:
            asyncio.run(consume())
        except Exception as exc:
            error = to_data(exc, self.m)
        return {"events": events, "error": error}

    def events(self) -> list[Any]:
        out: list[Any] = []
        for step, config in self.configs():
            if step.action is not None:
                out.append({"action": self.action(step, config)})
            else:
                out.append(self._events(step, config))
        return out

    def tracer(self) -> list[Any]:
        out: list[Any] = []
        for step, config in self.configs():
            if step.action is not None:
                out.append({"action": self.action(step, config)})
                continue
            tracer = RunTreeTracer()
            result = self.run_graph(step, {**config, "callbacks": [tracer]})
            trees = [_run_tree(run, self.m) for run in tracer.roots]
            out.append({"result": result, "runs": trees})
        return out

    def history(self) -> list[Any] | None:
        g = self.setup.graph
        if getattr(g, "checkpointer", None) in (None, False):
            return None
        self.invoke()
        config = _merge(self.setup.config, {})
        snapshots = list(g.get_state_history(config))
        return [
            {
                "values": to_data(s.values, self.m),
                "next": list(s.next),
                "metadata": to_data(
                    {k: v for k, v in (s.metadata or {}).items() if k in ("source", "step")},
                    self.m,
                ),
                "tasks": [
                    {
                        "name": t.name,
                        "error": to_data(t.error, self.m),
                        "interrupts": to_data(list(t.interrupts), self.m),
                    }
                    for t in s.tasks
                ],
            }
            for s in snapshots
        ]


def observe(scenario: Scenario, ns: Any, modes: tuple[str, ...] = MODES) -> dict[str, Any]:
    """Every mode's observations of ``scenario`` on the library ``ns``."""
    result: dict[str, Any] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for mode in modes:
            setup = scenario.build(ns)
            result["concurrent"] = setup.concurrent
            runner = _Runner(setup, Masker())
            try:
                result[mode] = getattr(runner, mode)()
            except Exception as exc:  # the harness itself failed: record, keep going
                result[mode] = {"~harness-error": to_data(exc, Masker())}
    return result
