"""Running one node of a compiled graph alone and reading what it decided."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from stategraph.constants import TASKS
from stategraph.errors import GraphInterrupt
from stategraph.pregel._node_alone import NO_RESUME, AloneCall, call_async, call_sync, prepare_alone
from stategraph.types import Command, Interrupt, Send

__all__ = ["NodeRun", "run_node", "arun_node"]

_BRANCH = "branch:to:"


@dataclass
class NodeRun:
    """What one node did when run alone by :func:`run_node`.

    ``output`` is the function's return value; ``update`` the state keys it writes
    (``Command.update`` included; the last value when a key is written twice, and
    ``writes`` lists every write in order); ``goto`` the node names and ``Send`` packets it routes
    to with ``Command(goto=...)``; ``custom`` what it wrote to the stream writer;
    ``interrupts`` the questions it paused on (then ``output`` is None).
    """

    output: Any = None
    update: dict[str, Any] = field(default_factory=dict)
    writes: list[tuple[str, Any]] = field(default_factory=list)
    goto: list[str | Send] = field(default_factory=list)
    custom: list[Any] = field(default_factory=list)
    interrupts: tuple[Interrupt, ...] = ()

    @property
    def interrupted(self) -> bool:
        """True when the node paused on ``interrupt()``."""
        return bool(self.interrupts)


def _node(graph: Any, name: str) -> Any:
    nodes = getattr(graph, "nodes", None)
    if not isinstance(nodes, Mapping):
        raise TypeError(f"run_node() needs a compiled graph, got {type(graph).__name__}.")
    if name not in nodes or name.startswith("__"):
        known = ", ".join(n for n in nodes if not n.startswith("__"))
        raise KeyError(f"The graph has no node '{name}'. Its nodes: {known}.")
    return nodes[name]


def _describe(call: AloneCall, output: Any) -> NodeRun:
    run = NodeRun(output=output, custom=call.custom)
    state_writer = next((w for w in call.node.writers if hasattr(w, "writes_for")), None)
    if state_writer is None:
        if isinstance(output, Mapping):
            run.update = dict(output)
            run.writes = list(output.items())
        return run
    for chan, value in state_writer.writes_for(output):
        if chan.startswith(_BRANCH):
            run.goto.append(chan[len(_BRANCH) :])
        elif chan == TASKS:
            run.goto.append(value)
        else:
            run.writes.append((chan, value))
            run.update[chan] = value
    if isinstance(output, Command) and output.goto:
        targets = output.goto if isinstance(output.goto, (list, tuple)) else [output.goto]
        run.goto.extend(t for t in targets if isinstance(t, str) and t not in run.goto)
    return run


def run_node(
    graph: Any,
    name: str,
    state: Any,
    config: Mapping[str, Any] | None = None,
    *,
    context: Any = None,
    store: Any = None,
    resume: Any = NO_RESUME,
    resumes: Sequence[Any] | None = None,
) -> NodeRun:
    """Run node ``name`` of ``graph`` alone on ``state`` and report what it did.

    Example::

        result = run_node(graph, "review", {"draft": "hi"}, resume="approve")
        assert result.update == {"approved": True}
        assert result.goto == ["publish"]

    See :meth:`PregelNode.invoke <stategraph.pregel.node.PregelNode.invoke>` for the
    arguments; an ``interrupt()`` the answers do not cover is reported in
    ``interrupts`` instead of raised.
    """
    call = prepare_alone(
        _node(graph, name),
        state,
        config,
        context=context,
        store=store,
        resume=resume,
        resumes=resumes,
    )
    try:
        output = call_sync(call)
    except GraphInterrupt as exc:
        return NodeRun(custom=call.custom, interrupts=exc.interrupts)
    return _describe(call, output)


async def arun_node(
    graph: Any,
    name: str,
    state: Any,
    config: Mapping[str, Any] | None = None,
    *,
    context: Any = None,
    store: Any = None,
    resume: Any = NO_RESUME,
    resumes: Sequence[Any] | None = None,
) -> NodeRun:
    """Async twin of :func:`run_node` (for async nodes)."""
    call = prepare_alone(
        _node(graph, name),
        state,
        config,
        context=context,
        store=store,
        resume=resume,
        resumes=resumes,
    )
    try:
        output = await call_async(call)
    except GraphInterrupt as exc:
        return NodeRun(custom=call.custom, interrupts=exc.interrupts)
    return _describe(call, output)
