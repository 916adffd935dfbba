"""Random, deterministic human-in-the-loop scenarios, written once for both libraries.

A scenario is pure data (``Scenario``): a small graph (nodes, edges, breakpoints, an
optional subgraph) plus a sequence of client actions on one or two threads. ``build``
turns the data into a compiled graph for one library through a ``Lib`` namespace
adapter, so the same scenario runs on LangGraph and on stategraph with nothing but
the import prefix changed.

Only public API is used: ``StateGraph``, ``START``, ``END``, ``Command``, ``Send``,
``interrupt``, ``InMemorySaver`` and ``StateUpdate``.
"""

from __future__ import annotations

import importlib
import operator
import random
from collections import Counter
from dataclasses import dataclass, field
from typing import Annotated, Any

from typing_extensions import TypedDict

# --------------------------------------------------------------------------- adapter


@dataclass(frozen=True)
class Lib:
    """The public names a scenario needs, taken from one library (``prefix``)."""

    prefix: str
    StateGraph: Any
    START: str
    END: str
    Command: Any
    Send: Any
    interrupt: Any
    InMemorySaver: Any
    StateUpdate: Any  # None when the library has no bulk updates


def load_lib(prefix: str) -> Lib:
    """Import the namespace of ``prefix`` (``"langgraph"`` or ``"stategraph"``)."""
    graph = importlib.import_module(f"{prefix}.graph")
    types = importlib.import_module(f"{prefix}.types")
    memory = importlib.import_module(f"{prefix}.checkpoint.memory")
    return Lib(
        prefix=prefix,
        StateGraph=graph.StateGraph,
        START=graph.START,
        END=graph.END,
        Command=types.Command,
        Send=types.Send,
        interrupt=types.interrupt,
        InMemorySaver=memory.InMemorySaver,
        StateUpdate=getattr(types, "StateUpdate", None),
    )


class State(TypedDict, total=False):
    """The scenario state: an append-only log, a summed counter and a last-value key."""

    log: Annotated[list[str], operator.add]
    count: Annotated[int, operator.add]
    last: str


# --------------------------------------------------------------------------- spec

END_NAME = "__end__"
START_NAME = "__start__"


@dataclass
class NodeSpec:
    """One node: its interrupts, what it returns and where a ``Command`` sends it."""

    name: str
    asks: list[str] = field(default_factory=list)  # "static" | "state" per interrupt
    writes_last: bool = False
    command_goto: list[str] | None = None  # return Command(update=..., goto=...)
    fails_on_boom: bool = False  # raise ValueError when "boom" is in the log
    sub: list[NodeSpec] | None = None  # a chain subgraph (added as a node)
    sub_mode: str = "node"  # "node": add_node(name, compiled); "call": invoked inside


@dataclass
class EdgeSpec:
    """An edge: ``static`` (src -> targets), ``join`` (sources -> dest), ``cond``, ``loop``."""

    kind: str
    src: str = ""
    targets: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    options: list[list[str]] = field(default_factory=list)  # cond: each a target list
    send: bool = False  # cond: route with Send(target, {"log": ["sent"]}) objects
    limit: int = 0  # loop: go back while count < limit
    back: str = ""  # loop target while under the limit
    forward: str = END_NAME  # loop target at the limit


@dataclass
class Action:
    """One client call on a thread."""

    kind: str  # invoke|resume|resume_map|cmd|none|update|replay|fork|bulk|stream
    thread: str = "t1"
    api: str = "sync"  # "sync" or "async"
    durability: str | None = None
    value: Any = None  # input / resume value / update values
    as_node: str | None = None
    goto: Any = None
    index: int = 0  # replay/fork: history position; resume_map: "first only" if 1
    supersteps: list[list[tuple[dict[str, Any], str | None]]] | None = None
    run_before: list[str] | None = None  # per-run interrupt_before
    run_after: list[str] | None = None  # per-run interrupt_after


@dataclass
class Scenario:
    """A graph and the actions run on it."""

    seed: int
    nodes: list[NodeSpec]
    edges: list[EdgeSpec]
    interrupt_before: list[str] = field(default_factory=list)
    interrupt_after: list[str] = field(default_factory=list)
    actions: list[Action] = field(default_factory=list)


