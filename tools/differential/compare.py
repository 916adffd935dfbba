"""Compare the observations of one program on LangGraph and on stategraph.

Values are compared twice: with every list sorted (a *value* difference) and exactly
(an *order* difference: same multisets, different order). Known, already classified
differences are masked (see ``MASKS``) so new ones stand out; ``run.py --raw`` turns
the masks off.
"""

from __future__ import annotations

import json
import re
from typing import Any

# Known differences, masked by default (name -> classification, see README.md).
MASKS = {
    # (c) durability="exit" and a failed run: LangGraph saves the channels
    # half-updated after an InvalidUpdateError (stategraph: the values before the
    # step) and drops the writes of a subgraph's Command(graph=PARENT) (stategraph
    # keeps them). Stop comparing after the first error under durability="exit".
    "exit_after_error": "c",
    # (c) stream_mode="values": LangGraph emits the interrupt with the values from
    # before the step, then the values after it; stategraph emits one chunk.
    "stream_interrupt_values": "c",
    # (c) a single-value Command(resume=v) is kept by LangGraph and handed to the next
    # interrupt (of any task) when the thread is later continued with input None.
    "stale_resume_on_none": "c",
    # (c) under ainvoke, LangGraph cancels the siblings of a failing task and drops
    # their writes (under invoke it keeps them); stategraph lets them finish in both.
    # Stop comparing an ainvoke run after its first error (and ignore its counts).
    "async_failure_siblings": "c",
    # (c) the "__interrupt__" list of invoke()'s output is in completion order in
    # LangGraph (timing), in task order in stategraph: compare it sorted.
    "interrupt_order": "c",
    # (c) several failing tasks in one step: LangGraph raises the first to fail (timing),
    # stategraph the first in task order. Both raise one of them.
    "which_error": "c",
    # (c) a Command(update=..., goto=...) input on a fresh thread: LangGraph applies
    # the update twice (once in the input checkpoint). Collapse repeated "cmd-in" trace
    # entries and ignore the input checkpoint of such a run in the debug stream.
    "command_input_twice": "c",
    # (c) invoke() returns None in LangGraph when the run emitted no values at all.
    "none_output": "c",
}

# (a) differences found by this fuzzer and fixed in stategraph (commit e02e4f6, regression
# tests in tests/differential). Not masked: the fuzzer reports them if they come back;
# ``run.py --mask-fixed`` masks them too (to fuzz an older revision).
FIXED = {
    # (a) a resumed run (input None / Command(resume=...) / Command(goto=...) on an
    # existing thread) got one superstep less before GraphRecursionError than in
    # LangGraph: stop comparing at that error.
    "resume_recursion": "a",
    # (a) a new input on a thread whose last run stopped early (interrupt or error)
    # ran the deferred nodes that were waiting: skip later inputs when the
    # program has deferred nodes.
    "defer_new_input": "a",
    # (a) same root cause, seen through RemainingSteps: a resumed run sees one more
    # remaining step in LangGraph. Trace entries carry "#<remaining>": strip the
    # number from the first resumed round on.
    "resume_remaining_steps": "a",
    # (a) stream_mode "debug"/"tasks": LangGraph emits a task result for a task that
    # interrupted (result {}, interrupts=[...]); stategraph emits none.
    "debug_interrupted_result": "a",
    # (a) stream_mode "debug"/"checkpoints": a resumed run (None / Command input)
    # first re-emits the checkpoint it resumes from in LangGraph; not in stategraph.
    "debug_resume_checkpoint": "a",
    # (a) stream_mode "debug"/"tasks", first step of a resumed run: LangGraph emits a
    # start event for every task of the step, also those whose writes were saved
    # before (not re-run), and results only for re-run ones; stategraph emits starts
    # only for re-run tasks and results (replayed) for the saved ones.
    "debug_resumed_tasks": "a",
}


TASK_ERRORS = {"Flaky", "ValueError", "InvalidUpdateError", "GraphRecursionError"}


def _key(x: Any) -> str:
    return json.dumps(x, sort_keys=True)


def canon(x: Any, sort: bool) -> Any:
    """Sort every list (``sort``) so only multisets are compared."""
    if isinstance(x, dict):
        return {k: canon(v, sort) for k, v in x.items()}
    if isinstance(x, list):
        items = [canon(v, sort) for v in x]
        return sorted(items, key=_key) if sort else items
    return x


