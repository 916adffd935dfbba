"""Operations the API and the crons share: creating a run (checked, recorded, queued),
cancelling it, waiting for it, deleting a thread with everything it owns."""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Mapping
from typing import Any, cast

from stategraph.server._context import ApiError, ServerContext
from stategraph.server._queue import (
    MULTITASK_STRATEGIES,
    MultitaskStrategy,
    QueuedRun,
    ThreadBusy,
)
from stategraph.server._records import runs, threads
from stategraph.server._run_call import check_stream_modes, command_from_json

__all__ = [
    "create_run",
    "cancel_run",
    "wait_for_run",
    "delete_thread",
    "check_run_body",
    "FINAL",
]

FINAL = ("success", "error", "timeout", "interrupted")


def check_run_body(body: Mapping[str, Any]) -> None:
    """422 naming the field, for a run body LangGraph Server would refuse."""
    if body.get("input") is not None and body.get("command") is not None:
        raise ApiError(422, "Give either input or command, not both.")
    command = body.get("command")
    if command is not None:
        if not isinstance(command, Mapping):
            raise ApiError(422, "command must be an object with resume, update and/or goto.")
        try:
            command_from_json(command)
        except (TypeError, ValueError) as exc:
            raise ApiError(422, f"Invalid command: {exc}") from exc
    try:
        check_stream_modes(body.get("stream_mode"))
    except ValueError as exc:
        raise ApiError(422, str(exc)) from exc
    strategy = body.get("multitask_strategy")
    if strategy is not None and strategy not in MULTITASK_STRATEGIES:
        raise ApiError(
            422,
            f"Unknown multitask_strategy {strategy!r}: use one of {', '.join(MULTITASK_STRATEGIES)}.",
        )
    for key in ("on_completion", "on_disconnect", "if_not_exists", "durability"):
        allowed = {
            "on_completion": ("delete", "keep"),
            "on_disconnect": ("cancel", "continue"),
            "if_not_exists": ("create", "reject"),
            "durability": ("sync", "async", "exit"),
        }[key]
        if body.get(key) is not None and body[key] not in allowed:
            raise ApiError(422, f"{key} must be one of {', '.join(allowed)}, got {body[key]!r}.")
    after = body.get("after_seconds")
    if after is not None and (
        isinstance(after, bool) or not isinstance(after, (int, float)) or after < 0
    ):
        raise ApiError(422, f"after_seconds must be a number of seconds >= 0, got {after!r}.")
    for key in ("config", "context", "metadata", "checkpoint"):
        if body.get(key) is not None and not isinstance(body[key], Mapping):
            raise ApiError(422, f"{key} must be a JSON object, got {type(body[key]).__name__}.")


async def create_run(
    ctx: ServerContext,
    thread_id: str | None,
    body: Mapping[str, Any],
    *,
    user: Any = None,
    default_strategy: str = "enqueue",
    follow: bool = False,
) -> dict[str, Any]:
    """Check, record and queue a run; returns the run record (status ``pending``).

    ``thread_id=None`` is a stateless run: a temporary thread, deleted after the run
    unless ``on_completion="keep"``. ``follow``: the caller follows the run's events
    at once (a streaming or waiting request), so they are kept from the start."""
    check_run_body(body)
    if body.get("webhook") and ctx.webhooks is not None:
        ctx.webhooks.check(body["webhook"])
    assistant = await ctx.resolve_assistant(body.get("assistant_id"))
    stateless = thread_id is None
    temporary = stateless and body.get("on_completion", "delete") == "delete"
    if thread_id is None:
        thread_id = str(uuid.uuid4())
    run_id = str(uuid.uuid4())
    strategy = body.get("multitask_strategy") or default_strategy
    config = dict(body.get("config") or {})
    conf = dict(config.get("configurable") or {})
    user_id = "" if user is None else str(getattr(user, "identity", "") or "")
    conf.update(
        run_id=run_id,
        thread_id=thread_id,
        graph_id=assistant["graph_id"],
        assistant_id=assistant["assistant_id"],
        user_id=user_id,
        langgraph_auth_user_id=user_id,
    )
    if user is not None:
        conf["langgraph_auth_user"] = user.to_json() if hasattr(user, "to_json") else None
    config["configurable"] = conf
    checkpoint = dict(body.get("checkpoint") or {})
    if body.get("checkpoint_id"):
        checkpoint["checkpoint_id"] = body["checkpoint_id"]
    kwargs = {
        "input": body.get("input"),
        "command": body.get("command"),
        "config": config,
        "context": body.get("context") or {},
        "stream_mode": check_stream_modes(body.get("stream_mode")),
        "interrupt_before": body.get("interrupt_before"),
        "interrupt_after": body.get("interrupt_after"),
        "webhook": body.get("webhook"),
        "feedback_keys": body.get("feedback_keys"),
        "temporary": temporary,
        "subgraphs": bool(body.get("stream_subgraphs")),
        "resumable": bool(body.get("stream_resumable")),
        "checkpoint_during": body.get("checkpoint_during", True),
        "durability": body.get("durability") or "async",
    }
    if checkpoint:
        kwargs["checkpoint"] = checkpoint
    created = time.time()
    graph_meta = {"graph_id": assistant["graph_id"], "assistant_id": assistant["assistant_id"]}

    def record_run() -> Any:
        """Find (or make) the thread, record the run, mark the thread busy: one transaction."""
        if stateless:
            yield from threads.insert(thread_id, {})
            thread_meta: Mapping[str, Any] = {}
        else:
            thread = yield from threads.get(thread_id)
            if thread is None:
                if body.get("if_not_exists") != "create":
                    raise ApiError(404, "Thread or assistant not found.")
                ttl = ctx.config.thread_ttl.default_ttl if ctx.config.thread_ttl else None
                thread, _ = yield from threads.insert(thread_id, {}, ttl)
            thread_meta = thread.get("metadata") or {}
        metadata = {
            **(assistant.get("metadata") or {}),
            **thread_meta,
            **(body.get("metadata") or {}),
            **graph_meta,
        }
        config["metadata"] = {**(config.get("metadata") or {}), **metadata}
        made = yield from runs.insert(
            run_id, thread_id, assistant["assistant_id"], metadata, kwargs, strategy, created
        )
        yield from threads.set_status(thread_id, "busy", None if temporary else graph_meta)
        return made

    after = float(body.get("after_seconds") or 0)
    if follow:
        ctx.streams.expect(run_id)
    queued_run = QueuedRun(
        run_id=run_id,
        thread_id=thread_id,
        assistant_id=assistant["assistant_id"],
        kwargs={},
        multitask_strategy=cast("MultitaskStrategy", strategy),
        available_at=created + after if after else 0.0,
    )
    try:
        if ctx.storage.joined:  # the record and the queue entry: one transaction
            queued, record = await ctx.queue.enqueue_with(queued_run, record_run)
        else:
            record = await ctx.records.run(record_run())
            try:
                queued = await ctx.queue.enqueue(queued_run)
            except ThreadBusy:
                await ctx.records.run(runs.delete(run_id))
                raise
    except ThreadBusy:
        raise ApiError(
            409,
            "Thread is already running a task. Wait for it to finish or choose a different "
            "multitask strategy.",
        ) from None
    ctx.stop_local([r for r in queued.cancelled if r not in queued.removed], strategy)
    for removed in queued.removed:
        if strategy == "rollback":
            await ctx.records.run(runs.delete(removed))
        else:
            await ctx.records.run(runs.set_status(removed, "interrupted", only_if=("pending",)))
    return dict(record)


