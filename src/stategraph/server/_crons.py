"""Cron schedules: their next run dates (croniter) and the scheduler that starts runs.

Every server process runs the scheduler. Each due tick is claimed through the run
queue's :meth:`~stategraph.server._queue.RunQueue.claim_tick`, so exactly one process
starts its run however many share the database; the others only move the schedule on
(idempotently). A tick missed while no server ran is fired once, then the schedule
continues from now (no catch-up burst).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from stategraph.server._context import ApiError, ServerContext
from stategraph.server._records import crons

__all__ = ["next_run", "check_schedule", "CronScheduler", "run_body"]

log = logging.getLogger("stategraph.server")


def _croniter() -> Any:
    try:
        from croniter import croniter
    except ImportError as exc:
        raise ApiError(
            501,
            f"Crons need croniter, which is not installed: pip install 'stategraph[server]' ({exc}).",
        ) from exc
    return croniter


def _zone(name: str | None) -> Any:
    if not name:
        return timezone.utc
    try:
        from zoneinfo import ZoneInfo

        return ZoneInfo(name)
    except Exception:
        raise ApiError(
            422, f"Unknown timezone {name!r}: use an IANA name such as 'Europe/Paris'."
        ) from None


def check_schedule(schedule: Any, tz: str | None = None) -> None:
    """422 unless ``schedule`` is a valid cron expression (5 or 6 fields)."""
    if not isinstance(schedule, str) or not _croniter().is_valid(schedule):
        raise ApiError(
            422,
            f"Invalid cron schedule {schedule!r}: use 5 fields (minute hour day month weekday), "
            "e.g. '*/5 * * * *'.",
        )
    _zone(tz)


def next_run(schedule: str, after: float, tz: str | None = None) -> float:
    """The first tick of ``schedule`` strictly after ``after`` (epoch seconds)."""
    zone = _zone(tz)
    start = datetime.fromtimestamp(after, zone)
    nxt = _croniter()(schedule, start).get_next(datetime)
    return float(nxt.timestamp())


def run_body(cron: Mapping[str, Any]) -> dict[str, Any]:
    """The run a cron starts (its payload, marked with the cron id)."""
    payload = dict(cron["payload"])
    payload.pop("schedule", None)
    payload["assistant_id"] = cron["assistant_id"]
    config = dict(payload.get("config") or {})
    config["configurable"] = {**(config.get("configurable") or {}), "cron_id": cron["cron_id"]}
    payload["config"] = config
    if cron["thread_id"] is None:
        payload["on_completion"] = cron.get("on_run_completed") or "delete"
    payload.setdefault("multitask_strategy", "enqueue")
    return payload


class CronScheduler:
    """Starts the runs of due crons (see the module docstring)."""

    def __init__(self, ctx: ServerContext, *, every: float = 1.0) -> None:
        self.ctx = ctx
        self.every = every
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Begin ticking in the background."""
        self._task = asyncio.ensure_future(self._loop())

    async def stop(self) -> None:
        """Stop ticking."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task

    async def _loop(self) -> None:
        while True:
            try:
                await self.tick()
            except Exception:
                log.exception("cron scheduler tick failed")
            await asyncio.sleep(self.every)

    async def tick(self, now: float | None = None) -> int:
        """Start the runs of every cron due at ``now``; returns how many this process started."""
        from stategraph.server._ops import create_run

        ctx = self.ctx
        now = time.time() if now is None else now
        started = 0
        for cron_id, when in await ctx.records.read(crons.due(now)):
            cron = await ctx.records.read(crons.get(cron_id))
            if cron is None:
                continue
            end = cron.get("end_time")
            if await ctx.queue.claim_tick(cron_id, when):
                try:
                    await create_run(ctx, cron["thread_id"], run_body(cron))
                    started += 1
                except ApiError as exc:
                    log.warning("cron %s: its run was refused: %s", cron_id, exc.message)
            nxt: float | None = next_run(cron["schedule"], max(now, when), cron.get("timezone"))
            if end is not None and nxt is not None:
                from stategraph.server._json import from_iso

                if nxt > from_iso(end):
                    nxt = None
            await ctx.records.run(crons.set_next(cron_id, when, nxt))
        return started