def _stream_exact(events: list, masks: set[str]) -> list:
    """Canonical order of a stream: chunks of one step arrive in completion order.

    The stream is cut after every ``values`` chunk that carries no interrupt (a step
    boundary); the chunks of each segment are sorted.
    """
    if "stream_interrupt_values" in masks:
        last_values = max((i for i, ev in enumerate(events) if ev[0] == "values"), default=-1)
        kept: list = []
        tail: list = []
        for i, (mode, chunk) in enumerate(events):
            if mode == "values" and isinstance(chunk, dict) and "__interrupt__" in chunk:
                if i == last_values:
                    # only updates of the same step can follow it: move it last
                    tail = [[mode, {k: v for k, v in chunk.items() if k != "__interrupt__"}]]
                continue
            kept.append([mode, chunk])
        events = kept + tail
    out: list = []
    seg: list = []
    for ev in events:
        seg.append(ev)
        if ev[0] == "values" and not (isinstance(ev[1], dict) and "__interrupt__" in ev[1]):
            out.extend(sorted(seg, key=_key))
            seg = []
    return out + sorted(seg, key=_key)


def _collapse_cmd_in(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _collapse_cmd_in(v) for k, v in x.items()}
    if isinstance(x, list):
        out = [_collapse_cmd_in(v) for v in x]
        return [
            v for i, v in enumerate(out) if not (v == "cmd-in" and i and out[i - 1] == "cmd-in")
        ]
    return x


