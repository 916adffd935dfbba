"""Importing from and into PostgreSQL, all or nothing (issue 20 §4), on the real server.

The source is the database LangGraph 1.2.22 wrote (``tests/data/langgraph/
lg_threads_pg.sql``, a dump of it); the target is written in one transaction, so a
failure leaves nothing, not even the tables.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stategraph.checkpoint.langgraph_import import (
    LangGraphValueError,
    _plan,
    _read,
    import_langgraph,
)
from stategraph.checkpoint.memory import InMemorySaver

from .test_import_all_or_nothing import ALL_THREADS, bad_write_in_hitl, hostile, run
from .test_import_langgraph import DATA, EXPECTED, SOURCE, import_with_graphs, resume_all

# -- PostgreSQL: as source (a dump of what LangGraph wrote) and as target ---------------


@pytest.fixture
def pg_source() -> Iterator[Any]:
    """A schema holding LangGraph's PostgreSQL tables (``lg_threads_pg.sql``)."""
    from saver_harness import PgSchema

    schema = PgSchema()
    with schema.connect() as conn:
        conn.execute((DATA / "lg_threads_pg.sql").read_text())
    try:
        yield schema
    finally:
        schema.drop()


@pytest.fixture
def pg_target() -> Iterator[Any]:
    from saver_harness import PgSchema

    schema = PgSchema()
    try:
        yield schema
    finally:
        schema.drop()


def _tables(schema: Any) -> list[str]:
    with schema.connect() as conn:
        rows = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s ORDER BY 1",
            (schema.name,),
        ).fetchall()
    return [r[0] for r in rows]


@pytest.mark.parametrize("batch", [1, 64])
def test_postgres_source_resumes_as_langgraph_resumes_it(
    pg_source: Any, batch: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_read, "BATCH_THREADS", batch)
    monkeypatch.setattr(_plan, "KEEP_BYTES", 0 if batch == 1 else _plan.KEEP_BYTES)
    saver = InMemorySaver()
    report = import_with_graphs(pg_source.conninfo, saver)
    assert report.threads == ALL_THREADS
    assert resume_all(saver) == EXPECTED


def test_postgres_source_with_a_bad_blob_names_its_channel(
    pg_source: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    with pg_source.connect() as conn:
        conn.execute(
            "UPDATE checkpoint_blobs SET blob = '\\xc1'::bytea "
            "WHERE thread_id = 'fanout-1' AND channel = 'items'"
        )
    with pytest.raises(LangGraphValueError) as info:
        import_langgraph(pg_source.conninfo, InMemorySaver())
    assert (info.value.thread_id, info.value.channel) == ("fanout-1", "items")
    target = tmp_path / "new.sqlite"
    code, _, err = run(capsys, "import-langgraph", pg_source.conninfo, "--sqlite", str(target))
    assert code == 6 and "channel 'items'" in err and not target.exists()


def test_postgres_source_without_its_writes_table_or_unreachable(
    pg_source: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    with pg_source.connect() as conn:
        conn.execute("DROP TABLE checkpoint_writes")
    target = tmp_path / "new.sqlite"
    code, _, err = run(capsys, "import-langgraph", pg_source.conninfo, "--sqlite", str(target))
    assert code == 2 and "'checkpoint_writes'" in err and not target.exists()
    code, _, err = run(
        capsys,
        "import-langgraph",
        "postgresql://postgres@127.0.0.1:1/nowhere",
        "--sqlite",
        str(target),
    )
    assert code == 3 and "Cannot connect to the PostgreSQL source" in err
    assert err.count("\n") == 1 and not target.exists()


def test_postgres_target_is_written_in_one_transaction(
    pg_target: Any, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # a hostile source: the target is not even created
    source = hostile(tmp_path, bad_write_in_hitl)
    code, _, err = run(capsys, "import-langgraph", str(source), "--postgres", pg_target.conninfo)
    assert code == 6 and "thread 'hitl-1'" in err
    assert _tables(pg_target) == []
    # the database refuses sub-1 (the last thread): everything is rolled back
    from stategraph.checkpoint.postgres import PostgresSaver

    with pg_target.connect() as conn:
        PostgresSaver(conn).setup()
        conn.execute(
            "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$"
        )
        conn.execute(
            "CREATE TRIGGER refuse BEFORE INSERT ON sg_checkpoints FOR EACH ROW "
            "WHEN (NEW.thread_id = 'sub-1') EXECUTE FUNCTION refuse()"
        )
    code, _, err = run(capsys, "import-langgraph", str(SOURCE), "--postgres", pg_target.conninfo)
    assert code == 7 and "Writing thread 'sub-1'" in err and "rolled back" in err
    with pg_target.connect() as conn:
        assert conn.execute("SELECT COUNT(*) FROM sg_checkpoints").fetchone()[0] == 0
        assert conn.execute("SELECT COUNT(*) FROM sg_checkpoint_writes").fetchone()[0] == 0
        conn.execute("DROP TRIGGER refuse ON sg_checkpoints")
    code, out, _ = run(capsys, "import-langgraph", str(SOURCE), "--postgres", pg_target.conninfo)
    assert code == 0 and "Imported 4 thread(s), 16 checkpoint(s), 25 pending write(s)" in out


def test_postgres_target_holding_langgraph_tables_is_refused(
    pg_source: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "import-langgraph", str(SOURCE), "--postgres", pg_source.conninfo)
    assert code == 2 and "holds LangGraph checkpoint tables" in err
    assert "sg_checkpoints" not in _tables(pg_source)