async def cancel_run(ctx: ServerContext, run: Mapping[str, Any], action: str) -> str:
    """Cancel a run: a pending one is removed at once (recorded ``interrupted``, or
    deleted for ``rollback``); a running one is asked to stop. Returns the queue's
    answer (``removed``, ``requested`` or ``absent``)."""
    if action not in ("interrupt", "rollback"):
        raise ApiError(422, f"action must be 'interrupt' or 'rollback', got {action!r}.")
    outcome = await ctx.queue.cancel(run["run_id"], action)
    if outcome.state == "requested":
        ctx.stop_local([run["run_id"]], action)
    if outcome.state == "removed":
        if action == "rollback":
            await ctx.records.run(runs.delete(run["run_id"]))
        else:
            await ctx.records.run(
                runs.set_status(run["run_id"], "interrupted", only_if=("pending",))
            )
        if run.get("thread_id"):
            pending = await ctx.queue.pending(run["thread_id"])
            if not pending:
                current = await ctx.records.read(threads.get(run["thread_id"]))
                if current is not None and current["status"] == "busy":
                    status = "interrupted" if current.get("interrupts") else "idle"
                    await ctx.records.run(threads.set_status(run["thread_id"], status))
    return outcome.state


async def active_runs(ctx: ServerContext, thread_id: str) -> list[str]:
    """The thread's queued or running runs, without those whose record already says
    they ended.

    A worker records a run's end (which wakes ``runs.wait`` and ``join``) before it
    releases the run's queue entry, so a client that acts on the thread as soon as its
    wait returns must not find the thread busy with that run.
    """
    found = []
    for run_id in await ctx.queue.pending(thread_id):
        status, _ = await ctx.records.read(runs.result(run_id))
        if status not in FINAL:
            found.append(run_id)
    return found


async def wait_for_run(
    ctx: ServerContext, run_id: str, *, timeout: float | None = None, fresh: bool = False
) -> str | None:
    """Wait until the run ends; returns its final status (``None``: it was deleted)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    async for _ in ctx.streams.follow(run_id, fresh=fresh):
        if deadline is not None and time.monotonic() > deadline:
            break
    delay = 0.01
    while True:
        status, _ = await ctx.records.read(runs.result(run_id))
        if status is None or status in FINAL:
            return status
        if deadline is not None and time.monotonic() > deadline:
            return status
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.2)


async def delete_thread(ctx: ServerContext, thread_id: str, *, keep_runs: bool = False) -> bool:
    """Delete a thread, its runs (cancelled first; kept with ``keep_runs``), crons,
    events and checkpoints."""
    pending = list(await ctx.queue.pending(thread_id))
    ctx.stop_local(pending, "interrupt")  # a run executing here stops writing at once
    for run_id in pending:
        with contextlib.suppress(Exception):
            await ctx.queue.cancel(run_id, "interrupt")
            await ctx.queue.delete(run_id)
    existed, run_ids = await ctx.records.run(threads.delete(thread_id, keep_runs=keep_runs))
    for run_id in run_ids:
        ctx.streams.forget(run_id)
    await ctx.storage.saver.adelete_thread(thread_id)
    return existed
