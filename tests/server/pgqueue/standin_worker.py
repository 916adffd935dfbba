"""A stand-in worker process for the PostgreSQL run queue fault tests.

``python -m tests.server.pgqueue.standin_worker DSN SCHEMA [--slots N] [--lease S]``
claims runs from :class:`PostgresRunQueue` and executes each with a real
``StateGraph`` that checkpoints every step with ``AsyncPostgresSaver`` (thread = the
run's thread). The graph counts ``n`` up to ``kwargs["steps"]`` and appends each value to ``log`` (a reducer),
so a run that restarted from scratch instead of resuming shows duplicates in ``log``.
A run resumes (``ainvoke(None)``) when the thread's last checkpoint was saved by this
run (its metadata ``run_id``), i.e. after a takeover; otherwise it starts from its input.

It prints one line per event to stdout: ``claimed RUN ATTEMPT``, ``finished RUN``,
``state RUN N NEXT MINE``, ``lost RUN``, ``error RUN TEXT``, and at exit
``stats QUEUE_S RUN_S RUNS`` (seconds spent in queue calls and in graph runs). The
first line is ``ready``.
"""

from __future__ import annotations

import argparse
import asyncio
import operator
import os
import signal
import sys
import time
from typing import Annotated, Any

from psycopg import sql
from psycopg_pool import AsyncConnectionPool
from typing_extensions import TypedDict

from stategraph.checkpoint.postgres.aio import AsyncPostgresSaver
from stategraph.config import RunnableConfig
from stategraph.graph import END, START, StateGraph
from stategraph.server._pgqueue import PostgresRunQueue
from stategraph.server._queue import Claim, ClaimLost


class Count(TypedDict):
    n: int
    log: Annotated[list[int], operator.add]


def build_graph(saver: AsyncPostgresSaver) -> Any:
    """The stand-in agent: ``step`` runs ``steps`` times, each after ``pause`` seconds
    of sleep and ``cpu`` seconds of CPU work (both from the run's config)."""

    async def step(state: Count, config: RunnableConfig) -> dict[str, Any]:
        conf = config["configurable"]
        if conf.get("pause"):
            await asyncio.sleep(conf["pause"])
        if conf.get("cpu"):
            end = time.process_time() + conf["cpu"]
            while time.process_time() < end:
                pass
        n = state["n"] + 1
        return {"n": n, "log": [n]}

    def route(state: Count, config: RunnableConfig) -> str:
        return "step" if state["n"] < config["configurable"]["steps"] else END

    builder = StateGraph(Count)
    builder.add_node("step", step)
    builder.add_edge(START, "step")
    builder.add_conditional_edges("step", route, ["step", END])
    return builder.compile(checkpointer=saver)


def say(*parts: object) -> None:
    print(*parts, flush=True)


class Worker:
    """Claim loop with heartbeats; ``slots`` runs at once."""

    def __init__(self, queue: PostgresRunQueue, graph: Any, lease: float, slots: int) -> None:
        self.queue = queue
        self.graph = graph
        self.lease = lease
        self.slots = slots
        self.name = f"w{os.getpid()}"
        self.stop = asyncio.Event()
        self.queue_s = 0.0
        self.run_s = 0.0
        self.runs = 0

    async def timed(self, coro: Any) -> Any:
        start = time.perf_counter()
        try:
            return await coro
        finally:
            self.queue_s += time.perf_counter() - start

    async def slot(self) -> None:
        while not self.stop.is_set():
            try:
                claim = await self.timed(self.queue.claim(self.name, self.lease))
            except Exception as exc:  # the database is away: try again soon
                say("error", "-", type(exc).__name__)
                await asyncio.sleep(0.3)
                continue
            if claim is None:
                await self.queue.wait(2.0)
                continue
            say("claimed", claim.run.run_id, claim.attempt)
            await self.execute(claim)

    async def execute(self, claim: Claim) -> None:
        run = asyncio.ensure_future(self.run_graph(claim))
        lost = False
        while not run.done():
            await asyncio.wait([run], timeout=self.lease / 4)
            if run.done():
                break
            try:
                await self.timed(self.queue.heartbeat(claim, self.lease))
            except ClaimLost:
                lost = True
                run.cancel()
            except Exception as exc:
                say("error", claim.run.run_id, "heartbeat", type(exc).__name__)
        try:
            await run
        except asyncio.CancelledError:
            pass
        except Exception as exc:  # the graph failed (database away): the claim expires
            say("error", claim.run.run_id, type(exc).__name__)
            return
        if lost:
            say("lost", claim.run.run_id)
            return
        try:
            await self.timed(self.queue.finish(claim, "success"))
        except ClaimLost:
            say("lost", claim.run.run_id)
            return
        except Exception as exc:
            say("error", claim.run.run_id, "finish", type(exc).__name__)
            return
        self.runs += 1
        say("finished", claim.run.run_id)

    async def run_graph(self, claim: Claim) -> None:
        start = time.perf_counter()
        kwargs = dict(claim.run.kwargs)
        config = {
            "configurable": {"thread_id": claim.run.thread_id, **kwargs},
            "lease_timeout": self.lease,
            "run_id": claim.run.run_id,
            # saved with its checkpoints, as the server's executor does: a takeover finds them
            "metadata": {"run_id": claim.run.run_id},
        }
        state = await self.graph.aget_state(config)
        mine = (state.metadata or {}).get("run_id") == claim.run.run_id
        say("state", claim.run.run_id, state.values.get("n"), list(state.next), mine)
        if mine:
            # a takeover: this run already saved checkpoints, so go on from the last one.
            # (Not ``state.next``: once a step's writes are saved, the snapshot shows them
            # applied with ``next == ()`` although the run has steps left, as LangGraph.)
            await self.graph.ainvoke(None, config)
        else:
            await self.graph.ainvoke({"n": 0, "log": []}, config)
        self.run_s += time.perf_counter() - start


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("dsn")
    parser.add_argument("schema")
    parser.add_argument("--slots", type=int, default=1)
    parser.add_argument("--lease", type=float, default=1.0)
    args = parser.parse_args()
    ident = sql.Identifier(args.schema)

    async def configure(conn: Any) -> None:
        await conn.execute(sql.SQL("SET search_path TO {}").format(ident))

    pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
        args.dsn,
        kwargs={"autocommit": True},
        min_size=1,
        max_size=args.slots + 1,
        configure=configure,
        check=AsyncConnectionPool.check_connection,
        open=False,
    )
    await pool.open()
    saver = AsyncPostgresSaver(pool)
    queue = PostgresRunQueue(args.dsn, schema=args.schema, pool_max=args.slots + 2)
    await queue.setup()
    worker = Worker(queue, build_graph(saver), args.lease, args.slots)
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGTERM, worker.stop.set)
    say("ready")
    slots = [asyncio.ensure_future(worker.slot()) for _ in range(args.slots)]
    await worker.stop.wait()
    for task in slots:
        task.cancel()
    await asyncio.gather(*slots, return_exceptions=True)
    say("stats", round(worker.queue_s, 4), round(worker.run_s, 4), worker.runs)
    await queue.aclose()
    await pool.close()


if __name__ == "__main__":
    asyncio.run(main())
    sys.exit(0)
