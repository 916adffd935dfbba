"""Random but deterministic StateGraph programs for differential testing.

A program is a JSON-able *spec* (``generate(seed)``); ``emit.emit(spec)`` turns it into
the Python source of ``build(ns, rt)``, which builds and compiles the graph using only the
names in ``ns`` (a library namespace, see ``namespace()``), so one program runs on
LangGraph and on stategraph alike. ``rt`` is a :class:`Runtime` that counts node
executions and injects failures. Specs are plain data so they can be shrunk.
"""

from __future__ import annotations

import random
import threading
from types import SimpleNamespace
from typing import Any

NAMES = "abcdefgh"


class Flaky(Exception):
    """A failure the default retry policy retries."""


class Explode(RuntimeError):
    """Raised when a node runs absurdly often (runaway fan-out guard)."""


class Runtime:
    """Per-run side channel: node execution counts and failure injection."""

    Flaky = Flaky

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.hits: dict[str, int] = {}
        self.attempts: dict[str, int] = {}

    def hit(self, name: str, state: Any) -> None:
        """Count one execution of node ``name``; stop runaway programs."""
        with self.lock:
            n = self.hits[name] = self.hits.get(name, 0) + 1
        if n > 200 or (isinstance(state, dict) and len(state.get("trace", ())) > 2000):
            raise Explode(name)

    def flaky(self, tag: str, times: int, exc: str) -> None:
        """Fail the first ``times`` attempts of ``tag`` with ``exc``."""
        with self.lock:
            n = self.attempts[tag] = self.attempts.get(tag, 0) + 1
        if n <= times:
            raise (Flaky if exc == "Flaky" else ValueError)(f"{tag} attempt {n}")

    @staticmethod
    def tag(name: str, state: Any) -> str:
        """Trace entry of a node: its name, plus the Send packet id if any."""
        if isinstance(state, dict) and "pkt" in state:
            return f"{name}@{state['pkt']}"
        return name


def namespace(lib: str) -> SimpleNamespace:
    """The names a program uses, imported from ``lib`` (``langgraph`` or ``stategraph``)."""
    import importlib

    g = importlib.import_module(f"{lib}.graph")
    t = importlib.import_module(f"{lib}.types")
    m = importlib.import_module(f"{lib}.checkpoint.memory")
    managed = importlib.import_module(f"{lib}.managed")
    return SimpleNamespace(
        lib=lib,
        StateGraph=g.StateGraph,
        START=g.START,
        END=g.END,
        Send=t.Send,
        Command=t.Command,
        RetryPolicy=t.RetryPolicy,
        interrupt=t.interrupt,
        Interrupt=t.Interrupt,
        InMemorySaver=m.InMemorySaver,
        Overwrite=t.Overwrite,
        RemainingSteps=managed.RemainingSteps,
    )


# --------------------------------------------------------------------------- generation


def _target(r: random.Random, i: int, names: list[str], back: float = 0.12) -> str:
    later = names[i + 1 :]
    if later and r.random() > back:
        return r.choice(later)
    return r.choice(names)


def _option(r: random.Random, i: int, names: list[str], sends: bool, counters: list[str]) -> Any:
    kind = r.choices(["name", "end", "list", "send"], [45, 15, 20, 20 if sends else 0])[0]
    if kind == "name":
        return _target(r, i, names)
    if kind == "end":
        return "__end__"
    if kind == "list":
        k = r.randint(2, 3)
        out = [_target(r, i, names) for _ in range(k)]
        if r.random() < 0.1:
            out[-1] = "__end__"
        return out
    packets = []
    for j in range(r.randint(1, 3)):
        arg: dict[str, Any] = {"pkt": j}
        if r.random() < 0.4:
            arg[r.choice(counters)] = r.randint(0, 3)
        packets.append({"send": _target(r, i, names, back=0.05), "arg": arg})
    return packets if len(packets) > 1 or r.random() < 0.5 else packets[0]


def _router(r: random.Random, i: int, names: list[str], counters: list[str], sends: bool) -> dict:
    counter = r.choice(counters)
    if i >= 0 and r.random() < 0.3:
        loop = r.choice(names[: i + 1])
        exit_ = _option(r, i, names, sends, counters)
        return {
            "kind": "bound",
            "counter": counter,
            "limit": r.randint(1, 4),
            "options": [loop, exit_],
        }
    opts = [_option(r, i, names, sends, counters) for _ in range(r.randint(1, 3))]
    return {"kind": "mod", "counter": counter, "options": opts}


def _path_map(r: random.Random, router: dict) -> Any:
    opts = router["options"]
    if any(
        isinstance(o, dict) or (isinstance(o, list) and o and isinstance(o[0], dict)) for o in opts
    ):
        return None
    if all(isinstance(o, str) for o in opts) and r.random() < 0.25:
        return "list"
    return "dict" if r.random() < 0.5 else None


