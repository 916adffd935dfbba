"""Importing from LangGraph is all or nothing and says what failed (issue 20 §4).

Hostile LangGraph databases are made from the real one LangGraph 1.2 wrote
(``tests/data/langgraph``): a bad value in a later thread, a bad channel in a checkpoint
body, a missing table, ids of the wrong type... Every failure names the source thread,
checkpoint and channel, leaves nothing in the target (no file, no table, no thread),
and the command prints one line with its documented exit code.
"""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import ormsgpack
import pytest

from stategraph.checkpoint.langgraph_import import (
    ImportReport,
    LangGraphNotFound,
    LangGraphSourceError,
    LangGraphTargetError,
    LangGraphValueError,
    _plan,
    _read,
    check_langgraph,
    import_langgraph,
)
from stategraph.checkpoint.memory import InMemorySaver
from stategraph.checkpoint.serde._pyunpack import unpack
from stategraph.checkpoint.serde.base import DeserializationError
from stategraph.checkpoint.sqlite import SqliteSaver
from stategraph.cli._main import main

from .test_import_langgraph import EXPECTED, SOURCE, import_with_graphs, resume_all

ALL_THREADS = ["chat-1", "fanout-1", "hitl-1", "sub-1"]


class Plain:
    """An application class the stategraph serializer cannot store (not registered)."""

    def __init__(self, x: int) -> None:
        self.x = x


# -- hostile copies of the LangGraph database ---------------------------------------


def _latest(conn: sqlite3.Connection, thread: str) -> tuple[int, dict[str, Any]]:
    rowid, blob = conn.execute(
        "SELECT rowid, checkpoint FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' "
        "ORDER BY checkpoint_id DESC LIMIT 1",
        (thread,),
    ).fetchone()
    return rowid, unpack(blob, lambda code, data: ormsgpack.Ext(code, data))


def _set_body(conn: sqlite3.Connection, rowid: int, body: dict[str, Any]) -> None:
    packed = ormsgpack.packb(body, option=ormsgpack.OPT_NON_STR_KEYS)
    conn.execute("UPDATE checkpoints SET checkpoint = ? WHERE rowid = ?", (packed, rowid))


def _latest_id(conn: sqlite3.Connection, thread: str) -> str:
    return str(
        conn.execute(
            "SELECT MAX(checkpoint_id) FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ''",
            (thread,),
        ).fetchone()[0]
    )


def bad_write_in_hitl(conn: sqlite3.Connection) -> None:
    """The interrupt write of hitl-1 (the third thread) is not msgpack."""
    conn.execute(
        "UPDATE writes SET value = x'c1c1c1' WHERE thread_id = 'hitl-1' "
        "AND channel = '__interrupt__'"
    )


def bad_channel_in_fanout(conn: sqlite3.Connection) -> None:
    """Channel 'items' of fanout-1's latest checkpoint is a malformed set extension."""
    rowid, body = _latest(conn, "fanout-1")
    body["channel_values"]["items"] = ormsgpack.Ext(5, ormsgpack.packb(["builtins", "set", 5]))
    _set_body(conn, rowid, body)


def huge_version(conn: sqlite3.Connection) -> None:
    rowid, body = _latest(conn, "hitl-1")
    body["channel_versions"]["items"] = 1e300
    _set_body(conn, rowid, body)


def negative_version(conn: sqlite3.Connection) -> None:
    rowid, body = _latest(conn, "hitl-1")
    body["channel_versions"]["items"] = -3
    _set_body(conn, rowid, body)


def versions_not_a_mapping(conn: sqlite3.Connection) -> None:
    rowid, body = _latest(conn, "hitl-1")
    body["channel_versions"] = ["items"]
    _set_body(conn, rowid, body)


def old_pending_sends(conn: sqlite3.Connection) -> None:
    rowid, body = _latest(conn, "hitl-1")
    body["pending_sends"] = [["node", 1]]
    _set_body(conn, rowid, body)