# --------------------------------------------------------------------------- generation


def generate(seed: int, *, bulk: bool = True) -> Scenario:
    """A random scenario, the same for the same ``seed``."""
    rng = random.Random(seed)
    k = rng.randint(2, 6)
    names = [f"n{i}" for i in range(k)]
    nodes = [_gen_node(rng, name, names) for name in names]
    edges = _gen_edges(rng, names, nodes)
    before = [n for n in names if rng.random() < 0.08]
    after = [n for n in names if rng.random() < 0.08]
    sc = Scenario(seed, nodes, edges, before, after)
    sc.actions = _gen_actions(rng, sc, bulk=bulk)
    return sc


def _gen_asks(rng: random.Random, most: int) -> list[str]:
    n = rng.choices(range(most + 1), weights=[5, 4, 2, 1][: most + 1])[0]
    return [rng.choice(["static", "state"]) for _ in range(n)]


def _gen_node(rng: random.Random, name: str, names: list[str]) -> NodeSpec:
    node = NodeSpec(name, asks=_gen_asks(rng, 3))
    node.writes_last = rng.random() < 0.1
    node.fails_on_boom = rng.random() < 0.1
    later = names[names.index(name) + 1 :]
    if later and rng.random() < 0.12:
        node.command_goto = rng.sample(later, rng.randint(1, min(2, len(later))))
    if rng.random() < 0.15:
        inner = [NodeSpec(f"{name}_s{i}", asks=_gen_asks(rng, 2)) for i in range(rng.randint(1, 2))]
        node.sub = inner
        node.sub_mode = rng.choice(["node", "node", "call"])
        node.asks = []
    return node


def _gen_edges(rng: random.Random, names: list[str], nodes: list[NodeSpec]) -> list[EdgeSpec]:
    edges: list[EdgeSpec] = []
    targeted: set[str] = set()
    r = rng.random()
    if r < 0.65 or len(names) < 2:
        edges.append(EdgeSpec("static", START_NAME, [names[0]]))
    elif r < 0.85:
        edges.append(EdgeSpec("static", START_NAME, names[:2]))
    else:
        edges.append(EdgeSpec("cond", START_NAME, options=[[names[0]], names[:2]]))
    for i, name in enumerate(names):
        later = names[i + 1 :]
        choices = [*later, END_NAME]
        r = rng.random()
        if nodes[i].command_goto and rng.random() < 0.7:
            pass  # the Command is the only way out
        elif r < 0.45 or not later:
            edges.append(EdgeSpec("static", name, [rng.choice(choices)]))
        elif r < 0.65 and len(later) >= 2:
            edges.append(
                EdgeSpec("static", name, rng.sample(later, rng.randint(2, min(3, len(later)))))
            )
        elif r < 0.85:
            opts = [[rng.choice(choices)] for _ in range(2)]
            if len(later) >= 2 and rng.random() < 0.3:
                opts.append(rng.sample(later, 2))
            send = rng.random() < 0.25
            if send:
                opts = [[t for t in o if t != END_NAME] or [later[0]] for o in opts]
            edges.append(EdgeSpec("cond", name, options=opts, send=send))
        elif r < 0.93 and i > 0:
            back = rng.choice(names[: i + 1])
            edges.append(
                EdgeSpec(
                    "loop", name, limit=rng.randint(2, 5), back=back, forward=rng.choice(choices)
                )
            )
        else:
            pass  # a dead end: the node finishes the run
    for e in edges:
        targeted.update(e.targets)
        for o in e.options:
            targeted.update(o)
        if e.kind == "loop":
            targeted.update([e.back, e.forward])
    for n in nodes:
        targeted.update(n.command_goto or [])
    for i, name in enumerate(names):
        if name not in targeted:
            src = rng.choice([START_NAME, *names[:i]])
            edges.append(EdgeSpec("static", src, [name]))
    if len(names) >= 3 and rng.random() < 0.2:
        dest = names[-1]
        srcs = rng.sample(names[:-1], 2)
        edges.append(EdgeSpec("join", sources=srcs, targets=[dest]))
    return edges


