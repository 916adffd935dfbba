"""The production run queue of ``stategraph serve``: PostgreSQL, on procrastinate.

``--postgres DSN`` puts the run queue and the cron ticks here, so any number of
``stategraph serve`` and ``stategraph worker`` processes, on any machines, share them.
Built on `procrastinate <https://procrastinate.readthedocs.io>`_ (chosen over pgqueuer
by measurement; see ``docs/server-postgres.md``), which brings the job table, the
``SKIP LOCKED`` claim that hands out one job per lock (our thread) at a time, the
``LISTEN/NOTIFY`` wake-ups, per-worker heartbeats, retries and once-per-tick periodic
records. Install with ``pip install "stategraph[server-postgres]"``; this package is
imported only when the server runs on PostgreSQL.
"""

from __future__ import annotations

from stategraph._optional import requires_extra

with requires_extra(
    "The PostgreSQL run queue needs procrastinate and psycopg_pool, which are not "
    'installed: pip install "stategraph[server-postgres]"'
):
    import procrastinate  # noqa: F401  (the schema and functions we run on)
    import psycopg_pool  # noqa: F401

from stategraph.server._pgqueue._runs import PostgresRunQueue
from stategraph.server._pgqueue._schema import MIGRATIONS, migrate

PgRunQueue = PostgresRunQueue
"""The name ``server/_backends.py`` looks the queue up by (``PgRunQueue(dsn)``)."""

__all__ = ["MIGRATIONS", "PgRunQueue", "PostgresRunQueue", "migrate"]
