"""Stress harness: runs abandoned part-way must never make a later run hang.

Each worker process loops for ``--seconds``: it starts a run of a randomly chosen graph
(a chain, a fan-out, a subgraph that fans out inside, a ``Send`` map-reduce, a graph with
a ``step_timeout`` whose slow node sometimes exceeds it), in a randomly chosen way
(``stream`` in one or several modes, ``stream_events(version="v3")``,
``astream_events`` v2 or ``astream`` pulled through an event loop), reads a random number of its items, then drops it:
by ``close()``, by deleting the last reference, or by leaving it in a reference cycle
for the garbage collector (collected automatically with low thresholds, by a forced
``gc.collect()`` on this thread, or on another thread). After each abandoned run a
*probe* run (a random graph, sometimes on a new thread, sometimes in a forked child)
must finish with the right result. A probe that does not finish within
``--probe-timeout`` seconds is a hang: the worker dumps every thread's stack and exits
with status 3.

Usage::

    python tools/stress_abandon.py [--seconds 60] [--processes 2] [--seed N] [--probe-timeout 30]

It prints one JSON line per worker (runs, abandoned, probes, forks, slowest probe,
errors by type) and a total; the exit status is 0 only when no worker hung or failed.
Uses the public API only.
"""

from __future__ import annotations

import argparse
import asyncio
import faulthandler
import gc
import json
import operator
import os
import random
import sys
import threading
import time
from collections import Counter
from typing import Annotated, Any

from typing_extensions import TypedDict

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.config import get_stream_writer
from stategraph.graph import END, START, StateGraph
from stategraph.types import Send


class State(TypedDict):
    x: int
    seen: Annotated[list[str], operator.add]


class Item(TypedDict):
    x: int
    seen: Annotated[list[str], operator.add]


def _writer_node(name: str, delay: float = 0.0) -> Any:
    def node(state: State) -> dict[str, Any]:
        get_stream_writer()({"node": name})
        if delay:
            time.sleep(delay)
        return {"seen": [name]}

    node.__name__ = name
    return node


def chain(saver: Any) -> Any:
    b = StateGraph(State)
    names = ["a", "b", "c"]
    for n in names:
        b.add_node(n, _writer_node(n))
    b.add_edge(START, "a")
    b.add_edge("a", "b")
    b.add_edge("b", "c")
    b.add_edge("c", END)
    return b.compile(checkpointer=saver)


def fanout(saver: Any, delay: float = 0.0) -> Any:
    b = StateGraph(State)
    for n in ("p", "q", "r"):
        b.add_node(n, _writer_node(n, delay))
        b.add_edge(START, n)
    b.add_node("join", _writer_node("join"))
    b.add_edge(["p", "q", "r"], "join")
    b.add_edge("join", END)
    return b.compile(checkpointer=saver)


def nested(saver: Any) -> Any:
    inner = fanout(None)
    b = StateGraph(State)
    b.add_node("before", _writer_node("before"))
    b.add_node("inner", inner)
    b.add_node("side", _writer_node("side"))
    b.add_edge(START, "before")
    b.add_edge("before", "inner")
    b.add_edge("before", "side")
    b.add_edge(["inner", "side"], END)
    return b.compile(checkpointer=saver)


def map_reduce(saver: Any) -> Any:
    def fan(state: State) -> list[Send]:
        return [Send("work", {"x": i, "seen": []}) for i in range(4)]

    def work(item: Item) -> dict[str, Any]:
        return {"seen": [f"w{item['x']}"]}

    b = StateGraph(State)
    b.add_node("work", work)
    b.add_conditional_edges(START, fan, ["work"])
    b.add_edge("work", END)
    return b.compile(checkpointer=saver)


def timed(saver: Any, rng: random.Random) -> Any:
    graph = fanout(saver, delay=rng.choice([0.0, 0.0, 0.05]))
    graph.step_timeout = 0.02
    return graph


EXPECTED = {
    "chain": ["a", "b", "c"],
    "fanout": ["join", "p", "q", "r"],
    # the subgraph returns its whole state, "before" included: operator.add keeps both
    "nested": ["before", "before", "join", "p", "q", "r", "side"],
    "map_reduce": ["w0", "w1", "w2", "w3"],
}