def _gen_values(rng: random.Random) -> dict[str, Any]:
    r = rng.random()
    if r < 0.5:
        return {"log": [rng.choice(["u", "v", "w"])]}
    if r < 0.7:
        return {"last": rng.choice(["x", "y"])}
    if r < 0.8:
        return {"log": ["boom"]}
    if r < 0.9:
        return {"count": rng.randint(1, 3), "log": ["c"]}
    return {}


def _gen_answer(rng: random.Random) -> Any:
    return rng.choice(["yes", "no", 7, {"ok": True}, ["a", "b"], None])


def _gen_actions(rng: random.Random, sc: Scenario, *, bulk: bool) -> list[Action]:
    names = [n.name for n in sc.nodes]
    threads = ["t1"] if rng.random() < 0.7 else ["t1", "t2"]
    started: set[str] = set()
    actions: list[Action] = []
    kinds = ["invoke", "resume", "resume_map", "cmd", "none", "update", "replay", "fork", "stream"]
    weights = [8, 14, 8, 4, 6, 6, 5, 3, 3]
    if bulk:
        kinds.append("bulk")
        weights.append(3)
    for _ in range(rng.randint(1, 6)):
        thread = rng.choice(threads)
        kind = "invoke" if thread not in started and rng.random() < 0.85 else None
        kind = kind or rng.choices(kinds, weights)[0]
        started.add(thread)
        a = Action(kind, thread, api=rng.choice(["sync", "sync", "async"]))
        a.durability = rng.choice([None, "sync", "async", "exit"])
        if kind in ("invoke", "stream"):
            a.value = {"log": [f"in{len(actions)}"]} if rng.random() < 0.9 else {}
            if rng.random() < 0.1:
                a.run_before = rng.sample(names, 1)
            if rng.random() < 0.1:
                a.run_after = rng.sample(names, 1)
        elif kind == "resume":
            a.value = _gen_answer(rng)
        elif kind == "resume_map":
            a.value = [_gen_answer(rng) for _ in range(4)]
            a.index = 1 if rng.random() < 0.25 else 0
        elif kind == "cmd":
            a.value = _gen_values(rng)
            r = rng.random()
            a.goto = rng.choice(names) if r < 0.6 else (rng.sample(names, 2) if r < 0.7 else None)
        elif kind in ("update", "fork"):
            a.value = _gen_values(rng)
            a.as_node = rng.choice([None, *names])
            a.index = rng.randint(0, 6)
        elif kind == "replay":
            a.index = rng.randint(0, 6)
        elif kind == "bulk":
            a.supersteps = [
                [(_gen_values(rng), rng.choice(names)) for _ in range(rng.randint(1, 2))]
                for _ in range(rng.randint(1, 2))
            ]
        actions.append(a)
    return actions


# --------------------------------------------------------------------------- build


def _question(kind: str, name: str, i: int, state: dict[str, Any]) -> Any:
    if kind == "static":
        return f"{name}.q{i}"
    return {"node": name, "i": i, "seen": len(state.get("log", []))}


def _make_node(lib: Lib, spec: NodeSpec, counts: Counter[str], path: str) -> Any:
    key = f"{path}{spec.name}"

    def node(state: dict[str, Any]) -> Any:
        counts[key] += 1
        if spec.fails_on_boom and "boom" in state.get("log", []):
            raise ValueError(f"{spec.name} saw boom")
        answers = [
            lib.interrupt(_question(k, spec.name, i, state)) for i, k in enumerate(spec.asks)
        ]
        entry = f"{spec.name}={answers!r}" if answers else spec.name
        update: dict[str, Any] = {"log": [entry], "count": 1}
        if spec.writes_last:
            update["last"] = spec.name
        if spec.command_goto:
            return lib.Command(update=update, goto=list(spec.command_goto))
        return update

    node.__name__ = spec.name
    return node


