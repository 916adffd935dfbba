"""Inspection commands never write to the database they read, and fail in one line
(issue 20 §5): ``threads``, ``history`` and ``show`` on SQLite and the real PostgreSQL.

A PostgreSQL database is inspected in a read-only session after one query checks the
schema; a SQLite file is opened read-only. Empty, foreign, LangGraph or older-schema
databases are refused with the documented one-line error and exit code, and are left
exactly as they were.
"""

from __future__ import annotations

import sqlite3
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stategraph.checkpoint.sqlite import SqliteSaver
from stategraph.cli._main import main

HERE = Path(__file__).parent
DATA = HERE.parent / "data" / "langgraph"
sys.path.insert(0, str(HERE.parent / "checkpoint"))

INSPECT = (["threads"], ["history", "t-ada"], ["show", "t-ada"])


@pytest.fixture(autouse=True)
def _app_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(HERE))
    monkeypatch.delenv("STATEGRAPH_SQLITE", raising=False)
    monkeypatch.delenv("STATEGRAPH_POSTGRES", raising=False)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err: str, command: str) -> bool:
    return err.count("\n") == 1 and err.startswith(f"stategraph {command}: error: ")


def fill(saver: Any) -> None:
    from approval_app import builder

    graph = builder.compile(checkpointer=saver)
    for thread, user in (("t-ada", "ada"), ("t-bob", "bob")):
        graph.invoke(
            {"items": []}, {"configurable": {"thread_id": thread}, "metadata": {"user": user}}
        )


# -- PostgreSQL ----------------------------------------------------------------------


@pytest.fixture
def schema() -> Iterator[Any]:
    from saver_harness import PgSchema

    made = PgSchema()
    try:
        yield made
    finally:
        made.drop()


def tables(schema: Any) -> list[str]:
    with schema.connect() as conn:
        rows = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s ORDER BY 1",
            (schema.name,),
        ).fetchall()
    return [r[0] for r in rows]


