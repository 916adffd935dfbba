"""A worker process of the thread-lease tests (run by the tests, not collected).

``many``: run ``runs`` runs on thread ``busy`` with ``strategy`` and print one JSON line
per run: ``[message, status, result log]``.

``hold``: one run, message ``hold``, whose node ``a`` touches ``ready`` and then sleeps
``seconds``; prints ``["hold", status, detail]`` (status ``lost`` when its lease was
lost and its writes refused).
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(__file__))

from lease_helpers import State, build, open_sync_saver, run_input

from stategraph.errors import LeaseLostError, RunPreempted, ThreadBusyError
from stategraph.graph import END, START, StateGraph


def _report(*item: Any) -> None:
    print(json.dumps(list(item)), flush=True)


def many(kind: str, target: str, strategy: str, wid: str, runs: int, ttl: float, start: float):
    with open_sync_saver(kind, target) as saver:
        app = build(saver)
        config = {"configurable": {"thread_id": "busy"}, "lease_timeout": ttl}
        time.sleep(max(0.0, start - time.time()))
        for r in range(runs):
            msg = f"p{wid}r{r}"
            try:
                out = app.invoke(run_input(msg), config, multitask_strategy=strategy)
                _report(msg, "ok", out["log"])
            except ThreadBusyError:
                _report(msg, "busy", None)
            except RunPreempted:
                _report(msg, "preempted", None)
            except LeaseLostError:
                _report(msg, "lost", None)


def hold(kind: str, target: str, ready: str, seconds: float, ttl: float) -> None:
    def a(state: State) -> dict[str, Any]:
        with open(ready, "w") as f:
            f.write(str(os.getpid()))
        time.sleep(seconds)
        return {"log": [f"a:{state['inbox']}"]}

    builder = StateGraph(State)
    builder.add_node("a", a)
    builder.add_edge(START, "a")
    builder.add_edge("a", END)
    with open_sync_saver(kind, target) as saver:
        app = builder.compile(checkpointer=saver)
        config = {
            "configurable": {"thread_id": "busy"},
            "lease_timeout": ttl,
            "run_id": "holder-run",
        }
        try:
            out = app.invoke(run_input("hold"), config, durability="sync")
            _report("hold", "ok", out["log"])
        except LeaseLostError as exc:
            _report("hold", "lost", str(exc))


if __name__ == "__main__":
    mode, kind, target, *rest = sys.argv[1:]
    if mode == "many":
        strategy, wid, runs, ttl, start = rest
        many(kind, target, strategy, wid, int(runs), float(ttl), float(start))
    else:
        ready, seconds, ttl = rest
        hold(kind, target, ready, float(seconds), float(ttl))
