"""Benchmark of the task executors: threads vs a local Ray vs a local Dask cluster.

    python -m bench.executors [--tasks 100] [--ms 50] [--workers 2] [--repeat 3]

Two measurements per executor:

* **fan-out**: one step of ``--tasks`` ``Send``s, each doing ``--ms`` milliseconds of
  pure-Python CPU work (calibrated here). On threads the GIL runs them one at a time;
  a cluster of ``--workers`` worker processes runs ``--workers`` at once.
* **overhead per remote task**: a chain of ``--chain`` steps with one no-op task each
  (each task waits for the previous one, so nothing overlaps), run with the executor
  and on threads; ``(remote - threads) / steps`` is what one remote round trip adds
  (wall), and what it costs the caller's process in CPU (the rest is the engine's
  scheduling and the worker).
* **engine floor**: the same number of trivial tasks submitted one after the other
  with the engine's own API (``client.submit(f).result()``, ``ray.get(f.remote())``):
  the engine's own round trip. ``overhead/task`` close to it means the time is the
  engine's, not ours. (It can even come out below it: the executor learns of a finished
  task from the engine's completion callback, which on Dask skips the hop through the
  client's event loop that a blocking ``result()`` makes. On a LocalCluster the
  scheduler runs in the caller's process, so its CPU shows in ``caller CPU/task`` too.)

Wall-clock times on a shared machine are noisy: each figure is the median of
``--repeat`` runs after a warm-up run (which starts the worker processes). A cluster
speeds the fan-out up only if its workers get more CPU than the caller alone would:
where a session's processes share a fixed CPU quota (a container or cgroup limit), the
speed-up stays near 1x whatever the number of workers.
Not a timed test: run it by hand and read the numbers.
"""

from __future__ import annotations

import argparse
import operator
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

from typing_extensions import TypedDict

from stategraph.graph import END, START, StateGraph
from stategraph.types import Send


class Fan(TypedDict):
    n: int
    loops: int
    done: Annotated[list[int], operator.add]


class Chain(TypedDict):
    step: int


def burn(loops: int) -> int:
    """Pure-Python CPU work (holds the GIL)."""
    total = 0
    for i in range(loops):
        total += i * i % 7
    return total


def calibrate(ms: float) -> int:
    """How many loops of :func:`burn` take ``ms`` milliseconds of CPU time.

    CPU time, not wall time: on a shared machine the wall time of the same work
    varies with the load, its CPU time much less.
    """
    loops = 10_000
    while True:
        start = time.process_time()
        burn(loops)
        elapsed = time.process_time() - start
        if elapsed > 0.02:
            return max(1, int(loops * (ms / 1000) / elapsed))
        loops *= 2


def work(state: Fan) -> dict[str, Any]:
    burn(state["loops"])
    return {"done": [state["n"]]}


def fan_graph() -> Any:
    g = StateGraph(Fan)
    g.add_node("work", work)
    g.add_conditional_edges(
        START,
        lambda s: [Send("work", {"n": i, "loops": s["loops"], "done": []}) for i in range(s["n"])],
        ["work"],
    )
    return g.compile()


def hop(state: Chain) -> dict[str, Any]:
    return {"step": state["step"] + 1}


def chain_graph(steps: int) -> Any:
    g = StateGraph(Chain)
    g.add_node("hop", hop)
    g.add_edge(START, "hop")
    g.add_conditional_edges("hop", lambda s: "hop" if s["step"] < steps else END, ["hop", END])
    return g.compile()


def noop(x: int) -> int:
    """The trivial task of the engine floor."""
    return x


def floor_loop(name: str, executor: Any, count: int) -> Callable[[], None]:
    """``count`` trivial tasks, one after the other, with the engine's own API."""
    if name == "ray":
        import ray

        task = ray.remote(noop).options(max_retries=0)

        def ray_loop() -> None:
            for i in range(count):
                ray.get(task.remote(i))

        return ray_loop

    def dask_loop() -> None:
        for i in range(count):
            executor.client.submit(noop, i, pure=False).result()

    return dask_loop