def _strip_remaining(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _strip_remaining(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_strip_remaining(v) for v in x]
    if isinstance(x, str) and "#" in x:
        return re.sub(r"#\d+", "#", x)
    return x


def _strip_rs(x: Any) -> Any:
    x = _strip_remaining(x)
    if isinstance(x, dict):
        return {k: (None if k == "rs" else _strip_rs(v)) for k, v in x.items()}
    if isinstance(x, list):
        return [_strip_rs(v) for v in x]
    return x


def _debug_view(events: list, resuming: bool, masks: set[str], first_command: bool) -> list:
    if first_command and "command_input_twice" in masks:
        # LangGraph's input checkpoint already holds the (doubly applied) update
        events = [e for e in events if not (e[2] == "checkpoint" and e[0] == -1)]
    if "debug_interrupted_result" in masks:
        events = [e for e in events if not (e[2] == "task_result" and e[3][3])]
    first = min((e[0] for e in events if e[2] in ("task", "task_result")), default=None)
    if resuming and "debug_resume_checkpoint" in masks:
        events = [
            e for e in events if not (e[2] == "checkpoint" and (first is None or e[0] < first))
        ]
    if resuming and "debug_resumed_tasks" in masks and first is not None:
        events = [e for e in events if not (e[2] in ("task", "task_result") and e[0] == first)]
    return events


def _mode_view(mode: str, res: dict, masks: set[str], spec: dict | None = None) -> dict:
    if "steps" not in res:
        return res
    steps = []
    resumed = False
    for i, step in enumerate(res["steps"]):
        marks = res.get("marks", [])
        mark = marks[i][:2] if i < len(marks) else [0, 0]
        fed = spec["inputs"][mark[0]] if spec is not None else {}
        resuming = mark[1] > 0 or fed is None or (isinstance(fed, dict) and "__command__" in fed)
        resumed = resumed or resuming
        if "out" in step and mode == "debug":
            first_command = mark[0] == 0 and isinstance(fed, dict) and "__command__" in fed
            step = {"out": _debug_view(step["out"], resuming, masks, first_command)}
        if resumed and "resume_remaining_steps" in masks:
            step = _strip_rs(step)
        if "interrupt_order" in masks:
            step = _sort_interrupts(step)
        if "command_input_twice" in masks:
            step = _collapse_cmd_in(step)
        if "out" in step and mode in ("stream", "astream"):
            step = {"out": _stream_exact(step["out"], masks)}
        elif "out" in step and mode == "sub":
            step = {"out": sorted(step["out"], key=_key)}
        steps.append(step)
    return {"steps": steps, "marks": res.get("marks", []), "hits": res["hits"], "mode": mode}


def _masked_stop(spec: dict | None, a: dict, b: dict, i: int, masks: set[str]) -> bool:
    """Whether comparison of this mode must stop at step ``i`` (a known difference)."""
    marks = a["marks"] if i < len(a["marks"]) else b["marks"]
    if i >= len(marks):
        return False
    inp, rnd = marks[i][:2]
    x = a["steps"][i] if i < len(a["steps"]) else {}
    y = b["steps"][i] if i < len(b["steps"]) else {}
    fed = spec["inputs"][inp] if spec is not None else {}
    resuming = rnd > 0 or fed is None or (isinstance(fed, dict) and "__command__" in fed)
    if "resume_recursion" in masks and resuming:
        if "GraphRecursionError" in (x.get("error"), y.get("error")):
            return True
    if "async_failure_siblings" in masks and a.get("mode") in ("ainvoke", "astream"):
        before = a["steps"][:i] + b["steps"][:i]
        if any(isinstance(s, dict) and s.get("error") is not None for s in before):
            return True
    if "exit_after_error" in masks and spec is not None and spec.get("durability") == "exit":
        before = a["steps"][:i] + b["steps"][:i]
        if any(isinstance(s, dict) and s.get("error") is not None for s in before):
            return True
    if "stale_resume_on_none" in masks and marks[i][2:] == ["none"]:
        if any(m[2:] == ["resume1"] for m in marks[:i]):
            return True
    if "defer_new_input" in masks and inp > 0 and spec is not None:
        if any(n["defer"] for n in spec["nodes"]):
            return True
    return False


def _sort_interrupts(x: Any) -> Any:
    if isinstance(x, dict):
        out = {k: _sort_interrupts(v) for k, v in x.items()}
        if isinstance(out.get("__interrupt__"), list):
            out["__interrupt__"] = sorted(out["__interrupt__"], key=_key)
        return out
    if isinstance(x, list):
        return [_sort_interrupts(v) for v in x]
    return x


def _same_output(mode: str, x: Any, y: Any, masks: set[str]) -> bool:
    if canon(x, True) == canon(y, True):
        return True
    if "which_error" in masks and isinstance(x, dict) and isinstance(y, dict):
        pair = {x.get("error"), y.get("error")}
        if len(pair) == 2 and pair <= TASK_ERRORS:
            return True
    if "none_output" in masks and mode in ("invoke", "ainvoke"):
        return isinstance(x, dict) and x.get("out", 0) is None and "out" in (y or {})
    return False


def compare(
    lg: dict, sg: dict, spec: dict | None = None, masks: set[str] | None = None
) -> list[dict]:
    """Differences between two worker results, most informative first."""
    masks = set(MASKS) if masks is None else masks
    if "harness_error" in lg or "harness_error" in sg:
        return [{"where": "harness", "kind": "value", "lg": lg, "sg": sg}]
    if "Explode" in json.dumps(lg) or "Explode" in json.dumps(sg):
        # a runaway program stopped by the guard: not comparable
        return []
    if lg["build_error"] != sg["build_error"]:
        return [
            {"where": "build", "kind": "value", "lg": lg["build_error"], "sg": sg["build_error"]}
        ]
    diffs: list[dict[str, Any]] = []
    for mode, lres in lg["modes"].items():
        a = _mode_view(mode, lres, masks, spec)
        b = _mode_view(mode, sg["modes"].get(mode, {}), masks, spec)
        if "steps" not in a or "steps" not in b:
            if a != b:
                diffs.append({"where": f"{mode}.hang", "kind": "value", "lg": a, "sg": b})
            continue
        stopped = False
        for i in range(max(len(a["steps"]), len(b["steps"]))):
            if _masked_stop(spec, a, b, i, masks):
                stopped = True
                break
            x = a["steps"][i] if i < len(a["steps"]) else None
            y = b["steps"][i] if i < len(b["steps"]) else None
            if not _same_output(mode, x, y, masks):
                field = next(iter((x or y or {"missing": 0}).keys()))
                diffs.append({"where": f"{mode}.{i}.{field}", "kind": "value", "lg": x, "sg": y})
                stopped = True
                break
            if x != y and canon(x, True) == canon(y, True):
                diffs.append({"where": f"{mode}.{i}", "kind": "order", "lg": x, "sg": y})
                stopped = True
                break
        async_error = a.get("mode") in ("ainvoke", "astream") and "async_failure_siblings" in masks
        async_error = async_error and '"error"' in json.dumps([a["steps"], b["steps"]])
        if a["hits"] != b["hits"] and not stopped and not async_error:
            diffs.append(
                {"where": f"{mode}.hits", "kind": "value", "lg": a["hits"], "sg": b["hits"]}
            )
    return diffs


def signature(diff: dict) -> tuple:
    """What kind of difference this is (used to keep shrinking on the same problem)."""
    where = diff["where"].split(".")
    field = where[-1] if not where[-1].isdigit() else "step"

    def errs(x: Any) -> Any:
        return x.get("error") if isinstance(x, dict) else None

    return (where[0], field, diff["kind"], errs(diff["lg"]), errs(diff["sg"]))