def pickled_value(conn: sqlite3.Connection) -> None:
    conn.execute("UPDATE writes SET type = 'pickle' WHERE thread_id = 'fanout-1'")


def metadata_a_list(conn: sqlite3.Connection) -> None:
    conn.execute("UPDATE checkpoints SET metadata = '[1, 2]' WHERE thread_id = 'hitl-1'")


def metadata_not_json(conn: sqlite3.Connection) -> None:
    conn.execute("UPDATE checkpoints SET metadata = '{\"step\": ' WHERE thread_id = 'sub-1'")


def thread_id_a_blob(conn: sqlite3.Connection) -> None:
    conn.execute("UPDATE checkpoints SET thread_id = x'7375622d31' WHERE thread_id = 'sub-1'")


def nul_in_thread_id(conn: sqlite3.Connection) -> None:
    for table in ("checkpoints", "writes"):
        conn.execute(
            f"UPDATE {table} SET thread_id = 'sub' || char(0) || '1' WHERE thread_id = 'sub-1'"
        )


def write_index_text(conn: sqlite3.Connection) -> None:
    conn.execute(
        "UPDATE writes SET idx = 'first' WHERE rowid = "
        "(SELECT MIN(rowid) FROM writes WHERE thread_id = 'chat-1')"
    )


def no_writes_table(conn: sqlite3.Connection) -> None:
    conn.execute("DROP TABLE writes")


def no_channel_column(conn: sqlite3.Connection) -> None:
    conn.execute("ALTER TABLE writes DROP COLUMN channel")


def no_checkpoints_table(conn: sqlite3.Connection) -> None:
    conn.execute("DROP TABLE checkpoints")


def hostile(tmp_path: Path, mutate: Callable[[sqlite3.Connection], None]) -> Path:
    path = tmp_path / f"{mutate.__name__}.sqlite"
    shutil.copy(SOURCE, path)
    conn = sqlite3.connect(path)
    mutate(conn)
    conn.commit()
    conn.close()
    return path


