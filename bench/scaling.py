"""CPU per super-step against the graph's size, the state's width and the run's length.

    python -m bench.scaling --lib stategraph [--json OUT]

The three curves of ``../shared/langgraph-bench/scaling.py``, on one library:

* ``chain``: a chain of N no-op nodes over ``MessagesState`` (N = 10 .. 10,000), the
  first ``min(N, 200)`` steps (the recursion limit stops longer chains);
* ``keys``: a TypedDict of K last-value keys (K = 10, 100, 1,000), a chain of 10 nodes
  each writing one key;
* ``history``: one node looping S times (S = 10, 100, 1,000) over an ``operator.add``
  list, which grows by one element a step;
* ``async_chain`` (only with ``--async-chain N,...``): the ``chain`` curve with
  ``async def`` no-op nodes, run with ``await graph.ainvoke(...)`` on one event loop
  (the async shell's cost per step; no stream consumer).

Each figure is the best of 5 samples of CPU time (``process_time``) divided by the steps.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import importlib
import json
import operator
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Annotated, Any, TypedDict

__all__ = [
    "ASYNC_CHAIN_SIZES",
    "CHAIN_SIZES",
    "HISTORY_SIZES",
    "KEY_SIZES",
    "best_cpu",
    "main",
    "measure",
]

CHAIN_SIZES = (10, 100, 1000, 10000)
KEY_SIZES = (10, 100, 1000)
HISTORY_SIZES = (10, 100, 1000)
CHAIN_STEPS = 200
ASYNC_CHAIN_SIZES = (10, 1000)
"""The sizes ``--async-chain`` takes when given without a value."""


def best_cpu(fn: Callable[[], Any], reps: int = 5, min_time: float = 0.2) -> float:
    """Best CPU seconds per call of ``fn`` over ``reps`` samples of ``min_time / reps`` s."""
    fn()
    best = float("inf")
    for _ in range(reps):
        n = 0
        c0 = time.process_time()
        while True:
            fn()
            n += 1
            if time.process_time() - c0 > min_time / reps:
                break
        best = min(best, (time.process_time() - c0) / n)
    return best


def _run(graph: Any, data: Any, limit: int) -> None:
    cfg = {"recursion_limit": limit, "configurable": {"thread_id": uuid.uuid4().hex}}
    try:
        for _ in graph.stream(data, cfg):
            pass
    except Exception as exc:
        if "Recursion" not in type(exc).__name__:
            raise


def _arun(loop: asyncio.AbstractEventLoop, graph: Any, data: Any, limit: int) -> None:
    cfg = {"recursion_limit": limit, "configurable": {"thread_id": uuid.uuid4().hex}}
    try:
        loop.run_until_complete(graph.ainvoke(data, cfg))
    except Exception as exc:
        if "Recursion" not in type(exc).__name__:
            raise


def _noop(_state: Any) -> None:
    return None


async def _anoop(_state: Any) -> None:
    return None


def _chain(g: Any, n: int, node: Callable[[Any], Any] = _noop) -> Any:
    builder = g.StateGraph(g.MessagesState)
    prev = g.START
    for i in range(n):
        builder.add_node(f"n{i}", node)
        builder.add_edge(prev, f"n{i}")
        prev = f"n{i}"
    builder.add_edge(prev, g.END)
    return builder.compile()


def _writer(i: int) -> Callable[[Any], dict[str, int]]:
    return lambda _state: {f"k{i}": i}


def _keys(g: Any, k: int) -> Any:
    schema = TypedDict("S", {f"k{i}": int for i in range(k)})  # type: ignore[misc]
    builder = g.StateGraph(schema)
    prev = g.START
    for i in range(10):
        builder.add_node(f"n{i}", _writer(i))
        builder.add_edge(prev, f"n{i}")
        prev = f"n{i}"
    builder.add_edge(prev, g.END)
    return builder.compile()


class _History(TypedDict):
    items: Annotated[list, operator.add]


def _history(g: Any, s: int) -> Any:
    builder = g.StateGraph(_History)
    builder.add_node("a", lambda _state: {"items": [1]})
    builder.add_edge(g.START, "a")
    builder.add_conditional_edges("a", lambda state: g.END if len(state["items"]) >= s else "a")
    return builder.compile()


def measure(
    lib: str,
    chain: Sequence[int] = CHAIN_SIZES,
    keys: Sequence[int] = KEY_SIZES,
    history: Sequence[int] = HISTORY_SIZES,
    min_time: float = 0.2,
    log: Callable[[str], None] = lambda _msg: None,
    async_chain: Sequence[int] = (),
) -> dict[str, dict[str, float]]:
    """Microseconds of CPU per step: ``{"chain": {N: us}, "keys": {K: us}, "history": ...}``.

    With ``async_chain`` sizes, also ``"async_chain": {N: us}`` (``ainvoke`` on a chain
    of async no-op nodes).
    """
    g = importlib.import_module(f"{lib}.graph")
    out: dict[str, dict[str, float]] = {"chain": {}, "keys": {}, "history": {}}
    for n in chain:
        graph = _chain(g, n)
        steps = min(n, CHAIN_STEPS)
        limit = steps if n > CHAIN_STEPS else 10**9
        cpu = best_cpu(functools.partial(_run, graph, {"messages": []}, limit), min_time=min_time)
        out["chain"][str(n)] = cpu / steps * 1e6
        log(f"{lib} chain N={n}: {out['chain'][str(n)]:.2f} us/step")
    for k in keys:
        graph = _keys(g, k)
        cpu = best_cpu(functools.partial(_run, graph, {"k0": 0}, 10**9), min_time=min_time)
        out["keys"][str(k)] = cpu / 10 * 1e6
        log(f"{lib} keys K={k}: {out['keys'][str(k)]:.2f} us/step")
    for s in history:
        graph = _history(g, s)
        cpu = best_cpu(functools.partial(_run, graph, {"items": []}, 10**9), min_time=min_time)
        out["history"][str(s)] = cpu / s * 1e6
        log(f"{lib} history S={s}: {out['history'][str(s)]:.2f} us/step")
    if async_chain:
        out["async_chain"] = {}
        loop = asyncio.new_event_loop()
        try:
            for n in async_chain:
                graph = _chain(g, n, _anoop)
                steps = min(n, CHAIN_STEPS)
                limit = steps if n > CHAIN_STEPS else 10**9
                run = functools.partial(_arun, loop, graph, {"messages": []}, limit)
                out["async_chain"][str(n)] = best_cpu(run, min_time=min_time) / steps * 1e6
                log(f"{lib} async chain N={n}: {out['async_chain'][str(n)]:.2f} us/step")
        finally:
            loop.close()
    return out


def _sizes(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x]


def main(argv: Sequence[str] | None = None) -> int:
    """Print the three curves of one library; write them as JSON if asked."""
    parser = argparse.ArgumentParser(prog="python -m bench.scaling", description=__doc__)
    parser.add_argument("--lib", default="stategraph")
    parser.add_argument("--chain", default=",".join(map(str, CHAIN_SIZES)))
    parser.add_argument("--keys", default=",".join(map(str, KEY_SIZES)))
    parser.add_argument("--history", default=",".join(map(str, HISTORY_SIZES)))
    parser.add_argument(
        "--async-chain",
        nargs="?",
        const=",".join(map(str, ASYNC_CHAIN_SIZES)),
        default="",
        help="also the chain curve with async nodes under ainvoke (sizes; default 10,1000)",
    )
    parser.add_argument("--min-time", type=float, default=0.2, help="seconds per figure")
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args(argv)
    result = measure(
        args.lib,
        _sizes(args.chain),
        _sizes(args.keys),
        _sizes(args.history),
        args.min_time,
        log=lambda m: print(m, flush=True),
        async_chain=_sizes(args.async_chain),
    )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"lib": args.lib, **result}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