def _make_sub(lib: Lib, spec: NodeSpec, counts: Counter[str]) -> Any:
    assert spec.sub is not None
    sub = lib.StateGraph(State)
    prev = lib.START
    for inner in spec.sub:
        sub.add_node(inner.name, _make_node(lib, inner, counts, f"{spec.name}/"))
        sub.add_edge(prev, inner.name)
        prev = inner.name
    compiled = sub.compile()
    if spec.sub_mode == "node":
        return compiled

    def caller(state: dict[str, Any]) -> dict[str, Any]:
        counts[spec.name] += 1
        out = compiled.invoke(state)
        seen = len(state.get("log", []))
        return {"log": out["log"][seen:], "count": out.get("count", 0) - state.get("count", 0)}

    caller.__name__ = spec.name
    return caller


def _target(lib: Lib, name: str) -> str:
    if name == END_NAME:
        return lib.END
    if name == START_NAME:
        return lib.START
    return name


def _router(lib: Lib, edge: EdgeSpec) -> Any:
    def route(state: dict[str, Any]) -> Any:
        if edge.kind == "loop":
            return _target(lib, edge.back if state.get("count", 0) < edge.limit else edge.forward)
        option = edge.options[len(state.get("log", [])) % len(edge.options)]
        if edge.send:
            return [lib.Send(t, {"log": ["sent"]}) for t in option]
        targets = [_target(lib, t) for t in option]
        return targets[0] if len(targets) == 1 else targets

    route.__name__ = f"route_{edge.src}"
    return route


def build(sc: Scenario, lib: Lib, counts: Counter[str]) -> Any:
    """Compile ``sc``'s graph with ``lib`` and an ``InMemorySaver``; runs are counted in ``counts``."""
    builder = lib.StateGraph(State)
    for spec in sc.nodes:
        if spec.sub is not None:
            builder.add_node(spec.name, _make_sub(lib, spec, counts))
        else:
            builder.add_node(spec.name, _make_node(lib, spec, counts, ""))
    for edge in sc.edges:
        if edge.kind == "static":
            for t in edge.targets:
                builder.add_edge(_target(lib, edge.src), _target(lib, t))
        elif edge.kind == "join":
            builder.add_edge(list(edge.sources), _target(lib, edge.targets[0]))
        else:
            builder.add_conditional_edges(_target(lib, edge.src), _router(lib, edge))
    return builder.compile(
        checkpointer=lib.InMemorySaver(),
        interrupt_before=list(sc.interrupt_before) or None,
        interrupt_after=list(sc.interrupt_after) or None,
    )


def describe(sc: Scenario) -> str:
    """A readable summary of the scenario, for reports."""
    lines = [f"seed={sc.seed}"]
    for n in sc.nodes:
        extra = []
        if n.asks:
            extra.append(f"asks={n.asks}")
        if n.writes_last:
            extra.append("writes_last")
        if n.fails_on_boom:
            extra.append("fails_on_boom")
        if n.command_goto:
            extra.append(f"Command(goto={n.command_goto})")
        if n.sub:
            extra.append(
                f"sub[{n.sub_mode}]=" + ", ".join(f"{s.name} asks={s.asks}" for s in n.sub)
            )
        lines.append(f"  node {n.name} " + " ".join(extra))
    for e in sc.edges:
        if e.kind == "static":
            lines.append(f"  edge {e.src} -> {e.targets}")
        elif e.kind == "join":
            lines.append(f"  edge {e.sources} -> {e.targets[0]}")
        elif e.kind == "cond":
            lines.append(
                f"  cond {e.src} -> {e.options} (by len(log)%{len(e.options)}, send={e.send})"
            )
        else:
            lines.append(f"  loop {e.src} -> {e.back} while count<{e.limit} else {e.forward}")
    if sc.interrupt_before or sc.interrupt_after:
        lines.append(f"  interrupt_before={sc.interrupt_before} after={sc.interrupt_after}")
    for i, a in enumerate(sc.actions):
        fields = {k: v for k, v in vars(a).items() if v not in (None, 0, "sync") and k != "kind"}
        lines.append(f"  action[{i}] {a.kind} {fields}")
    return "\n".join(lines)