def test_an_empty_postgres_database_is_refused_and_left_empty(
    schema: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    for command in INSPECT:
        code, out, err = run(capsys, *command, "--postgres", schema.conninfo)
        assert (code, out) == (3, ""), command
        assert one_line(err, command[0])
        assert f"No stategraph checkpoints in schema '{schema.name}'" in err
    code, _, err = run(capsys, "resume", "approval_app:graph", "t-ada", "--value", "true",
                       "--postgres", schema.conninfo)  # fmt: skip
    assert code == 3 and "No stategraph checkpoints" in err
    assert tables(schema) == []  # before: seven sg_* tables after the first command


def test_a_langgraph_postgres_database_is_refused_in_one_line(
    schema: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    with schema.connect() as conn:
        conn.execute((DATA / "lg_threads_pg.sql").read_text())
    before = tables(schema)
    for command in INSPECT:
        code, out, err = run(capsys, *command, "--postgres", schema.conninfo)
        assert (code, out) == (2, "")
        assert one_line(err, command[0]) and "Traceback" not in err
        assert "holds LangGraph checkpoint tables" in err and "import-langgraph" in err
    assert tables(schema) == before


def test_inspection_needs_no_write_privilege(
    schema: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """Run as a role that may only SELECT: every inspection command works."""
    import psycopg

    from stategraph.checkpoint.postgres import PostgresSaver

    with schema.connect() as conn:
        fill(PostgresSaver(conn))
    role = f"sg_reader_{uuid.uuid4().hex[:12]}"
    with schema.connect() as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN")
        conn.execute(f"GRANT USAGE ON SCHEMA {schema.name} TO {role}")
        conn.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA {schema.name} TO {role}")
    try:
        reader = psycopg.conninfo.make_conninfo(schema.conninfo, user=role)
        code, out, _ = run(capsys, "threads", "--postgres", reader)
        assert code == 0 and {ln.split()[0] for ln in out.splitlines()[2:]} == {"t-ada", "t-bob"}
        code, out, _ = run(capsys, "history", "t-ada", "--postgres", reader, "--limit", "2")
        assert code == 0 and len(out.splitlines()) == 4
        code, out, _ = run(capsys, "show", "t-ada", "--postgres", reader)
        assert code == 0 and "next: review" in out
    finally:
        with schema.connect() as conn:
            conn.execute(f"DROP OWNED BY {role}")
            conn.execute(f"DROP ROLE {role}")


def test_an_older_postgres_schema_is_not_migrated_by_inspection(
    schema: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    from stategraph.checkpoint.postgres import PostgresSaver

    with schema.connect() as conn:
        fill(PostgresSaver(conn))
        conn.execute(
            "DELETE FROM sg_checkpoint_migrations WHERE v = (SELECT MAX(v) FROM sg_checkpoint_migrations)"
        )
        before = conn.execute(
            "SELECT array_agg(v ORDER BY v) FROM sg_checkpoint_migrations"
        ).fetchone()
    code, _, err = run(capsys, "threads", "--postgres", schema.conninfo)
    assert code == 2 and "older than this stategraph's" in err and one_line(err, "threads")
    with schema.connect() as conn:
        after = conn.execute(
            "SELECT array_agg(v ORDER BY v) FROM sg_checkpoint_migrations"
        ).fetchone()
    assert after == before


def test_the_studio_refuses_an_empty_postgres_database(
    schema: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("uvicorn")
    code, _, err = run(capsys, "studio", "--postgres", schema.conninfo, "--port", "1")
    assert code == 3 and "No stategraph checkpoints" in err and one_line(err, "studio")
    assert tables(schema) == []


# -- SQLite ----------------------------------------------------------------------------


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "cp.sqlite"
    with SqliteSaver.from_conn_string(str(path)) as saver:
        fill(saver)
    return path


def snapshot(path: Path) -> tuple[bytes, bytes]:
    """The file, and its write-ahead log (SQLite's readers may create an empty one)."""
    wal = Path(f"{path}-wal")
    return path.read_bytes(), wal.read_bytes() if wal.exists() else b""


def test_an_older_sqlite_file_is_not_migrated_by_inspection(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    conn = sqlite3.connect(db)
    conn.execute("DELETE FROM schema_migrations WHERE v = (SELECT MAX(v) FROM schema_migrations)")
    conn.commit()
    conn.close()
    before = snapshot(db)
    for command in INSPECT:
        code, _, err = run(capsys, *command, "--sqlite", str(db))
        assert code == 2 and "written by an older stategraph" in err and one_line(err, command[0])
    assert snapshot(db) == before


def test_a_sqlite_file_in_another_journal_mode_is_not_converted(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.close()
    before = snapshot(db)
    code, _, err = run(capsys, "threads", "--sqlite", str(db))
    assert code == 2 and "journal mode 'delete'" in err and one_line(err, "threads")
    assert snapshot(db) == before


def test_a_sqlite_file_is_read_without_a_write(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db.chmod(0o444)  # even a file nobody may write is read
    try:
        for command in INSPECT:
            code, _, err = run(capsys, *command, "--sqlite", str(db))
            assert code == 0, err
    finally:
        db.chmod(0o644)


def test_a_corrupt_value_is_one_line_with_exit_code_6(
    db: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    conn = sqlite3.connect(db)
    conn.execute("UPDATE blobs SET blob = x'c1' WHERE thread_id = 't-ada' AND blob IS NOT NULL")
    conn.commit()
    conn.close()
    code, out, err = run(capsys, "show", "t-ada", "--sqlite", str(db))
    assert (code, out) == (6, "")
    assert one_line(err, "show") and "A stored value cannot be read" in err


# -- numeric options --------------------------------------------------------------------


@pytest.mark.parametrize("value", ["-5", "0", "x", "1.5", "1e309"])
def test_limit_must_be_a_whole_number_of_at_least_one(
    db: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    for command in (["threads"], ["history", "t-ada"]):
        with pytest.raises(SystemExit) as info:
            main([*command, "--sqlite", str(db), "--limit", value])
        err = capsys.readouterr().err
        assert info.value.code == 2
        assert "argument --limit: expected a whole number of at least 1" in err


@pytest.mark.parametrize("value", ["0", "-1", "65536", "http"])
def test_the_studio_port_is_checked(capsys: pytest.CaptureFixture[str], value: str) -> None:
    with pytest.raises(SystemExit) as info:
        main(["studio", "--sqlite", "x.sqlite", "--port", value])
    assert info.value.code == 2
    assert "argument --port: expected a whole number from 1 to 65535" in capsys.readouterr().err
