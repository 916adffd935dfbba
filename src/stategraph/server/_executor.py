"""Executing one claimed run: from the queue's claim to the run's final status.

The executor reads the run and its assistant, starts the graph (continuing from the
last checkpoint when an earlier worker died mid-run), publishes what it streams,
heartbeats the claim (a cancel request stops the run; a lost claim means another
worker took it over, so this one stops and records nothing), and at the end records
the run's status and result, the thread's state and status, closes the stream,
finishes the claim and calls the run's webhook. The order keeps clients consistent:
the records are final before the stream ends and before the next run of the thread
can be claimed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from stategraph.server._context import ServerContext
from stategraph.server._json import dumps
from stategraph.server._queue import CancelAction, Claim, ClaimLost
from stategraph.server._records import assistants, events, runs, threads
from stategraph.server._run_call import GraphCall, graph_call
from stategraph.server._shaping import Shaper
from stategraph.server._state import thread_summary

__all__ = ["Executor", "Outcome"]

log = logging.getLogger("stategraph.server")


@dataclass
class Outcome:
    """How a run ended."""

    status: str
    """``success``, ``error``, ``interrupted`` or ``timeout``."""
    result_json: str = "null"
    error: dict[str, Any] | None = None
    rollback: bool = False


class _Publisher:
    __slots__ = ("ctx", "run_id", "seq")

    def __init__(self, ctx: ServerContext, run_id: str, seq: int) -> None:
        self.ctx = ctx
        self.run_id = run_id
        self.seq = seq

    def __call__(self, event: str, data: str) -> None:
        self.ctx.streams.publish(self.run_id, self.seq, event, data)
        self.seq += 1


class Executor:
    """Runs claimed runs for one worker (see the module docstring)."""

    def __init__(self, ctx: ServerContext, worker_id: str) -> None:
        self.ctx = ctx
        self.worker_id = worker_id
        from stategraph import __version__

        self.version = __version__

    def begin(self, claim: Claim) -> Any:
        """The records operation that starts ``claim``'s run: ``(run, assistant)``
        (``(None, None)``: the run was deleted while queued). The worker runs it in the
        claim's own transaction when the queue and the records share a database."""
        return _begin(claim.run.run_id, claim.attempt, claim.cancel is None, self.worker_id)

    async def execute(self, claim: Claim, begun: tuple[Any, Any] | None = None) -> None:
        """Run ``claim``'s run to its end (never raises for the run's own errors).
        ``begun``: what :meth:`begin` returned, when the claim already ran it."""
        ctx = self.ctx
        run_id = claim.run.run_id
        if begun is None:
            begun = await ctx.records.run(self.begin(claim))
        run, assistant = begun
        if run is None:  # deleted while queued
            with contextlib.suppress(ClaimLost):
                await ctx.queue.finish(claim, "interrupted")
            return
        if claim.cancel is not None:
            await self._finish(
                claim, run, Outcome("interrupted", rollback=claim.cancel == "rollback"), None
            )
            return
        seq = await ctx.streams.open(run_id, claim.attempt)
        publish = _Publisher(ctx, run_id, seq)
        publish("metadata", dumps({"run_id": run_id, "attempt": claim.attempt}))
        if assistant is None or assistant["graph_id"] not in ctx.graphs.ids:
            error = {
                "error": "AssistantNotFound",
                "message": f"Assistant '{run['assistant_id']}' no longer exists on this server.",
            }
            publish("error", dumps(error))
            await self._finish(claim, run, Outcome("error", error=error), publish)
            return
        call = graph_call(
            run,
            assistant,
            attempt=claim.attempt,
            api_url=ctx.api_url,
            resume_from_checkpoint=claim.attempt > 1 and await self._has_saved(run),
            version=self.version,
        )
        call.config.setdefault("lease_timeout", max(ctx.lease_seconds, 1.0))
        shaper = Shaper(call.modes, call.subgraphs, publish)
        task = asyncio.ensure_future(self._drive(call, shaper))
        stopped: asyncio.Future[str] = asyncio.get_running_loop().create_future()

        def stop(action: str) -> None:
            if not stopped.done():
                stopped.set_result(action)

        ctx.local_runs[run_id] = stop
        try:
            outcome = await self._supervise(claim, task, shaper, publish, stopped)
        finally:
            ctx.local_runs.pop(run_id, None)
        if outcome is None:
            ctx.streams.forget(run_id)  # another worker owns the run now
            return
        await self._finish(claim, run, outcome, publish, call)

    async def _has_saved(self, run: dict[str, Any]) -> bool:
        """Whether the thread's latest checkpoint was saved by this run (an earlier attempt)."""
        if run["thread_id"] is None:
            return False
        saved = await self.ctx.storage.saver.aget_tuple(
            {"configurable": {"thread_id": run["thread_id"], "checkpoint_ns": ""}}
        )
        return saved is not None and (saved.metadata or {}).get("run_id") == run["run_id"]

    async def _drive(self, call: GraphCall, shaper: Shaper) -> None:
        options: dict[str, Any] = {
            "stream_mode": call.library_modes,
            "subgraphs": call.subgraphs,
            "interrupt_before": call.interrupt_before,
            "interrupt_after": call.interrupt_after,
        }
        if call.context is not None:
            options["context"] = call.context
        if call.durability is not None:
            options["durability"] = call.durability
        async with self.ctx.graphs.graph(call.graph_id, call.config) as graph:
            if "events" in call.modes:
                root: str | None = None
                async for event in graph.astream_events(
                    call.input, call.config, version="v2", **{**options, "subgraphs": True}
                ):
                    if root is None and event.get("event") == "on_chain_start":
                        root = event.get("run_id")
                    shaper.event(event, root)
                return
            async for item in graph.astream(call.input, call.config, **options):
                if call.subgraphs:
                    ns, mode, data = item
                    shaper.chunk(tuple(ns), mode, data)
                else:
                    mode, data = item
                    shaper.chunk((), mode, data)

    async def _supervise(
        self,
        claim: Claim,
        task: asyncio.Future[None],
        shaper: Shaper,
        publish: _Publisher,
        stopped: asyncio.Future[str],
    ) -> Outcome | None:
        ctx = self.ctx
        every = max(0.1, min(1.0, ctx.lease_seconds / 3))
        deadline = None if ctx.run_timeout is None else time.monotonic() + ctx.run_timeout
        cancel: CancelAction | None = None
        timed_out = False
        while not task.done():
            wait = every if deadline is None else max(0.0, min(every, deadline - time.monotonic()))
            waiters: set[asyncio.Future[Any]] = {task, stopped}
            await asyncio.wait(waiters, timeout=wait, return_when=asyncio.FIRST_COMPLETED)
            if task.done():
                break
            if stopped.done():
                cancel = cast("CancelAction", stopped.result())
                task.cancel()
                break
            if deadline is not None and time.monotonic() >= deadline:
                timed_out = True
                task.cancel()
                break
            try:
                beat = await ctx.queue.heartbeat(claim, ctx.lease_seconds)
            except ClaimLost:
                log.warning("run %s: claim lost, another worker continues it", claim.run.run_id)
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
                return None
            except Exception:  # a storage hiccup: the claim lives on until it expires
                log.exception("run %s: heartbeat failed", claim.run.run_id)
                continue
            if beat.cancel is not None:
                cancel = beat.cancel
                task.cancel()
                break
        try:
            await task
        except asyncio.CancelledError:
            if timed_out:
                error = {
                    "error": "TimeoutError",
                    "message": "The run exceeded the server's run timeout.",
                }
                publish("error", dumps(error))
                return Outcome("timeout", shaper.result_json(), error)
            if cancel is None:
                raise
            return Outcome("interrupted", shaper.result_json(), rollback=cancel == "rollback")
        except Exception as exc:
            error = {"error": type(exc).__name__, "message": str(exc)}
            publish("error", dumps(error))
            return Outcome("error", shaper.result_json(), error)
        return Outcome("success", shaper.result_json())

    async def _finish(
        self,
        claim: Claim,
        run: dict[str, Any],
        outcome: Outcome,
        publish: _Publisher | None,
        call: GraphCall | None = None,
    ) -> None:
        ctx = self.ctx
        run_id, thread_id = run["run_id"], run["thread_id"]
        saver = ctx.storage.saver
        if outcome.rollback and thread_id is not None:
            with contextlib.suppress(Exception):
                await saver.adelete_for_runs([run_id])
        temporary = bool(run["kwargs"].get("temporary"))
        summary = None
        thread_status, error = "idle", outcome.error
        if thread_id is not None and not temporary:
            summary = await thread_summary(saver, thread_id, ctx.graphs, run)
            thread_status = summary.status
            if outcome.status == "interrupted" and not outcome.rollback:
                thread_status = "interrupted"
                error = {
                    "error": "UserInterrupt",
                    "message": "interrupt requested via POST /threads/{thread_id}/runs/{run_id}/cancel",
                }
            elif outcome.status in ("error", "timeout"):
                thread_status = "error"
        rows = [] if publish is None else ctx.streams.seal(run_id, publish.seq)
        result = outcome.result_json
        if outcome.status in ("error", "timeout") and outcome.error is not None:
            result = dumps({"__error__": outcome.error})
        elif outcome.status == "interrupted":
            result = "{}"  # a cancelled run has no result (as LangGraph Server answers)

        def record(others: Sequence[str]) -> Any:
            """The thread's state, the run's status and its events: one transaction.
            ``others``: the thread's other pending or running runs (it stays busy)."""
            if thread_id is not None and summary is not None:
                yield from threads.set_state(
                    thread_id,
                    status="busy" if others else thread_status,
                    values=summary.values_json,
                    interrupts=summary.interrupts,
                    error=error,
                    config={"configurable": {}},
                )
            if outcome.rollback:
                yield from runs.delete(run_id)
            else:
                yield from runs.set_status(run_id, outcome.status, result=result)
                if rows:
                    yield from events.append(run_id, rows, notify=ctx.streams.notify)

        if ctx.storage.joined:
            # the records and the end of the claim: one transaction (nothing is recorded
            # when the claim turned stale: the worker that took the run over records it)
            with contextlib.suppress(ClaimLost):
                await ctx.queue.finish_with(claim, outcome.status, record)
            ctx.streams.wake(run_id)
        else:
            others: Sequence[str] = ()
            if summary is not None:
                others = [r for r in await ctx.queue.pending(thread_id) if r != run_id]
            await ctx.records.run(record(others))
            ctx.streams.wake(run_id)
            with contextlib.suppress(ClaimLost):
                await ctx.queue.finish(claim, outcome.status)
        kwargs = run["kwargs"]
        if temporary and thread_id is not None:
            from stategraph.server._ops import delete_thread

            with contextlib.suppress(Exception):
                await delete_thread(ctx, thread_id, keep_runs=True)
        if kwargs.get("webhook") and ctx.webhooks is not None and not outcome.rollback:
            final = await ctx.records.read(runs.get(run_id))
            if final is not None:
                ctx.webhooks.send(kwargs["webhook"], final, plain_values(outcome), outcome.error)


def plain_values(outcome: Outcome) -> Any:
    """The run's result as plain data (for webhooks)."""
    import json

    return json.loads(outcome.result_json)


def _begin(run_id: str, attempt: int, start: bool, worker_id: str) -> Any:
    """Read the run and its assistant; with ``start``, mark it running and its thread
    busy. One transaction."""
    run = yield from runs.get(run_id)
    if run is None:
        return None, None
    assistant = yield from assistants.get(run["assistant_id"])
    if not start:
        return run, assistant
    ok = yield from runs.set_status(
        run_id,
        "running",
        only_if=("pending", "running"),
        attempt=attempt,
        worker_id=worker_id,
        kwargs=run["kwargs"],
    )
    if run["thread_id"] is not None and ok:
        meta = (
            {"graph_id": assistant["graph_id"], "assistant_id": assistant["assistant_id"]}
            if assistant is not None and not run["kwargs"].get("temporary")
            else None
        )
        yield from threads.set_status(run["thread_id"], "busy", meta)
    return run, assistant
