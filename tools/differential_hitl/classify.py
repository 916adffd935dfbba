"""Known causes of divergence between LangGraph and stategraph, recognised by shape.

Each rule looks at the first divergent action of a scenario and, when it matches,
names a known cause with its category: ``a`` (stategraph bug), ``b`` (documented
difference, ``docs/differences.md``) or ``c`` (LangGraph quirk). A divergence no rule
matches is ``unknown`` and needs a look (``run.py --show SEED``).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from scenarios import Scenario

Rule = tuple[str, str, Callable[[Scenario, dict[str, Any]], bool]]


def _strip_sub(state: Any) -> Any:
    """``state`` without the subgraph snapshots of its tasks."""
    if not isinstance(state, dict):
        return state
    out = copy.deepcopy(state)
    for t in out.get("tasks", []):
        t.pop("sub", None)
    return out


def _only(d: dict[str, Any], *fields: str) -> bool:
    return set(d["fields"]) <= set(fields)


def _action(sc: Scenario, d: dict[str, Any]) -> Any:
    return sc.actions[d["index"]]


def _before(d: dict[str, Any]) -> dict[str, Any]:
    return d["lg"].get("before", {})


def _lg_unbound(sc: Scenario, d: dict[str, Any]) -> bool:
    return d["lg"].get("error") == "UnboundLocalError"


def _sub_task_state(sc: Scenario, d: dict[str, Any]) -> bool:
    if not _only(d, "state.tasks", "state"):
        return False
    return _strip_sub(d["lg"]["state"]) == _strip_sub(d["sg"]["state"])


def _resume_map_no_ids(sc: Scenario, d: dict[str, Any]) -> bool:
    a = _action(sc, d)
    return a.kind == "resume_map" and _before(d).get("pending") == 0


def _resume_leak(sc: Scenario, d: dict[str, Any]) -> bool:
    a = _action(sc, d)
    return a.kind == "resume" and _before(d).get("pending") == 0


def _none_result(sc: Scenario, d: dict[str, Any]) -> bool:
    return _only(d, "result") and d["lg"]["result"] is None and isinstance(d["sg"]["result"], dict)


def _bulk_order(sc: Scenario, d: dict[str, Any]) -> bool:
    if _action(sc, d).kind != "bulk" or not _only(d, "history", "state.values", "state.tasks"):
        return False
    if _strip_sub(d["lg"]["state"])["tasks"] != _strip_sub(d["sg"]["state"])["tasks"]:
        return False
    lv, sv = d["lg"]["state"]["values"], d["sg"]["state"]["values"]
    return sorted(map(repr, lv.get("log", []))) == sorted(map(repr, sv.get("log", [])))


def _replay_update(sc: Scenario, d: dict[str, Any]) -> bool:
    past = _before(d).get("past") or {}
    return (
        _action(sc, d).kind == "replay" and past.get("source") == "update" and not past.get("head")
    )


def _replay_head(sc: Scenario, d: dict[str, Any]) -> bool:
    past = _before(d).get("past") or {}
    return (
        _action(sc, d).kind == "replay"
        and past.get("source") in ("update", "fork")
        and bool(past.get("head"))
    )


def _async_exit(sc: Scenario, d: dict[str, Any]) -> bool:
    a = _action(sc, d)
    return (
        a.api == "async"
        and a.durability == "exit"
        and _only(d, "history", "state.next", "state.ntasks", "state.tasks")
    )


def _as_node_inference(sc: Scenario, d: dict[str, Any]) -> bool:
    a = _action(sc, d)
    return a.kind in ("update", "fork") and a.as_node is None


def _cmd_history(sc: Scenario, d: dict[str, Any]) -> bool:
    return _action(sc, d).kind == "cmd" and _only(d, "history")


def _cmd_lost(sc: Scenario, d: dict[str, Any]) -> bool:
    upto = sc.actions[: d["index"] + 1]
    thread = _action(sc, d).thread
    return any(a.kind == "cmd" and a.value and a.thread == thread for a in upto)


def _none_pending(sc: Scenario, d: dict[str, Any]) -> bool:
    return _action(sc, d).kind == "none" and bool(_before(d).get("pending"))


def _mixed_resume(sc: Scenario, d: dict[str, Any]) -> bool:
    return _action(sc, d).kind == "resume_map" and bool(_before(d).get("bare_resumed"))


def _join_update(sc: Scenario, d: dict[str, Any]) -> bool:
    a = _action(sc, d)
    joined = {e.targets[0] for e in sc.edges if e.kind == "join"}
    return a.kind in ("update", "fork") and a.as_node in joined


def _cmd_get_state_raises(sc: Scenario, d: dict[str, Any]) -> bool:
    thread = _action(sc, d).thread
    cmds = [a for a in sc.actions[: d["index"] + 1] if a.kind == "cmd" and a.thread == thread]
    return (
        bool(cmds) and isinstance(d["sg"].get("state"), str) and isinstance(d["lg"]["state"], dict)
    )


def _bulk_error(sc: Scenario, d: dict[str, Any]) -> bool:
    both = d["lg"].get("error") == d["sg"].get("error") == "InvalidUpdateError"
    return _action(sc, d).kind == "bulk" and both


def _map_resume_history(sc: Scenario, d: dict[str, Any]) -> bool:
    return _action(sc, d).kind == "resume_map" and _only(d, "history")


def _cmd_fresh(sc: Scenario, d: dict[str, Any]) -> bool:
    return _action(sc, d).kind == "cmd" and not _before(d).get("ran")


def _goto_in_input_step(sc: Scenario, d: dict[str, Any]) -> bool:
    a = _action(sc, d)
    return _cmd_fresh(sc, d) and a.goto is not None


def _exit_error(sc: Scenario, d: dict[str, Any]) -> bool:
    a = _action(sc, d)
    return (
        a.durability == "exit"
        and d["lg"].get("error") == d["sg"].get("error") == "InvalidUpdateError"
        and _only(d, "history", "state.values")
    )


RULES: list[Rule] = [
    (
        "c",
        "LangGraph raises UnboundLocalError (resume_is_map) on a Command without resume",
        _lg_unbound,
    ),
    (
        "a",
        "get_state(subgraphs=True): subgraph snapshot of a task missing/not a snapshot",
        _sub_task_state,
    ),
    ("a", "Command(resume={}) / map of unknown ids used as a bare answer", _resume_map_no_ids),
    (
        "a",
        "Command(resume=v) with no interrupt pending (new thread, breakpoint): routing differs",
        _resume_leak,
    ),
    ("a", "invoke returns the state instead of None when no values were emitted", _none_result),
    (
        "a",
        "bulk_update_state applies a superstep's updates sorted, not in given order",
        _bulk_order,
    ),
    ("a", "replay from a past 'update' checkpoint continues instead of forking", _replay_update),
    ("a", "replay of an update/fork head: LangGraph re-runs its tasks in place", _replay_head),
    ("c", "ainvoke + durability='exit': LangGraph saves a task of the next step", _async_exit),
    ("a", "update_state(as_node=None) infers another node than LangGraph", _as_node_inference),
    ("a", "Command(update=...) input: history keeps pre-update values of the head", _cmd_history),
    ("a", "Command(goto=X) on a never-run thread runs X in the input step", _goto_in_input_step),
    (
        "c",
        "Command(update/goto) on a fresh thread (LangGraph applies the update twice)",
        _cmd_fresh,
    ),
    ("a", "get_state raises after a Command(update=...) on the thread", _cmd_get_state_raises),
    (
        "a",
        "an earlier Command(update=...) on the thread is lost (kept as pending writes)",
        _cmd_lost,
    ),
    ("c", "invoke(None) on an interrupted thread: LangGraph reuses the last answer", _none_pending),
    ("c", "resume by id after a bare resume: LangGraph reuses an earlier answer", _mixed_resume),
    ("c", "update_state(as_node=X) for a join target X: LangGraph leaves X pending", _join_update),
    ("c", "durability='exit' + failing step: LangGraph saves half-applied writes", _exit_error),
    (
        "c",
        "after a resume by id, LangGraph's history lists a join target early",
        _map_resume_history,
    ),
    ("c", "failing bulk_update_state: LangGraph leaves a half-applied update", _bulk_error),
]


def classify(sc: Scenario, d: dict[str, Any], masked_equal: bool = False) -> tuple[str, str]:
    """``(category, cause)`` of divergence ``d`` of scenario ``sc``.

    ``masked_equal`` says the divergence vanishes once the fields known to differ
    (subgraph task snapshots, invoke's None result, Command-update history) are masked.
    """
    for category, cause, rule in RULES:
        if rule(sc, d):
            return category, cause
    if masked_equal:
        return "a", "several known field divergences at once (masked fields only)"
    return "?", "unknown"
