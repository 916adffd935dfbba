"""Schema set-up and migrations of the PostgreSQL run queue, in a schema of its own.

Everything the queue creates lives in one named schema (``stategraph_queue`` unless
configured): procrastinate's tables, types and functions, our ``sg_runs`` table, and
``sg_queue_migrations``, which records what was applied as one row per component:

* ``procrastinate``: the version of procrastinate whose schema is installed. A newer
  procrastinate applies its own migration files (shipped in its package, named by
  version) above the recorded version, in order.
* ``stategraph``: the number of our own migrations applied (:data:`MIGRATIONS`).

:func:`migrate` runs in one transaction under an advisory lock on the schema name, so
processes that start together set up once and the others wait, then find it done; a
failed set-up leaves nothing behind (PostgreSQL DDL is transactional).
"""

from __future__ import annotations

import re
from importlib import metadata, resources
from pathlib import Path
from typing import Any

import psycopg
from psycopg import sql

__all__ = ["MIGRATIONS", "check_identifier", "check_queue_name", "migrate", "procrastinate_version"]

_IDENT = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")
_QUEUE = re.compile(r"^[A-Za-z0-9_.-]{1,40}$")

MIGRATIONS: tuple[str, ...] = (
    # 1: the run table beside procrastinate's jobs
    """
    CREATE TABLE sg_runs (
        run_id text PRIMARY KEY,
        job_id bigint NOT NULL UNIQUE REFERENCES procrastinate_jobs (id) ON DELETE CASCADE,
        thread_id text,
        token bigint,
        attempt integer NOT NULL DEFAULT 0,
        worker_id text,
        expires_at timestamptz,
        cancel text CHECK (cancel IN ('interrupt', 'rollback')),
        final_status text,
        finished_at timestamptz
    );
    CREATE INDEX sg_runs_thread ON sg_runs (thread_id) WHERE thread_id IS NOT NULL;
    CREATE INDEX sg_runs_expiry ON sg_runs (expires_at) WHERE expires_at IS NOT NULL;
    CREATE INDEX sg_runs_finished ON sg_runs (finished_at) WHERE finished_at IS NOT NULL;
    """,
)
"""Our own migrations, in order; never edit one that shipped, append a new one."""


def check_identifier(name: str, setting: str) -> str:
    """``name`` if it is a plain lower-case PostgreSQL identifier, else a clear error."""
    if not isinstance(name, str) or not _IDENT.match(name):
        raise ValueError(
            f"{setting}={name!r} is not a valid schema name: use lower-case letters, digits "
            "and underscores, starting with a letter or underscore (at most 63 characters)."
        )
    return name


def check_queue_name(name: str) -> str:
    """``name`` if it is usable as a procrastinate queue (and NOTIFY channel) name."""
    if not isinstance(name, str) or not _QUEUE.match(name):
        raise ValueError(
            f"queue_name={name!r} is not a valid queue name: use 1 to 40 letters, digits, "
            "'_', '.' or '-' (it becomes part of a PostgreSQL NOTIFY channel name)."
        )
    return name


def procrastinate_version() -> str:
    """The installed procrastinate version (``X.Y.Z``)."""
    return metadata.version("procrastinate")


def _version_key(version: str) -> tuple[int, ...]:
    parts = re.findall(r"\d+", version)[:3]
    return tuple(int(p) for p in parts) + (0,) * (3 - len(parts))


def _procrastinate_sql(name: str) -> str:
    return (resources.files("procrastinate.sql") / name).read_text(encoding="utf-8")


def _procrastinate_migrations(after: str, upto: str) -> list[tuple[str, str]]:
    """procrastinate's migration files for versions in ``(after, upto]``, in order."""
    folder = Path(str(resources.files("procrastinate.sql") / "migrations"))
    low, high = _version_key(after), _version_key(upto)
    out = []
    for path in sorted(folder.glob("*.sql")):
        match = re.match(r"^(\d+)\.(\d+)\.(\d+)_", path.name)
        if match is None:
            continue
        key = tuple(int(g) for g in match.groups())
        if low < key <= high:
            out.append((path.name, path.read_text(encoding="utf-8")))
    return out


async def migrate(conn: psycopg.AsyncConnection[Any], schema: str) -> list[str]:
    """Create or upgrade the queue's schema (idempotent, safe to race). Returns what
    it applied, e.g. ``["procrastinate 3.10.0", "stategraph 1"]`` on a fresh database."""
    applied: list[str] = []
    ident = sql.Identifier(schema)
    async with conn.transaction():
        await conn.execute(
            "SELECT pg_advisory_xact_lock(hashtext('stategraph.pgqueue'), hashtext(%s))",
            (schema,),
        )
        await conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(ident))
        await conn.execute(sql.SQL("SET LOCAL search_path TO {}").format(ident))
        await conn.execute(
            "CREATE TABLE IF NOT EXISTS sg_queue_migrations ("
            " component text PRIMARY KEY, version text NOT NULL,"
            " applied_at timestamptz NOT NULL DEFAULT now())"
        )
        rows = await (
            await conn.execute("SELECT component, version FROM sg_queue_migrations")
        ).fetchall()
        done = dict(rows)
        current = procrastinate_version()
        installed = done.get("procrastinate")
        if installed is None:
            await conn.execute(_procrastinate_sql("schema.sql"))
            applied.append(f"procrastinate {current}")
        elif _version_key(installed) < _version_key(current):
            for name, text in _procrastinate_migrations(installed, current):
                await conn.execute(text)
                applied.append(f"procrastinate migration {name}")
        elif _version_key(installed) > _version_key(current):
            raise RuntimeError(
                f"The run queue in schema '{schema}' was set up by procrastinate {installed}, "
                f"newer than the installed {current}: upgrade procrastinate "
                '(pip install -U "stategraph[server-postgres]") on this machine.'
            )
        if installed != current:
            await conn.execute(
                "INSERT INTO sg_queue_migrations (component, version) VALUES ('procrastinate', %s)"
                " ON CONFLICT (component) DO UPDATE SET version = EXCLUDED.version,"
                " applied_at = now()",
                (current,),
            )
        ours = int(done.get("stategraph", "0"))
        if ours > len(MIGRATIONS):
            raise RuntimeError(
                f"The run queue in schema '{schema}' is at migration {ours}, newer than this "
                f"stategraph knows ({len(MIGRATIONS)}): upgrade stategraph on this machine."
            )
        for number in range(ours, len(MIGRATIONS)):
            await conn.execute(MIGRATIONS[number])
            applied.append(f"stategraph {number + 1}")
        if ours != len(MIGRATIONS):
            await conn.execute(
                "INSERT INTO sg_queue_migrations (component, version) VALUES ('stategraph', %s)"
                " ON CONFLICT (component) DO UPDATE SET version = EXCLUDED.version,"
                " applied_at = now()",
                (str(len(MIGRATIONS)),),
            )
    return applied
