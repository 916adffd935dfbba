"""Run generated programs on one library and print normalized observations.

Usage: ``python tools/differential/worker.py LIB`` (LIB is ``langgraph`` or
``stategraph``), then one JSON spec per stdin line; one JSON result per stdout line.
Each program runs in several modes (invoke, ainvoke, stream of values+updates,
stream with subgraphs); each mode uses its own thread and its own :class:`Runtime`.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from emit import load
from graphs import Runtime, namespace

MODES = ("invoke", "ainvoke", "stream", "sub", "debug")
ASYNC_MODES = ("ainvoke", "astream")
_KIND = {"checkpoint": 0, "task": 1, "task_result": 2}
MAX_ROUNDS = 4


class Hang(BaseException):
    """A mode ran past its time budget."""


def _alarm(signum: int, frame: Any) -> None:
    raise Hang()


def norm(x: Any) -> Any:
    """JSON-able form of a run output, hiding ids and object identities."""
    name = type(x).__name__
    if isinstance(x, dict):
        return {str(k): norm(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [norm(v) for v in x]
    if name == "Interrupt":
        return {"__interrupt__": norm(x.value)}
    if name == "Send":
        return {"__send__": [x.node, norm(x.arg)]}
    if name == "Command":
        return {"__command__": {"update": norm(x.update), "goto": norm(x.goto)}}
    if x is None or isinstance(x, (str, int, float, bool)):
        return x
    return f"<{name}>"


def _ns_name(ns: tuple) -> list[str]:
    return [part.split(":")[0] for part in ns]


def _state(st: Any) -> dict:
    tasks = []
    for t in st.tasks:
        err = "error" if t.error is not None else None
        tasks.append([t.name, err, sorted(json.dumps(norm(i.value)) for i in t.interrupts)])
    return {
        "values": norm(st.values),
        "next": sorted(st.next),
        "tasks": sorted(tasks, key=json.dumps),
    }


def _call(graph: Any, mode: str, inp: Any, config: dict, kw: dict) -> Any:
    if mode == "invoke":
        return norm(graph.invoke(inp, config, **kw))
    if mode == "ainvoke":
        return norm(asyncio.run(graph.ainvoke(inp, config, **kw)))
    if mode == "stream":
        modes = ["values", "updates"]
        return [norm(list(ev)) for ev in graph.stream(inp, config, stream_mode=modes, **kw)]
    if mode == "astream":

        async def collect() -> list:
            modes = ["values", "updates"]
            return [
                norm(list(ev)) async for ev in graph.astream(inp, config, stream_mode=modes, **kw)
            ]

        return asyncio.run(collect())
    if mode == "debug":
        return _debug(graph.stream(inp, config, stream_mode="debug", **kw))
    out = []
    for ns, chunk in graph.stream(inp, config, stream_mode="updates", subgraphs=True, **kw):
        out.append([_ns_name(ns), norm(chunk)])
    return out


def _debug(events: Any) -> list:
    """Debug events reduced to what must match, in a timing-independent order."""
    out = []
    for ev in events:
        p, kind = ev["payload"], ev["type"]
        if kind == "checkpoint":
            tasks = sorted(t["name"] for t in p.get("tasks", ()))
            item = [p["metadata"].get("source"), sorted(p["next"]), norm(p["values"]), tasks]
        elif kind == "task":
            item = [p["name"], sorted(p["triggers"]), norm(p["input"])]
        else:
            intr = sorted(json.dumps(norm(_ivalue(i))) for i in p.get("interrupts", ()))
            item = [p["name"], p["error"] is not None, norm(p["result"]), intr]
        out.append([ev["step"], _KIND.get(kind, 9), kind, item])
    return sorted(out, key=json.dumps)


def _ivalue(i: Any) -> Any:
    return i["value"] if isinstance(i, dict) else i.value


def _input(ns: Any, inp: Any) -> Any:
    if isinstance(inp, dict) and "__command__" in inp:
        c = inp["__command__"]
        return ns.Command(goto=_goto(ns, c["goto"]), update=c["update"])
    return inp


def _goto(ns: Any, opt: Any) -> Any:
    if isinstance(opt, list):
        return [_goto(ns, o) for o in opt]
    if isinstance(opt, dict):
        return ns.Send(opt["send"], opt["arg"])
    return opt


def _kind(inp: Any) -> str:
    """What a call was fed: dict, none, resume1 (single value), resumeN (map), command."""
    if inp is None:
        return "none"
    if type(inp).__name__ == "Command":
        if inp.resume is None:
            return "command"
        return "resumeN" if isinstance(inp.resume, dict) else "resume1"
    return "dict"


def _next_input(ns: Any, st: Any, single: bool) -> Any:
    intr = [i for t in st.tasks for i in t.interrupts]
    if single and len(intr) == 1:
        return ns.Command(resume=f"ans:{intr[0].value['q']}")
    if intr:
        return ns.Command(resume={i.id: f"ans:{i.value['q']}" for i in intr})
    return None


def run_mode(spec: dict, ns: Any, mode: str) -> dict:
    """Run every input of ``spec`` (and its resumes) on a fresh graph in ``mode``."""
    rt = Runtime()
    graph = load(spec)(ns, rt)
    config: dict[str, Any] = {}
    cp = spec["checkpointer"]
    if cp:
        config["configurable"] = {"thread_id": f"t-{mode}"}
    if spec["recursion_limit"] is not None:
        config["recursion_limit"] = spec["recursion_limit"]
    kw = {"durability": spec["durability"]} if spec.get("durability") else {}
    update = spec.get("update")
    steps: list[Any] = []
    marks: list[list[Any]] = []  # [input index, round, what was fed] of each step
    for k, inp in enumerate(spec["inputs"]):
        cur = _input(ns, inp)
        for rnd in range(MAX_ROUNDS):
            if update is not None and rnd == 1:
                try:
                    graph.update_state(config, update["values"], as_node=update["as_node"])
                    st = graph.get_state(config)
                    steps.append({"updated": _state(st)})
                    cur = _next_input(ns, st, spec.get("resume_single", False))
                except Exception as exc:
                    steps.append({"update_error": type(exc).__name__})
                marks.append([k, rnd, "update"])
                update = None
            fed = _kind(cur)
            try:
                steps.append({"out": _call(graph, mode, cur, config, kw)})
            except Hang:
                raise
            except Exception as exc:
                steps.append({"error": type(exc).__name__})
            marks.append([k, rnd, fed])
            if not cp:
                break
            try:
                st = graph.get_state(config)
            except Exception as exc:
                steps.append({"state_error": type(exc).__name__})
                marks.append([k, rnd, fed])
                break
            steps.append({"state": _state(st)})
            marks.append([k, rnd, fed])
            if not st.next:
                break
            cur = _next_input(ns, st, spec.get("resume_single", False))
    return {"steps": steps, "marks": marks, "hits": dict(sorted(rt.hits.items()))}


def run_spec(spec: dict, ns: Any, timeout: float = 20.0) -> dict:
    """All modes of one program; a build failure is reported once."""
    result: dict[str, Any] = {"build_error": None, "modes": {}}
    try:
        load(spec)(ns, Runtime())
    except Exception as exc:
        result["build_error"] = f"{type(exc).__name__}"
        return result
    has_sub = any(n["kind"] == "sub" for n in spec["nodes"])
    has_async = any(n.get("async") for n in spec["nodes"])
    for mode in ASYNC_MODES if has_async else MODES:
        if mode == "sub" and not has_sub:
            continue
        signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            result["modes"][mode] = run_mode(spec, ns, mode)
        except Hang:
            result["modes"][mode] = {"hang": True}
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    return result


def main() -> None:
    """Serve specs from stdin."""
    lib = sys.argv[1]
    ns = namespace(lib)
    signal.signal(signal.SIGALRM, _alarm)
    warnings.simplefilter("ignore")
    for line in sys.stdin:
        spec = json.loads(line)
        try:
            res = run_spec(spec, ns)
        except Exception as exc:  # a crash of the harness itself
            res = {"harness_error": repr(exc)}
        sys.stdout.write(json.dumps(res) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
