"""The server's records: assistants, threads, runs, crons and the run event log, on
SQLite (embedded) or PostgreSQL, through one set of operations (see ``_db``).

The resource modules hold the operations (generators of SQL); :class:`Records` runs
them: ``await records.run(_threads.get(thread_id))``.
"""

from __future__ import annotations

from typing import TypeVar

from stategraph.server._db import Db, Op
from stategraph.server._records import _assistants, _crons, _events, _runs, _threads
from stategraph.server._records._schema import ddl

__all__ = ["Records", "assistants", "threads", "runs", "crons", "events"]

assistants = _assistants
threads = _threads
runs = _runs
crons = _crons
events = _events

T = TypeVar("T")


class Records:
    """Runs record operations on a database (:class:`~stategraph.server._db.Db`)."""

    def __init__(self, db: Db) -> None:
        self.db = db

    async def setup(self) -> None:
        """Create the tables."""
        await self.db.setup(ddl(self.db.dialect))

    async def run(self, op: Op[T], *, write: bool = True) -> T:
        """Run one operation in one transaction."""
        return await self.db.run(op, write=write)

    async def read(self, op: Op[T]) -> T:
        """Run a read-only operation."""
        return await self.db.run(op, write=False)

    async def aclose(self) -> None:
        """Close the database."""
        await self.db.aclose()