# -- fixtures --------------------------------------------------------------------------


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def saver(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "memory":
        yield InMemorySaver()
    elif request.param == "sqlite":
        with SqliteSaver.from_conn_string(str(tmp_path / "target.sqlite")) as target:
            yield target
    else:
        from saver_harness import PgSchema

        from stategraph.checkpoint.postgres import PostgresSaver

        schema = PgSchema()
        conn = schema.connect()
        try:
            yield PostgresSaver(conn)
        finally:
            conn.close()
            schema.drop()


def everything(saver: Any) -> list[tuple[str, str, str]]:
    return sorted(
        (
            t.config["configurable"]["thread_id"],
            t.config["configurable"]["checkpoint_ns"],
            t.config["configurable"]["checkpoint_id"],
        )
        for t in saver.list(None)
    )


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# -- the Python API ----------------------------------------------------------------------


def test_a_bad_value_in_a_later_thread_imports_nothing_and_names_it(
    tmp_path: Path, saver: Any
) -> None:
    source = hostile(tmp_path, bad_write_in_hitl)
    conn = sqlite3.connect(source)
    checkpoint = _latest_id(conn, "hitl-1")
    conn.close()
    with pytest.raises(LangGraphValueError) as info:
        import_langgraph(source, saver)
    err = info.value
    assert isinstance(err, DeserializationError)  # what the importer always raised
    assert (err.thread_id, err.checkpoint_id, err.channel) == (
        "hitl-1",
        checkpoint,
        "__interrupt__",
    )
    assert f"thread 'hitl-1', checkpoint '{checkpoint}'" in str(err)
    assert "channel '__interrupt__'" in str(err)
    assert everything(saver) == []  # chat-1 and fanout-1 were not written either


def test_a_bad_channel_in_a_checkpoint_body_is_named(tmp_path: Path) -> None:
    source = hostile(tmp_path, bad_channel_in_fanout)
    conn = sqlite3.connect(source)
    checkpoint = _latest_id(conn, "fanout-1")
    conn.close()
    saver = InMemorySaver()
    with pytest.raises(LangGraphValueError) as info:
        import_langgraph(source, saver)
    assert (info.value.thread_id, info.value.checkpoint_id, info.value.channel) == (
        "fanout-1",
        checkpoint,
        "items",
    )
    assert "Malformed LangGraph extension" in str(info.value)
    assert everything(saver) == []


def test_every_value_is_checked_before_the_first_write(tmp_path: Path) -> None:
    """A bad channel version of the third thread: nothing of the first two is written."""
    source = hostile(tmp_path, huge_version)
    saver = InMemorySaver()
    with pytest.raises(LangGraphValueError, match=r"channel 'items'.*version|version.*'items'"):
        import_langgraph(source, saver)
    assert everything(saver) == []


def test_threads_are_read_a_batch_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A source too big to keep is checked whole, then read again a batch of threads at a
    time (one snapshot): the same import, and a bad value in the last batch still
    writes nothing."""
    monkeypatch.setattr(_read, "BATCH_THREADS", 1)
    monkeypatch.setattr(_plan, "KEEP_BYTES", 0)
    saver = InMemorySaver()
    assert import_langgraph(SOURCE, saver) == ImportReport(
        threads=ALL_THREADS, checkpoints=16, writes=25
    )
    with_graphs = InMemorySaver()
    import_with_graphs(SOURCE, with_graphs)
    assert resume_all(with_graphs) == EXPECTED
    other = InMemorySaver()
    with pytest.raises(LangGraphValueError, match="thread 'hitl-1'"):
        import_langgraph(hostile(tmp_path, bad_write_in_hitl), other)
    assert everything(other) == []


def test_check_langgraph_is_a_dry_run(tmp_path: Path) -> None:
    assert check_langgraph(SOURCE) == ImportReport(threads=ALL_THREADS, checkpoints=16, writes=25)
    assert check_langgraph(SOURCE, threads=["sub-1"]).threads == ["sub-1"]
    with pytest.raises(LangGraphValueError, match="channel 'items'"):
        check_langgraph(hostile(tmp_path, bad_channel_in_fanout))


class RefusingSaver(InMemorySaver):
    """A real in-memory saver whose storage fails on one thread (a full disk, say)."""

    def __init__(self, refuse: str) -> None:
        super().__init__()
        self.refuse = refuse

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        if config["configurable"]["thread_id"] == self.refuse:
            raise OSError(28, "No space left on device")
        return super().put(config, checkpoint, metadata, new_versions)


def test_a_failing_write_removes_what_the_import_wrote_and_keeps_what_was_there() -> None:
    saver = RefusingSaver("sub-1")
    import_langgraph(SOURCE, saver, threads=["fanout-1"])
    before = everything(saver)
    with pytest.raises(LangGraphTargetError) as info:
        import_langgraph(SOURCE, saver)
    message = str(info.value)
    assert info.value.thread_id == "sub-1"
    assert "No space left on device" in message
    assert "the 3 thread(s) written were removed again" in message  # chat-1, hitl-1, sub-1
    assert everything(saver) == before  # fanout-1, imported before, untouched


def test_running_the_import_again_skips_what_is_there_and_refuses_a_partial_thread() -> None:
    saver = InMemorySaver()
    first = import_langgraph(SOURCE, saver)
    assert first == ImportReport(threads=ALL_THREADS, checkpoints=16, writes=25)
    again = import_langgraph(SOURCE, saver)
    assert again == ImportReport(skipped=ALL_THREADS)
    # hitl-1 loses its last checkpoint (an earlier import stopped part-way)
    latest = saver.get_tuple({"configurable": {"thread_id": "hitl-1", "checkpoint_ns": ""}})
    assert latest is not None
    del saver.storage["hitl-1"][""][latest.config["configurable"]["checkpoint_id"]]
    before = everything(saver)
    with pytest.raises(LangGraphTargetError, match=r"'hitl-1'.*delete_thread"):
        import_langgraph(SOURCE, saver)
    assert everything(saver) == before
    saver.delete_thread("hitl-1")
    assert import_langgraph(SOURCE, saver).threads == ["hitl-1"]


def test_a_thread_asked_for_that_is_not_there_imports_nothing() -> None:
    saver = InMemorySaver()
    with pytest.raises(LangGraphNotFound, match="'nope'"):
        import_langgraph(SOURCE, saver, threads=["chat-1", "nope"])
    assert everything(saver) == []


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (no_writes_table, "no 'writes' table"),
        (no_checkpoints_table, "no 'checkpoints' table"),
        (no_channel_column, "no 'channel' column"),
    ],
)
def test_a_source_missing_a_table_or_column_is_named(
    tmp_path: Path, mutate: Callable[[sqlite3.Connection], None], message: str
) -> None:
    with pytest.raises(LangGraphSourceError, match=message):
        import_langgraph(hostile(tmp_path, mutate), InMemorySaver())


# -- the command line: one line, documented exit codes, no file left behind -----------


HOSTILE_SOURCES = [
    (bad_write_in_hitl, 6, "thread 'hitl-1'"),
    (bad_channel_in_fanout, 6, "channel 'items'"),
    (huge_version, 6, "version"),
    (negative_version, 6, "version -3"),
    (versions_not_a_mapping, 6, "channel versions of thread 'hitl-1'"),
    (old_pending_sends, 6, "pending sends"),
    (pickled_value, 6, "'pickle'"),
    (metadata_a_list, 6, "metadata of thread 'hitl-1'"),
    (metadata_not_json, 6, "metadata"),
    (thread_id_a_blob, 6, "not text"),
    (nul_in_thread_id, 6, "NUL character"),
    (write_index_text, 6, "not a number"),
    (no_writes_table, 2, "no 'writes' table"),
    (no_checkpoints_table, 2, "no 'checkpoints' table"),
    (no_channel_column, 2, "no 'channel' column"),
]


@pytest.mark.parametrize(("mutate", "code", "message"), HOSTILE_SOURCES)
def test_hostile_sources_print_one_line_and_create_nothing(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    mutate: Callable[[sqlite3.Connection], None],
    code: int,
    message: str,
) -> None:
    source = hostile(tmp_path, mutate)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    target = out_dir / "new.sqlite"
    got, out, err = run(capsys, "import-langgraph", str(source), "--sqlite", str(target))
    assert (got, out) == (code, "")
    assert err.count("\n") == 1 and err.startswith("stategraph import-langgraph: error: ")
    assert message in err and "Traceback" not in err
    assert list(out_dir.iterdir()) == []  # no target, no temporary file


@pytest.mark.parametrize(
    ("make", "code", "message"),
    [
        (lambda p: p.write_text("hello, no database\n" * 50), 2, "not a database"),
        (lambda p: p.write_bytes(b""), 2, "no 'checkpoints' table"),
        (lambda p: p.mkdir(), 2, "is not a file"),
        (lambda p: None, 3, "No such LangGraph SQLite file"),
    ],
    ids=["text-file", "empty-file", "directory", "missing"],
)
def test_a_source_that_is_not_a_langgraph_database(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    make: Callable[[Path], Any],
    code: int,
    message: str,
) -> None:
    source = tmp_path / "source.sqlite"
    make(source)
    target = tmp_path / "new.sqlite"
    got, _, err = run(capsys, "import-langgraph", str(source), "--sqlite", str(target))
    assert got == code and message in err and err.count("\n") == 1
    assert not target.exists()


def test_a_stategraph_database_as_source_or_a_foreign_target_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ours = tmp_path / "ours.sqlite"
    assert run(capsys, "import-langgraph", str(SOURCE), "--sqlite", str(ours))[0] == 0
    code, _, err = run(capsys, "import-langgraph", str(ours), "--sqlite", str(tmp_path / "x"))
    assert code == 2 and "is a stategraph checkpoint database" in err
    foreign = tmp_path / "foreign.sqlite"
    conn = sqlite3.connect(foreign)
    conn.execute("CREATE TABLE invoices (id INTEGER)")
    conn.commit()
    conn.close()
    before = foreign.read_bytes()
    code, _, err = run(capsys, "import-langgraph", str(SOURCE), "--sqlite", str(foreign))
    assert code == 2 and "holds other tables (invoices)" in err
    assert foreign.read_bytes() == before
    copy = tmp_path / "lg.sqlite"
    shutil.copy(SOURCE, copy)
    code, _, err = run(capsys, "import-langgraph", str(SOURCE), "--sqlite", str(copy))
    assert code == 2 and "holds LangGraph checkpoint tables" in err
    code, _, err = run(
        capsys, "import-langgraph", str(SOURCE), "--sqlite", str(tmp_path / "no" / "x.sqlite")
    )
    assert code == 3 and "No such folder" in err


def test_a_write_failing_into_a_new_file_leaves_no_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An allowed class the target cannot store: found while writing, nothing is left."""

    def plain_item(conn: sqlite3.Connection) -> None:
        rowid, body = _latest(conn, "sub-1")
        ext = ormsgpack.Ext(2, ormsgpack.packb([__name__, "Plain", {"x": 1}]))
        body["channel_values"]["items"] = [ext]
        _set_body(conn, rowid, body)

    source = hostile(tmp_path, plain_item)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    target = out_dir / "new.sqlite"
    allow = f"{__name__}:Plain"
    code, _, err = run(
        capsys, "import-langgraph", str(source), "--sqlite", str(target), "--allow", allow
    )
    assert code == 7 and "thread 'sub-1'" in err and "not serializable" in err
    assert "Nothing was imported" in err and err.count("\n") == 1
    assert list(out_dir.iterdir()) == []
    # without --allow the value is plain data, and the import goes through
    code, out, _ = run(capsys, "import-langgraph", str(source), "--sqlite", str(target))
    assert code == 0 and "Imported 4 thread(s)" in out
    assert sorted(p.name for p in out_dir.iterdir()) == ["new.sqlite"]


def _refuse_thread_trigger_sqlite(path: Path, thread: str) -> None:
    conn = sqlite3.connect(path)
    conn.execute(
        f"CREATE TRIGGER refuse BEFORE INSERT ON checkpoints WHEN NEW.thread_id = '{thread}' "
        "BEGIN SELECT RAISE(ABORT, 'refused by the test'); END"
    )
    conn.commit()
    conn.close()


def test_a_failing_write_into_an_existing_file_removes_the_threads_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "existing.sqlite"
    code, _, _ = run(
        capsys, "import-langgraph", str(SOURCE), "--sqlite", str(target), "--thread", "fanout-1"
    )
    assert code == 0
    _refuse_thread_trigger_sqlite(target, "sub-1")
    with SqliteSaver.from_conn_string(str(target)) as saver:
        before = everything(saver)
    code, out, err = run(capsys, "import-langgraph", str(SOURCE), "--sqlite", str(target))
    assert (code, out) == (7, "")
    assert "Writing thread 'sub-1'" in err and "refused by the test" in err
    assert "the 3 thread(s) written were removed again" in err
    with SqliteSaver.from_conn_string(str(target)) as saver:
        assert everything(saver) == before
        assert {t.config["configurable"]["thread_id"] for t in saver.list(None)} == {"fanout-1"}


def test_cli_reports_skipped_threads(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "t.sqlite"
    assert run(capsys, "import-langgraph", str(SOURCE), "--sqlite", str(target))[0] == 0
    code, out, _ = run(capsys, "import-langgraph", str(SOURCE), "--sqlite", str(target))
    assert code == 0
    assert out.strip().endswith("skipped 4 already imported: chat-1, fanout-1, hitl-1, sub-1")
