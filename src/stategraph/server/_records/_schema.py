"""The server's tables (SQLite and PostgreSQL spell them the same way).

JSON values are stored as text, times as epoch seconds (``REAL`` / ``DOUBLE
PRECISION``); the API turns them into ISO 8601. Tables are created with ``IF NOT
EXISTS`` on start-up.
"""

from __future__ import annotations

__all__ = ["ddl"]

_ASSISTANT_COLUMNS = """graph_id TEXT NOT NULL,
        name TEXT NOT NULL,
        description TEXT,
        config TEXT NOT NULL,
        context TEXT NOT NULL,
        metadata TEXT NOT NULL,"""
"""What an assistant is, kept again in each of its versions."""

_TABLES = (
    """CREATE TABLE IF NOT EXISTS sg_srv_assistants (
        assistant_id TEXT PRIMARY KEY,
        {assistant_columns}
        version INTEGER NOT NULL,
        created_at {real} NOT NULL,
        updated_at {real} NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS sg_srv_assistant_versions (
        assistant_id TEXT NOT NULL,
        version INTEGER NOT NULL,
        {assistant_columns}
        created_at {real} NOT NULL,
        PRIMARY KEY (assistant_id, version)
    )""",
    """CREATE TABLE IF NOT EXISTS sg_srv_threads (
        thread_id TEXT PRIMARY KEY,
        created_at {real} NOT NULL,
        updated_at {real} NOT NULL,
        state_updated_at {real} NOT NULL,
        metadata TEXT NOT NULL,
        status TEXT NOT NULL,
        config TEXT NOT NULL,
        state_values TEXT,
        interrupts TEXT,
        error TEXT,
        ttl_minutes {real},
        expires_at {real}
    )""",
    "CREATE INDEX IF NOT EXISTS sg_srv_threads_created ON sg_srv_threads (created_at)",
    "CREATE INDEX IF NOT EXISTS sg_srv_threads_expires ON sg_srv_threads (expires_at)",
    """CREATE TABLE IF NOT EXISTS sg_srv_runs (
        run_id TEXT PRIMARY KEY,
        thread_id TEXT,
        assistant_id TEXT NOT NULL,
        created_at {real} NOT NULL,
        updated_at {real} NOT NULL,
        status TEXT NOT NULL,
        metadata TEXT NOT NULL,
        kwargs TEXT NOT NULL,
        multitask_strategy TEXT NOT NULL,
        result TEXT,
        worker_id TEXT
    )""",
    "CREATE INDEX IF NOT EXISTS sg_srv_runs_thread ON sg_srv_runs (thread_id, created_at)",
    """CREATE TABLE IF NOT EXISTS sg_srv_crons (
        cron_id TEXT PRIMARY KEY,
        assistant_id TEXT NOT NULL,
        thread_id TEXT,
        user_id TEXT,
        schedule TEXT NOT NULL,
        timezone TEXT,
        payload TEXT NOT NULL,
        metadata TEXT NOT NULL,
        end_time {real},
        next_run_date {real},
        on_run_completed TEXT,
        enabled INTEGER NOT NULL,
        created_at {real} NOT NULL,
        updated_at {real} NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS sg_srv_events (
        run_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        event TEXT NOT NULL,
        data TEXT NOT NULL,
        created_at {real} NOT NULL,
        PRIMARY KEY (run_id, seq)
    )""",
)


def ddl(dialect: str) -> list[str]:
    """The statements that create the tables in ``dialect`` (``sqlite``/``postgres``)."""
    real = "REAL" if dialect == "sqlite" else "DOUBLE PRECISION"
    return [stmt.format(real=real, assistant_columns=_ASSISTANT_COLUMNS) for stmt in _TABLES]
