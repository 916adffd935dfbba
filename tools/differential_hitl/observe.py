"""Run one scenario on one library and record a normalized observation per action.

Interrupt ids differ between libraries (they derive from task ids), so every id is
replaced by a label (``I0``, ``I1``...) in the order the id is first seen during the
scenario: two runs agree when they reuse and renew ids at the same places.
"""

from __future__ import annotations

import asyncio
import warnings
from collections import Counter
from typing import Any

from scenarios import Action, Lib, Scenario, build


class Ids:
    """Maps each interrupt id to a label in order of first appearance."""

    def __init__(self) -> None:
        self.labels: dict[str, str] = {}
        self.order: list[str] = []  # ids in get_state() task order, to break ties

    def rank(self, raw: Any) -> int:
        """Position of ``raw`` in the thread's task order (ties of equal values)."""
        key = str(raw)
        return self.order.index(key) if key in self.order else len(self.order)

    def prime(self, graph: Any, config: dict[str, Any]) -> None:
        """Record the task order of ``config``'s current state."""
        try:
            snap = graph.get_state(config)
        except Exception:
            self.order = []
            return
        self.order = [str(i.id) for t in snap.tasks for i in t.interrupts]

    def __call__(self, raw: Any) -> str:
        key = str(raw)
        if key not in self.labels:
            self.labels[key] = f"I{len(self.labels)}"
        return self.labels[key]


def _norm(value: Any, ids: Ids) -> Any:
    """Plain, comparable data: interrupts become ``(label, value)``, tuples lists."""
    cls = type(value).__name__
    if cls == "Interrupt":
        return ("Interrupt", ids(value.id), _norm(value.value, ids))
    if cls in ("Command",):
        return ("Command", repr(value))
    if cls == "Send":
        return ("Send", value.node, _norm(value.arg, ids))
    if isinstance(value, dict):
        return {str(k): _norm(v, ids) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple)):
        return [_norm(v, ids) for v in value]
    return value


def id_free(value: Any) -> str:
    """A sort key for ``value`` that ignores interrupt ids (they differ by library)."""
    return repr(_norm(value, _NoIds()))


class _NoIds(Ids):
    def __call__(self, raw: Any) -> str:
        return "?"


def norm_result(result: Any, ids: Ids) -> Any:
    """The returned value with ``__interrupt__`` as ``[(label, value), ...]``.

    LangGraph lists the interrupts of one step in completion order, which depends on
    thread timing, so they are compared sorted by value.
    """
    if isinstance(result, dict) and "__interrupt__" in result:
        rest = {k: v for k, v in result.items() if k != "__interrupt__"}
        out = _norm(rest, ids)
        found = sorted(result["__interrupt__"], key=lambda i: (id_free(i.value), ids.rank(i.id)))
        out["__interrupt__"] = [(ids(i.id), _norm(i.value, ids)) for i in found]
        return out
    return _norm(result, ids)


def norm_snapshot(snap: Any, ids: Ids, *, deep: bool = True) -> dict[str, Any]:
    """values, next, tasks, interrupts and metadata source/step of a ``StateSnapshot``."""
    meta = snap.metadata or {}
    tasks = []
    for t in snap.tasks:
        entry: dict[str, Any] = {
            "name": t.name,
            "interrupts": [(ids(i.id), _norm(i.value, ids)) for i in t.interrupts],
            "error": t.error
            is not None,  # LangGraph gives the repr string, stategraph an Exception
        }
        if type(t.state).__name__ == "StateSnapshot":
            entry["sub"] = norm_snapshot(t.state, ids, deep=False) if deep else "snapshot"
        elif t.state is not None:
            entry["sub"] = type(t.state).__name__
        tasks.append(entry)
    return {
        "values": _norm(snap.values, ids),
        "next": list(snap.next),
        "ntasks": len(snap.tasks),
        "tasks": tasks,
        "interrupts": [(ids(i.id), _norm(i.value, ids)) for i in snap.interrupts],
        "source": meta.get("source"),
        "step": meta.get("step"),
    }


