"""Opening the store named by ``stategraph studio --store``.

``--store`` takes a ``SqliteStore`` file or a PostgreSQL URL (``postgresql://...`` or
``postgres://...``) of a database a ``PostgresStore`` writes. The store is only opened
when it is already there: a studio pointed at the wrong database or schema never adds
tables to it. Without ``--allow-writes`` the PostgreSQL session is read-only, so the
server itself refuses any write.
"""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from typing import Any

from stategraph.cli._errors import EXIT_NOT_FOUND, EXIT_USAGE, CliError, missing_extra
from stategraph.cli._pg_checkpoints import read_only_conninfo

__all__ = ["is_postgres_url", "open_store"]

_PG_SCHEMES = ("postgresql://", "postgres://")


def is_postgres_url(spec: str) -> bool:
    """True when ``spec`` is a PostgreSQL URL rather than a file name."""
    return spec.lower().startswith(_PG_SCHEMES)


def open_store(spec: str, stack: ExitStack, *, allow_writes: bool = False) -> Any:
    """The store named by ``--store``: a ``SqliteStore`` file or a ``PostgresStore`` URL.

    It is closed when ``stack`` closes. Raises :class:`CliError` when the file or the
    store's tables do not exist, or the database cannot be reached.
    """
    if is_postgres_url(spec):
        return _open_postgres(spec, stack, allow_writes=allow_writes)
    if not Path(spec).is_file():
        raise CliError(
            f"No such store file: {spec} (give a SqliteStore file or a postgresql:// URL).",
            EXIT_NOT_FOUND,
        )
    from stategraph.store.sqlite import SqliteStore

    return stack.enter_context(SqliteStore.from_conn_string(spec))


def _open_postgres(url: str, stack: ExitStack, *, allow_writes: bool) -> Any:
    try:
        import psycopg

        from stategraph.store.postgres import MIGRATIONS, PostgresStore
    except ImportError as exc:
        raise missing_extra("A PostgreSQL store needs psycopg", "postgres", exc) from exc
    try:
        read_only = read_only_conninfo(url)
    except psycopg.ProgrammingError as exc:
        raise CliError(f"--store: not a valid PostgreSQL URL ({exc}).", EXIT_USAGE) from exc
    if not allow_writes:
        url = read_only
    try:
        conn = psycopg.connect(url, autocommit=True)
    except psycopg.Error as exc:
        raise CliError(
            f"Cannot connect to the PostgreSQL store: {type(exc).__name__}: {exc}",
            EXIT_NOT_FOUND,
        ) from exc
    stack.callback(conn.close)
    version = _schema_version(conn)
    current = len(MIGRATIONS)
    if version > current:
        raise CliError(
            f"The store schema in this database is version {version}, newer than this "
            f"stategraph supports ({current}): upgrade stategraph.",
            EXIT_USAGE,
        )
    store = PostgresStore(conn)
    if version == current:
        # nothing to migrate: skip the setup's DDL (a read-only session refuses it)
        store.is_setup = True
    elif not allow_writes:
        raise CliError(
            f"The store schema in this database is version {version}, older than this "
            f"stategraph's ({current}); it would have to be migrated, which a read-only "
            "studio does not do. Start it with --allow-writes, or open the store once "
            "from your application.",
            EXIT_USAGE,
        )
    else:
        store.setup()
    stack.callback(store.stop_ttl_sweeper)
    return store


def _schema_version(conn: Any) -> int:
    """The store schema version in the connection's schema; refuse a database without
    a stategraph store (naming LangGraph's own ``store`` table when that is there)."""
    rows = conn.execute(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = "
        "current_schema() AND table_name IN ('sg_store', 'sg_store_migrations', 'store')"
    ).fetchall()
    tables = {row[0] for row in rows}
    schema = conn.execute("SELECT current_schema()").fetchone()[0]
    if not {"sg_store", "sg_store_migrations"} <= tables:
        hint = (
            " (its 'store' table is LangGraph's: stategraph's PostgresStore keeps its items "
            "in 'sg_store')"
            if "store" in tables
            else ""
        )
        raise CliError(
            f"No stategraph store in schema {schema!r} of this database: no 'sg_store' "
            f"table{hint}. Give the database (and search_path) your PostgresStore writes.",
            EXIT_NOT_FOUND,
        )
    row = conn.execute("SELECT MAX(v) FROM sg_store_migrations").fetchone()
    return int(row[0] or 0)