def build(kind: str, rng: random.Random) -> Any:
    saver = InMemorySaver() if rng.random() < 0.7 else None
    if kind == "timed":
        return timed(saver, rng)
    return {"chain": chain, "fanout": fanout, "nested": nested, "map_reduce": map_reduce}[kind](
        saver
    )


def config(rng: random.Random) -> dict[str, Any]:
    return {"configurable": {"thread_id": f"t{rng.randrange(10**9)}"}}


def start_run(graph: Any, how: str, rng: random.Random) -> Any:
    """An iterator over a run's items, started in the way ``how`` names."""
    cfg = config(rng)
    inp = {"x": 1, "seen": []}
    if how == "stream":
        modes = rng.choice(["values", "updates", "custom", ["updates", "custom", "values"]])
        return iter(graph.stream(inp, cfg, stream_mode=modes, subgraphs=rng.random() < 0.5))
    if how == "v3":
        return iter(graph.stream_events(inp, cfg, version="v3").values)
    if how == "v2":
        return _async_items(graph.astream_events(inp, cfg, version="v2"))
    return _async_items(graph.astream(inp, cfg, stream_mode="updates"))


def _async_items(aiterable: Any) -> Any:
    """A sync iterator over an async one (each item pulled through a private loop)."""
    loop = asyncio.new_event_loop()
    agen = aiterable.__aiter__()
    pid = os.getpid()
    try:
        while True:
            try:
                yield loop.run_until_complete(agen.__anext__())
            except StopAsyncIteration:
                return
    finally:
        # an event loop cannot be used across a fork: a copy collected in a forked
        # child is left alone (its run belongs to the parent)
        if os.getpid() == pid:
            try:
                loop.run_until_complete(asyncio.wait_for(agen.aclose(), 10))
            except asyncio.TimeoutError:
                for task in asyncio.all_tasks(loop):
                    task.print_stack(file=sys.stderr)
                raise
            loop.close()


def probe(rng: random.Random) -> None:
    kind = rng.choice(list(EXPECTED))
    graph = build(kind, rng)
    how = rng.choice(["invoke", "invoke", "v3_interrupt", "stream"])
    cfg = config(rng)
    if how == "v3_interrupt" and graph.checkpointer is not None and kind == "chain":
        values = list(
            graph.stream_events(
                {"x": 1, "seen": []}, cfg, version="v3", interrupt_before=["c"]
            ).values
        )
        assert values[-1]["seen"] == ["a", "b"], values
        return
    if how == "stream":
        chunks = list(graph.stream({"x": 1, "seen": []}, cfg, stream_mode="values"))
        out = chunks[-1] if chunks else None
    else:
        out = graph.invoke({"x": 1, "seen": []}, cfg)
    assert out is not None and sorted(out["seen"]) == EXPECTED[kind], (kind, out)


def _wait_child(pid: int, timeout: float) -> int | None:
    """The child's wait status, or None after ``timeout`` seconds: then the child is
    sent SIGABRT (``faulthandler``, inherited, prints its threads' stacks) and reaped."""
    import signal

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        time.sleep(0.01)
    os.kill(pid, signal.SIGABRT)
    os.waitpid(pid, 0)
    return None