def norm_history(snaps: list[Any], ids: Ids) -> list[Any]:
    """``(source, step, next, values)`` of each snapshot, newest first."""
    out = []
    for s in snaps:
        meta = s.metadata or {}
        out.append([meta.get("source"), meta.get("step"), list(s.next), _norm(s.values, ids)])
    return out


def _cfg(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}, "recursion_limit": 30}


def _call(graph: Any, a: Action, method: str, *args: Any, **kw: Any) -> Any:
    if a.api == "async":
        amethod = getattr(graph, "a" + method)
        if method == "stream":

            async def collect() -> list[Any]:
                return [c async for c in amethod(*args, **kw)]

            return asyncio.run(collect())
        return asyncio.run(amethod(*args, **kw))
    out = getattr(graph, method)(*args, **kw)
    return list(out) if method == "stream" else out


def _result(graph: Any, config: dict[str, Any], ids: Ids, raw: Any) -> Any:
    ids.prime(graph, config)
    return norm_result(raw, ids)


def _chunk_key(chunk: Any, ids: Ids) -> tuple[str, int]:
    found = chunk.get("__interrupt__", ()) if isinstance(chunk, dict) else ()
    return id_free(chunk), min((ids.rank(i.id) for i in found), default=0)


def _pending(graph: Any, config: dict[str, Any]) -> list[Any]:
    """Pending interrupts of the thread, in a library-independent order (by value)."""
    snap = graph.get_state(config)
    return sorted(snap.interrupts, key=lambda i: repr(i.value))


def _run_kw(a: Action) -> dict[str, Any]:
    kw: dict[str, Any] = {}
    if a.durability is not None:
        kw["durability"] = a.durability
    if a.run_before:
        kw["interrupt_before"] = a.run_before
    if a.run_after:
        kw["interrupt_after"] = a.run_after
    return kw


AVOIDABLE = frozenset(
    {
        "empty-command",
        "resume-nothing-pending",
        "cmd-fresh",
        "cmd-update",
        "none-pending",
        "mixed-resume",
        "async-exit",
        "bulk-multi",
        "as-node-none",
        "replay-update",
    }
)


def _avoided(a: Action, notes: dict[str, Any], avoid: frozenset[str]) -> bool:
    """Whether ``a`` triggers a known divergence that ``avoid`` asks to skip."""
    pending, fresh = notes.get("pending", 0), notes.get("fresh", False)
    empty_cmd = (a.kind == "resume" and a.value is None) or (
        a.kind == "cmd" and not a.value and a.goto is None
    )
    return (
        ("empty-command" in avoid and empty_cmd)
        or (
            "resume-nothing-pending" in avoid and a.kind in ("resume", "resume_map") and not pending
        )
        or ("cmd-fresh" in avoid and a.kind == "cmd" and (fresh or not notes.get("ran")))
        or ("cmd-update" in avoid and a.kind == "cmd" and bool(a.value))
        or ("none-pending" in avoid and a.kind == "none" and pending)
        or ("async-exit" in avoid and a.api == "async" and a.durability == "exit")
        or ("mixed-resume" in avoid and a.kind == "resume_map" and notes.get("bare_resumed"))
        or (
            "bulk-multi" in avoid
            and a.kind == "bulk"
            and any(len(s) > 1 for s in a.supersteps or [])
        )
        or ("as-node-none" in avoid and a.kind in ("update", "fork") and a.as_node is None)
    )