def _node(r: random.Random, i: int, names: list[str], keys: dict, cp: bool) -> dict:
    name = names[i]
    writes: dict[str, Any] = {}
    for c in keys["counters"]:
        if r.random() < 0.6:
            writes[c] = 1
    for lk in keys["lists"]:
        if r.random() < 0.3:
            writes[lk] = "ow" if r.random() < 0.2 else "name"
    for p in keys["plain"]:
        if r.random() < 0.2:
            writes[p] = "expr"
    if r.random() < 0.03:
        writes["zz_unknown"] = 1
    node: dict[str, Any] = {
        "name": name,
        "kind": "fn",
        "ret": r.choices(["dict", "none", "cmd", "bad"], [70, 8, 22, 1])[0],
        "writes": writes,
        "defer": r.random() < 0.1,
    }
    if node["ret"] == "cmd":
        node["goto"] = _router(r, i, names, keys["counters"], sends=True)
        node["cmd_tuples"] = r.random() < 0.15
    if r.random() < 0.08:
        node["fail"] = {"times": r.randint(1, 2), "exc": r.choice(["Flaky", "Flaky", "ValueError"])}
        if r.random() < 0.8:
            node["retry"] = {"max_attempts": r.randint(1, 3), "retry_on": r.choice([None, "Flaky"])}
    if cp and r.random() < 0.1:
        node["interrupt"] = 2 if r.random() < 0.25 else True
    if keys.get("remaining") and r.random() < 0.5:
        node["read_rs"] = True
    if keys.get("async") and r.random() < 0.5:
        node["async"] = True
    if r.random() < 0.1 and node["ret"] != "none":
        node["kind"] = "sub"
        node["sub"] = _subgraph(r, i, names, keys, cp)
    return node


def _subgraph(r: random.Random, i: int, names: list[str], keys: dict, cp: bool) -> dict:
    inner = [f"x{j}" for j in range(1, r.randint(1, 3) + 1)]
    edges = [["__start__", inner[0]]]
    for j in range(1, len(inner)):
        edges.append([inner[r.randint(0, j - 1)], inner[j]])
    return {
        "nodes": inner,
        "edges": edges,
        "share_trace": r.random() < 0.7,
        "share_counter": r.random() < 0.5,
        "wrapped": r.random() < 0.3,
        "interrupt": cp and r.random() < 0.15,
        "counter": keys["counters"][0],
        "parent_goto": _option(r, i, names, True, keys["counters"]) if r.random() < 0.2 else None,
    }


def _update(r: random.Random, names: list[str], keys: dict) -> dict:
    """An ``update_state`` call made before the first resume of a run."""
    values: dict[str, Any] = {"trace": ["upd"]}
    if r.random() < 0.5:
        values[r.choice(keys["counters"])] = r.randint(1, 3)
    as_node = r.choice([None, *names, "__start__"]) if r.random() < 0.7 else None
    return {"values": values, "as_node": as_node}


def generate(seed: int) -> dict:
    """Build the spec of program ``seed`` (deterministic)."""
    r = random.Random(seed)
    names = list(NAMES[: r.randint(2, 8)])
    keys: dict[str, Any] = {
        "plain": ["p0"] + (["p1"] if r.random() < 0.4 else []),
        "lists": ["l0"] if r.random() < 0.5 else [],
        "counters": ["c0"] + (["c1"] if r.random() < 0.5 else []),
        "remaining": r.random() < 0.15,
        "async": r.random() < 0.1,
    }
    cp = r.random() < 0.35
    nodes = [_node(r, i, names, keys, cp) for i in range(len(names))]
    edges: list[list[Any]] = []
    conds: list[dict] = []
    if r.random() < 0.1:
        router = _router(r, -1, names, keys["counters"], sends=True)
        conds.append({"src": "__start__", "router": router, "path_map": _path_map(r, router)})
    else:
        edges.append(["__start__", names[0]])
        if r.random() < 0.25:
            edges.append(["__start__", r.choice(names[1:])])
    for i, name in enumerate(names):
        for _ in range(r.choices([0, 1, 2], [25, 60, 15])[0]):
            dst = "__end__" if r.random() < 0.15 else _target(r, i, names, back=0.04)
            edges.append([name, dst])
        if r.random() < 0.3:
            router = _router(r, i, names, keys["counters"], sends=True)
            conds.append({"src": name, "router": router, "path_map": _path_map(r, router)})
    if len(names) >= 3 and r.random() < 0.2:
        srcs = r.sample(names[:-1], 2)
        edges.append([srcs, _target(r, max(names.index(s) for s in srcs), names, back=0.0)])
    inputs: list[Any] = [
        r.choice([{"c0": 0}, {"c0": r.randint(1, 3)}, {"p0": 7, "trace": ["in"]}, {}, {"c0": 1}])
    ]
    if cp and r.random() < 0.4:
        inputs.append(r.choice([{"c0": 1}, {"trace": ["again"]}, None]))
    if r.random() < 0.08:
        goto = _option(r, -1, names, True, keys["counters"])
        cmd = {"__command__": {"goto": goto, "update": {"trace": ["cmd-in"]}}}
        inputs[-1 if len(inputs) > 1 else 0] = cmd
    spec: dict[str, Any] = {
        "seed": seed,
        "keys": keys,
        "nodes": nodes,
        "edges": edges,
        "conds": conds,
        "checkpointer": cp,
        "interrupt_before": [r.choice(names)] if cp and r.random() < 0.1 else [],
        "interrupt_after": [r.choice(names)] if cp and r.random() < 0.08 else [],
        "durability": r.choice([None, None, "sync", "async", "exit"]) if cp else None,
        "update": _update(r, names, keys) if cp and r.random() < 0.2 else None,
        "resume_single": r.random() < 0.5,
        "recursion_limit": r.choice([None, r.randint(2, 12), r.randint(10, 30), r.randint(10, 30)]),
        "inputs": inputs,
    }
    if not spec["inputs"][0] and r.random() < 0.5:
        spec["inputs"][0] = {"c0": 0}
    return spec
