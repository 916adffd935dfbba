"""Opening a stategraph PostgreSQL checkpoint database from the command line.

Read-only (``threads``, ``history``, ``show``, a studio without ``--allow-writes``):
the session is opened with ``default_transaction_read_only=on``, so the server itself
refuses any write, and the schema is checked with one query before the saver is
built, so the saver never needs to create or migrate anything. A database without
stategraph's tables (empty, foreign, or LangGraph's) is refused with one line. A
writing command (``resume``, a studio with ``--allow-writes``) checks the same, then
lets the saver apply missing migrations.
"""

from __future__ import annotations

from contextlib import ExitStack
from typing import Any

from stategraph.cli._errors import EXIT_NOT_FOUND, EXIT_USAGE, CliError, missing_extra

__all__ = ["connect_postgres", "import_psycopg", "open_postgres_saver", "read_only_conninfo"]

_SCHEMA_QUERY = (
    "SELECT current_schema(), to_regclass('sg_checkpoint_migrations') IS NOT NULL, "
    "to_regclass('sg_checkpoints') IS NOT NULL, to_regclass('sg_checkpoint_format') IS NOT NULL, "
    "to_regclass('checkpoint_migrations') IS NOT NULL AND to_regclass('checkpoints') IS NOT NULL"
)


def read_only_conninfo(dsn: str) -> str:
    """``dsn`` with ``default_transaction_read_only=on`` added to its options."""
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    options = str(conninfo_to_dict(dsn).get("options") or "")
    return make_conninfo(dsn, options=f"{options} -c default_transaction_read_only=on".strip())


def _schema_version(conn: Any, *, writable: bool) -> None:
    """Refuse a schema without stategraph's checkpoint tables (or one this release cannot
    read without migrating, when read-only)."""
    from stategraph.checkpoint.postgres import _sql

    schema, migrations, checkpoints, has_format, langgraph = conn.execute(_SCHEMA_QUERY).fetchone()
    if not (migrations and checkpoints):
        if langgraph:
            raise CliError(
                f"Schema {schema!r} of this PostgreSQL database holds LangGraph checkpoint "
                "tables (checkpoints, checkpoint_migrations), not stategraph's: copy its "
                "threads with `stategraph import-langgraph postgresql://... --sqlite NEW.sqlite` "
                "(or --postgres DSN), then inspect the copy.",
                EXIT_USAGE,
            )
        raise CliError(
            f"No stategraph checkpoints in schema {schema!r} of this PostgreSQL database (no "
            "'sg_checkpoints' table): give the database (and search_path) your PostgresSaver "
            "writes.",
            EXIT_NOT_FOUND,
        )
    version = int(
        conn.execute("SELECT COALESCE(MAX(v), -1) FROM sg_checkpoint_migrations").fetchone()[0]
    )
    latest = len(_sql.MIGRATIONS) - 1
    if version > latest:
        raise CliError(
            f"The checkpoint schema in {schema!r} is version {version}, newer than this "
            f"stategraph reads ({latest}): upgrade stategraph.",
            EXIT_USAGE,
        )
    if version < latest and not writable:
        raise CliError(
            f"The checkpoint schema in {schema!r} is version {version}, older than this "
            f"stategraph's ({latest}); it would have to be migrated, which a read-only "
            "command never does. Open it once from your application (or with `stategraph "
            "resume`) to migrate it.",
            EXIT_USAGE,
        )
    if has_format:
        row = conn.execute(_sql.CHECK_FORMAT).fetchone()
        if row is not None and int(row[0]) > _sql.VALUES_FORMAT:
            raise CliError(
                f"The checkpoints in {schema!r} are stored in format {row[0]}, written by a "
                f"newer stategraph (this one reads up to {_sql.VALUES_FORMAT}): upgrade "
                "stategraph.",
                EXIT_USAGE,
            )


def import_psycopg() -> Any:
    """The ``psycopg`` module, once it and stategraph's PostgreSQL saver import; raises
    :class:`CliError` (missing dependency) when they do not."""
    try:
        import psycopg

        from stategraph.checkpoint.postgres import PostgresSaver  # noqa: F401
    except ImportError as exc:
        raise missing_extra("PostgreSQL needs psycopg", "postgres", exc) from exc
    return psycopg


def _bad_dsn(exc: Exception) -> CliError:
    return CliError(f"--postgres: not a valid connection string ({exc}).", EXIT_USAGE)


def connect_postgres(conninfo: str, what: str = "PostgreSQL") -> Any:
    """An autocommit connection to ``conninfo`` (``--postgres``); raises :class:`CliError`
    naming ``what`` when it cannot be opened."""
    psycopg = import_psycopg()
    try:
        return psycopg.connect(conninfo, autocommit=True)
    except psycopg.ProgrammingError as exc:
        raise _bad_dsn(exc) from exc
    except psycopg.Error as exc:
        raise CliError(
            f"Cannot connect to {what}: {type(exc).__name__}: {exc}".strip(), EXIT_NOT_FOUND
        ) from exc


def open_postgres_saver(dsn: str, stack: ExitStack, *, writable: bool) -> Any:
    """A ``PostgresSaver`` on ``dsn`` (closed with ``stack``), read-only unless ``writable``.

    Raises :class:`CliError` when psycopg is missing, the database cannot be reached, or
    it holds no stategraph checkpoints (nothing is created or migrated then).
    """
    psycopg = import_psycopg()
    from stategraph.checkpoint.postgres import PostgresSaver

    try:
        conninfo = dsn if writable else read_only_conninfo(dsn)
    except psycopg.ProgrammingError as exc:
        raise _bad_dsn(exc) from exc
    conn = connect_postgres(conninfo)
    stack.callback(conn.close)
    try:
        _schema_version(conn, writable=writable)
    except psycopg.Error as exc:
        raise CliError(
            f"Cannot read the PostgreSQL database: {type(exc).__name__}: {exc}".strip(),
            EXIT_NOT_FOUND,
        ) from exc
    saver = PostgresSaver(conn)
    if not writable:
        # the schema is current (checked above): nothing to create or migrate, and the
        # read-only session would refuse the saver's setup statements
        saver.is_setup = True
    return saver