def timed(run: Callable[[], Any], repeat: int) -> tuple[float, float]:
    """Median wall time and median CPU time of this process (all its threads) of
    ``run()`` over ``repeat`` runs, after one warm-up run."""
    run()
    walls = []
    cpus = []
    for _ in range(repeat):
        start, cpu = time.perf_counter(), time.process_time()
        run()
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def make_executor(name: str, workers: int) -> tuple[Any, Callable[[], None]]:
    """The executor called ``name`` on a fresh local cluster, and how to stop it."""
    if name == "threads":
        return None, lambda: None
    if name == "ray":
        import ray

        from stategraph.executors.ray import RayExecutor

        ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
        ray_executor = RayExecutor()

        def stop_ray() -> None:
            ray_executor.close()
            ray.shutdown()

        return ray_executor, stop_ray
    if name == "dask":
        import dask
        from distributed import Client, LocalCluster

        from stategraph.executors.dask import DaskExecutor

        dask.config.set({"distributed.scheduler.worker-saturation": 1.0})
        cluster = LocalCluster(
            processes=True, n_workers=workers, threads_per_worker=1, dashboard_address=None
        )
        client = Client(cluster)
        dask_executor = DaskExecutor(client)

        def stop_dask() -> None:
            dask_executor.close()
            client.close()
            cluster.close()

        return dask_executor, stop_dask
    raise SystemExit(f"unknown executor {name!r}: choose threads, ray or dask")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=100, help="Sends in the fan-out step")
    parser.add_argument("--ms", type=float, default=50.0, help="CPU milliseconds per task")
    parser.add_argument("--workers", type=int, default=2, help="worker processes per cluster")
    parser.add_argument("--chain", type=int, default=200, help="steps of the overhead chain")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per figure")
    parser.add_argument("--engines", default="threads,ray,dask", help="comma-separated")
    args = parser.parse_args(argv)

    # worker processes import this module by name
    root = str(Path(__file__).resolve().parent.parent)
    os.environ["PYTHONPATH"] = os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])

    loops = calibrate(args.ms)
    print(
        f"{args.tasks} Sends x {args.ms:.0f} ms of CPU ({loops} loops), "
        f"{args.workers} workers, median of {args.repeat} runs (python {sys.version.split()[0]})"
    )
    fan = fan_graph()
    chain = chain_graph(args.chain)
    rows: list[tuple[str, float, float, float, float | None]] = []
    chain_threads: tuple[float, float] | None = None
    for name in args.engines.split(","):
        executor, stop = make_executor(name, args.workers)
        config: dict[str, Any] = {} if executor is None else {"executor": executor}
        try:
            fan_wall, _ = timed(
                lambda c=config: fan.invoke({"n": args.tasks, "loops": loops, "done": []}, c),
                args.repeat,
            )
            chain_wall, chain_cpu = timed(
                lambda c=config: chain.invoke(
                    {"step": 0}, {**c, "recursion_limit": args.chain + 10}
                ),
                args.repeat,
            )
            floor = None
            if executor is not None:
                floor, _ = timed(floor_loop(name, executor, args.chain), args.repeat)
        finally:
            stop()
        if name == "threads":
            chain_threads = (chain_wall, chain_cpu)
        rows.append((name, fan_wall, chain_wall, chain_cpu, floor))

    print(
        f"{'executor':<10}{'fan-out wall':>14}{'speed-up':>10}{'chain wall':>12}"
        f"{'overhead/task':>15}{'caller CPU/task':>17}{'engine floor/task':>19}"
    )
    base = rows[0][1] if rows and rows[0][0] == "threads" else None
    for name, fan_wall, chain_wall, chain_cpu, floor in rows:
        speed = f"{base / fan_wall:.2f}x" if base else "-"
        overhead = cpu_cost = "-"
        if name != "threads" and chain_threads is not None:
            overhead = f"{(chain_wall - chain_threads[0]) / args.chain * 1000:.2f} ms"
            cpu_cost = f"{(chain_cpu - chain_threads[1]) / args.chain * 1000:.2f} ms"
        floor_text = "-" if floor is None else f"{floor / args.chain * 1000:.2f} ms"
        print(
            f"{name:<10}{fan_wall:>13.2f}s{speed:>10}{chain_wall:>11.2f}s"
            f"{overhead:>15}{cpu_cost:>17}{floor_text:>19}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