class Worker:
    def __init__(self, seed: int, seconds: float, probe_timeout: float) -> None:
        self.rng = random.Random(seed)
        self.seconds = seconds
        self.probe_timeout = probe_timeout
        self.stats: Counter[str] = Counter()
        self.errors: Counter[str] = Counter()
        self.slowest = 0.0
        self.kept: list[Any] = []

    def abandon_one(self) -> None:
        rng = self.rng
        kind = rng.choice(["chain", "fanout", "nested", "map_reduce", "timed"])
        graph = build(kind, rng)
        how = rng.choice(["stream", "v3", "v2", "astream"])
        items = start_run(graph, how, rng)
        try:
            for _ in range(rng.randrange(0, 4)):
                next(items)
        except StopIteration:
            pass
        except TimeoutError:
            self.stats["step_timeouts"] += 1
        except Exception as exc:  # a run may fail by design (step_timeout); count it
            self.errors[type(exc).__name__] += 1
        self.stats["abandoned"] += 1
        drop = rng.choice(["close", "del", "cycle", "cycle"])
        if os.environ.get("STRESS_TRACE"):
            print(kind, how, drop, graph.checkpointer is not None, file=sys.stderr, flush=True)
        if drop == "close":
            try:
                items.close()
            except Exception as exc:
                self.errors["close:" + type(exc).__name__] += 1
        elif drop == "cycle":
            holder: list[Any] = [items, graph]
            holder.append(holder)
        del items
        collect = rng.choice(["auto", "now", "thread", "later"])
        if collect == "now":
            gc.collect()
        elif collect == "thread":
            t = threading.Thread(target=gc.collect)
            t.start()
            t.join()

    def run_probe(self) -> None:
        rng = self.rng
        where = rng.choice(["here", "here", "thread", "fork"])
        faulthandler.dump_traceback_later(self.probe_timeout, exit=True)
        started = time.monotonic()
        try:
            if where == "thread":
                box: list[BaseException] = []
                seed = rng.randrange(10**9)

                def target() -> None:
                    try:
                        probe(random.Random(seed))
                    except BaseException as exc:
                        box.append(exc)

                t = threading.Thread(target=target)
                t.start()
                t.join()
                if box:
                    raise box[0]
            elif where == "fork" and hasattr(os, "fork"):
                self.stats["forks"] += 1
                seed = rng.randrange(10**9)
                pid = os.fork()
                if pid == 0:  # the child: a probe on pools inherited from the parent
                    code = 0
                    try:
                        probe(random.Random(seed))
                    except BaseException:
                        import traceback

                        traceback.print_exc()
                        code = 4
                    os._exit(code)
                status = _wait_child(pid, self.probe_timeout / 2)
                if status is None:
                    raise RuntimeError("forked probe hung (its stacks are above)")
                if os.waitstatus_to_exitcode(status) != 0:
                    raise RuntimeError(f"forked probe failed: {status}")
            else:
                probe(rng)
        finally:
            faulthandler.cancel_dump_traceback_later()
        self.slowest = max(self.slowest, time.monotonic() - started)
        self.stats["probes"] += 1

    def run(self) -> dict[str, Any]:
        faulthandler.enable()
        gc.set_threshold(50, 5, 5)
        end = time.monotonic() + self.seconds
        while time.monotonic() < end:
            # abandoning a run must not block either
            faulthandler.dump_traceback_later(self.probe_timeout, exit=True)
            self.abandon_one()
            faulthandler.cancel_dump_traceback_later()
            self.stats["runs"] += 1
            self.run_probe()
        gc.collect()
        return {
            "pid": os.getpid(),
            **self.stats,
            "slowest_probe_s": round(self.slowest, 3),
            "errors": dict(self.errors),
        }


def _worker_main(seed: int, seconds: float, probe_timeout: float) -> None:
    import warnings

    warnings.simplefilter("ignore")
    result = Worker(seed, seconds, probe_timeout).run()
    print(json.dumps(result), flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--probe-timeout", type=float, default=30.0)
    parser.add_argument("--worker", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker is not None:
        _worker_main(args.worker, args.seconds, args.probe_timeout)
        return 0
    import subprocess
    import tempfile

    seed = args.seed if args.seed is not None else random.randrange(10**6)
    # each worker's stderr goes to a file: a pipe nobody reads while the harness waits
    # for another worker would fill up and block the writer
    logs = [tempfile.TemporaryFile(mode="w+") for _ in range(args.processes)]
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                __file__,
                "--worker",
                str(seed + i),
                "--seconds",
                str(args.seconds),
                "--probe-timeout",
                str(args.probe_timeout),
            ],
            stdout=subprocess.PIPE,
            stderr=logs[i],
            text=True,
        )
        for i in range(args.processes)
    ]
    total: Counter[str] = Counter()
    failed = 0
    for i, proc in enumerate(procs):
        out, _ = proc.communicate(timeout=args.seconds + 10 * args.probe_timeout + 60)
        logs[i].seek(0)
        err = logs[i].read()
        logs[i].close()
        if proc.returncode != 0:
            failed += 1
            kind = "hang" if "Timeout (" in err else "failure"
            print(json.dumps({"worker": i, "seed": seed + i, kind: proc.returncode}))
            sys.stderr.write(err[-8000:])
            total["hangs" if kind == "hang" else "failures"] += 1
            continue
        line = out.strip().splitlines()[-1]
        print(line)
        for key, value in json.loads(line).items():
            if isinstance(value, int) and key != "pid":
                total[key] += value
    total.setdefault("hangs", 0)
    print(json.dumps({"seed": seed, "processes": args.processes, "seconds": args.seconds, **total}))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