def perform(
    graph: Any, lib: Lib, a: Action, ids: Ids, notes: dict[str, Any], avoid: frozenset[str]
) -> Any:
    """Carry out action ``a``; returns a normalized result (or raises).

    ``notes`` receives facts about the action (not compared) used to classify a divergence;
    actions that would trigger a known divergence named in ``avoid`` are skipped.
    """
    if _avoided(a, notes, avoid):
        return "skipped"
    config = _cfg(a.thread)
    kw = _run_kw(a)
    if a.kind == "invoke":
        return _result(graph, config, ids, _call(graph, a, "invoke", a.value, config, **kw))
    if a.kind == "stream":
        chunks = _call(graph, a, "stream", a.value, config, stream_mode="updates", **kw)
        ids.prime(graph, config)
        return [norm_result(c, ids) for c in sorted(chunks, key=lambda c: _chunk_key(c, ids))]
    if a.kind == "resume":
        cmd = lib.Command(resume=a.value)
        return _result(graph, config, ids, _call(graph, a, "invoke", cmd, config, **kw))
    if a.kind == "resume_map":
        pending = _pending(graph, config)
        if a.index == 1:
            pending = pending[:1]
        answers = {i.id: a.value[n % len(a.value)] for n, i in enumerate(pending)}
        cmd = lib.Command(resume=answers)
        return _result(graph, config, ids, _call(graph, a, "invoke", cmd, config, **kw))
    if a.kind == "cmd":
        cmd = lib.Command(update=a.value, goto=a.goto if a.goto is not None else ())
        return _result(graph, config, ids, _call(graph, a, "invoke", cmd, config, **kw))
    if a.kind == "none":
        return _result(graph, config, ids, _call(graph, a, "invoke", None, config, **kw))
    if a.kind == "update":
        _call(graph, a, "update_state", config, a.value, as_node=a.as_node)
        return "updated"
    if a.kind in ("replay", "fork"):
        history = list(graph.get_state_history(config))
        if not history:
            return "no-history"
        chosen = history[a.index % len(history)]
        notes["past"] = {
            "source": (chosen.metadata or {}).get("source"),
            "head": a.index % len(history) == 0,
            "next": list(chosen.next),
        }
        if "replay-update" in avoid and notes["past"]["source"] in ("update", "fork"):
            return "skipped"
        past = chosen.config
        if a.kind == "fork":
            past = _call(graph, a, "update_state", past, a.value, as_node=a.as_node)
        return _result(graph, config, ids, _call(graph, a, "invoke", None, past, **kw))
    if a.kind == "bulk":
        steps = [[lib.StateUpdate(v, n) for v, n in step] for step in a.supersteps or []]
        _call(graph, a, "bulk_update_state", config, steps)
        return "updated"
    raise ValueError(f"unknown action kind {a.kind!r}")


def observe(sc: Scenario, lib: Lib, avoid: frozenset[str] = frozenset()) -> list[dict[str, Any]]:
    """Run every action of ``sc`` with ``lib``; one observation dict per action.

    Actions that would trigger a known divergence named in ``avoid`` are skipped.
    """
    counts: Counter[str] = Counter()
    ids = Ids()
    graph = build(sc, lib, counts)
    trace: list[dict[str, Any]] = []
    bare_resumed: set[str] = set()
    for a in sc.actions:
        obs: dict[str, Any] = {}
        # Not compared: context for classifying a divergence.
        try:
            before = graph.get_state(_cfg(a.thread))
            sources = {
                (h.metadata or {}).get("source") for h in graph.get_state_history(_cfg(a.thread))
            }
            obs["before"] = {
                "pending": len(before.interrupts),
                "next": list(before.next),
                "fresh": before.metadata is None,
                "ran": bool(sources & {"input", "loop", "fork"}),
            }
        except Exception as exc:
            obs["before"] = {"error": type(exc).__name__}
        obs["before"]["bare_resumed"] = a.thread in bare_resumed
        if a.kind == "resume":
            bare_resumed.add(a.thread)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                obs["result"] = perform(graph, lib, a, ids, obs["before"], avoid)
                obs["error"] = None
            except Exception as exc:  # any failure is part of the observation
                obs["result"] = None
                obs["error"] = type(exc).__name__
                obs["error_msg"] = str(exc)[:300]
        obs["warnings"] = sorted({w.category.__name__ for w in caught})
        config = _cfg(a.thread)
        try:
            obs["state"] = norm_snapshot(graph.get_state(config, subgraphs=True), ids)
            obs["history"] = norm_history(list(graph.get_state_history(config)), ids)
        except Exception as exc:
            obs["state"] = f"error {type(exc).__name__}"
            obs["history"] = None
        obs["counts"] = dict(sorted(counts.items()))
        trace.append(obs)
    return trace
