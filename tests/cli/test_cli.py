"""The ``stategraph`` command line, run in-process (and once as a real console script)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from stategraph.checkpoint.sqlite import SqliteSaver
from stategraph.cli._main import COMMANDS, build_parser, main

HERE = Path(__file__).parent


@pytest.fixture(autouse=True)
def _app_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(HERE))
    monkeypatch.delenv("STATEGRAPH_SQLITE", raising=False)
    monkeypatch.delenv("STATEGRAPH_POSTGRES", raising=False)


@pytest.fixture
def db(tmp_path: Path) -> str:
    """A SQLite file holding two threads paused in review (ada's and bob's)."""
    from approval_app import builder

    path = str(tmp_path / "cp.sqlite")
    with SqliteSaver.from_conn_string(path) as saver:
        graph = builder.compile(checkpointer=saver)
        for thread, user in (("t-ada", "ada"), ("t-bob", "bob")):
            graph.invoke(
                {"items": []},
                {"configurable": {"thread_id": thread}, "metadata": {"user": user}},
            )
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_help_lists_commands_and_exit_codes(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    for name in ("draw", "threads", "history", "show", "resume"):
        assert name in out
    assert "4  resume: the run paused again on an interrupt" in out
    assert (
        run(
            capsys,
        )[0]
        == 2
    )  # no command: usage on stderr


def test_subcommands_plug_in_as_modules():
    assert COMMANDS[:5] == ("draw", "threads", "history", "show", "resume")
    parser = build_parser()
    choices = parser._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert {"draw", "threads", "history", "show", "resume"} <= set(choices)


def test_each_command_registers_its_help_description_and_run():
    import importlib

    parser = build_parser()
    action = parser._subparsers._group_actions[0]  # type: ignore[union-attr]
    helps = {a.dest: a.help for a in action._choices_actions}
    for module_name in COMMANDS:
        module = importlib.import_module(f"stategraph.cli._{module_name}")
        name = module_name.replace("_", "-")  # import_langgraph -> import-langgraph
        sub = action.choices[name]
        assert helps[name] == module.HELP
        assert sub.description == module.DESCRIPTION
        assert sub.get_default("_run") is module.run
    assert helps["history"] == "list the checkpoints of a thread"
    assert action.choices["show"].get_default("_run").__module__ == "stategraph.cli._show"


def test_draw_formats(capsys, tmp_path):
    code, out, _ = run(capsys, "draw", "approval_app:graph")
    assert code == 0 and out.startswith("---\nconfig:") and "review -.-> publish;" in out
    code, out, _ = run(capsys, "draw", "approval_app:builder", "--format", "ascii")
    assert code == 0 and "| review |" in out
    code, out, _ = run(capsys, "draw", "approval_app:make_graph", "-f", "json")
    assert code == 0 and {n["id"] for n in json.loads(out)["nodes"]} >= {"draft", "publish"}
    svg = tmp_path / "g.svg"
    assert run(capsys, "draw", "approval_app:graph", "-f", "svg", "-o", str(svg))[0] == 0
    assert svg.read_text().startswith("<svg")
    png = tmp_path / "g.png"
    assert run(capsys, "draw", "approval_app:graph", "-f", "png", "-o", str(png))[0] == 0
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_draw_by_file_path_and_xray(capsys, tmp_path):
    app = tmp_path / "nested_app.py"
    app.write_text(
        "from approval_app import builder\n"
        "from stategraph.graph import StateGraph, START\n"
        "from approval_app import State\n"
        "outer = StateGraph(State)\n"
        "outer.add_node('inner', builder.compile())\n"
        "outer.add_edge(START, 'inner')\n"
        "graph = outer.compile()\n"
    )
    code, out, _ = run(capsys, "draw", f"{app}:graph", "--xray")
    assert code == 0 and "subgraph inner" in out
    code, out, _ = run(capsys, "draw", f"{app}:graph", "--xray", "0")
    assert code == 0 and "subgraph" not in out


def test_draw_errors_are_one_line(capsys, tmp_path):
    code, _, err = run(capsys, "draw", "approval_app:missing")
    assert code == 2 and "has no attribute 'missing'. Graphs found there: builder, graph" in err
    assert "Traceback" not in err
    code, _, err = run(capsys, "draw", "no_such_module:graph")
    assert code == 2 and "Cannot import module 'no_such_module'" in err
    code, _, err = run(capsys, "draw", "approval_app")
    assert code == 2 and "use module:attribute" in err
    code, _, err = run(capsys, "draw", "approval_app:not_a_graph")
    assert code == 2 and "is a int, not a graph" in err
    broken = tmp_path / "broken.py"
    broken.write_text("raise ValueError('boom at import')\n")
    code, _, err = run(capsys, "draw", f"{broken}:graph")
    assert code == 1 and "ValueError: boom at import" in err
    code, _, err = run(capsys, "draw", str(tmp_path / "nope.py") + ":graph")
    assert code == 2 and "No such file" in err


def test_threads_table_json_and_filter(capsys, db):
    code, out, _ = run(capsys, "threads", "--sqlite", db)
    lines = out.splitlines()
    assert code == 0 and lines[0].split() == [
        "THREAD",
        "CHECKPOINTS",
        "STEP",
        "SOURCE",
        "UPDATED",
        "NEXT",
        "INTERRUPTS",
    ]
    assert {ln.split()[0] for ln in lines[2:]} == {"t-ada", "t-bob"}
    code, out, _ = run(capsys, "threads", "--sqlite", db, "--json", "--filter", "user=ada")
    rows = json.loads(out)
    assert [r["thread_id"] for r in rows] == ["t-ada"]
    assert rows[0]["next"] == ["review"] and rows[0]["interrupts"] == 1
    assert rows[0]["checkpoints"] == 3 and rows[0]["step"] == 1
    code, out, _ = run(capsys, "threads", "--sqlite", db, "--filter", "user=nobody")
    assert code == 0 and "No threads" in out
    code, _, err = run(capsys, "threads", "--sqlite", db, "--filter", "oops")
    assert code == 2 and "KEY=VALUE" in err


def test_database_must_exist_and_be_named(capsys, tmp_path, monkeypatch):
    code, _, err = run(capsys, "threads", "--sqlite", str(tmp_path / "missing.sqlite"))
    assert code == 3 and "No such SQLite file" in err
    assert not (tmp_path / "missing.sqlite").exists()
    code, _, err = run(capsys, "threads")
    assert code == 2 and "--sqlite FILE or --postgres DSN" in err


def test_environment_names_the_database(capsys, db, monkeypatch):
    monkeypatch.setenv("STATEGRAPH_SQLITE", db)
    assert run(capsys, "threads")[0] == 0


def test_history(capsys, db):
    code, out, _ = run(capsys, "history", "t-ada", "--sqlite", db, "--json")
    rows = json.loads(out)
    assert code == 0 and [r["step"] for r in rows] == [1, 0, -1]
    assert [r["next"] for r in rows] == [["review"], ["draft"], ["__start__"]]
    assert rows[0]["interrupts"] == [{"items": ["draft"]}] and rows[0]["updated"] == ["items"]
    assert rows[0]["parent_id"] == rows[1]["checkpoint_id"]
    code, out, _ = run(capsys, "history", "t-ada", "--sqlite", db, "--limit", "1")
    assert code == 0 and len(out.splitlines()) == 3
    code, _, err = run(capsys, "history", "t-nobody", "--sqlite", db)
    assert code == 3 and "No checkpoints for thread 't-nobody'" in err


def test_show_reads_the_checkpoint(capsys, db):
    code, out, _ = run(capsys, "show", "t-ada", "--sqlite", db)
    assert code == 0
    assert 'values\n  items: ["draft"]\n' in out
    assert "next: review" in out
    assert '{"items": ["draft"]}' in out
    assert '~ items: [] -> ["draft"]' in out
    code, out, _ = run(capsys, "show", "t-ada", "--sqlite", db, "--json")
    info = json.loads(out)
    assert info["metadata"] == {"user": "ada"}
    assert info["changes"] == [{"change": "~", "key": "items", "old": [], "new": ["draft"]}]


def test_show_through_the_graph_and_an_older_checkpoint(capsys, db):
    code, out, _ = run(
        capsys, "show", "t-ada", "--sqlite", db, "--graph", "approval_app:graph", "--json"
    )
    info = json.loads(out)
    assert code == 0 and info["next"] == ["review"]
    assert info["interrupts"][0]["node"] == "review"
    first = json.loads(run(capsys, "history", "t-ada", "--sqlite", db, "--json")[1])[-1]
    code, out, _ = run(
        capsys, "show", "t-ada", "--sqlite", db, "--checkpoint", first["checkpoint_id"]
    )
    assert code == 0 and "source input" in out and "changed since the start" in out
    code, _, err = run(capsys, "show", "t-ada", "--sqlite", db, "--checkpoint", "nope")
    assert code == 3 and "has no checkpoint 'nope'" in err


def test_resume_to_the_end_and_to_another_interrupt(capsys, db):
    code, out, _ = run(
        capsys, "resume", "approval_app:graph", "t-ada", "--value", "true", "--sqlite", db
    )
    assert code == 0 and out.startswith("finished") and '"published"' in out
    code, out, _ = run(
        capsys, "resume", "approval_app:graph", "t-bob", "--text", "no", "--sqlite", db, "--json"
    )
    result = json.loads(out)
    assert code == 4 and result["interrupts"][0]["value"] == "second opinion?"
    assert result["next"] == ["second_opinion"]
    interrupt_id = result["interrupts"][0]["id"]
    code, out, _ = run(
        capsys,
        "resume",
        "approval_app:graph",
        "t-bob",
        "--value",
        '"ok"',
        "--interrupt-id",
        interrupt_id,
        "--sqlite",
        db,
    )
    assert code == 0 and '"ok"' in out


def test_resume_mistakes(capsys, db):
    code, _, err = run(
        capsys, "resume", "approval_app:graph", "t-ada", "--value", "yes", "--sqlite", db
    )
    assert code == 2 and "--value must be JSON" in err
    code, _, err = run(capsys, "resume", "approval_app:graph", "t-ada", "--value", "1")
    assert code == 2 and "has no checkpointer" in err
    code, _, err = run(
        capsys,
        "resume",
        "approval_app:graph",
        "t-ada",
        "--value",
        "1",
        "--sqlite",
        db,
        "--interrupt-id",
        "nope",
    )
    assert code == 2 and "No interrupt 'nope' is waiting" in err
    code, _, err = run(
        capsys, "resume", "approval_app:graph", "t-none", "--value", "1", "--sqlite", db
    )
    assert code == 3
    code, _, err = run(
        capsys, "resume", "approval_app:graph", "t-bob", "--text", "explode", "--sqlite", db
    )
    assert code == 1 and "RuntimeError: review exploded" in err
    assert "Traceback" not in err
    run(capsys, "resume", "approval_app:graph", "t-ada", "--value", "true", "--sqlite", db)
    code, _, err = run(
        capsys, "resume", "approval_app:graph", "t-ada", "--value", "true", "--sqlite", db
    )
    assert code == 2 and "not waiting on an interrupt" in err


def test_traceback_flag_shows_the_python_error(capsys):
    from stategraph.cli._errors import CliError

    with pytest.raises(CliError):
        main(["--traceback", "draw", "approval_app:missing"])


def test_postgres_database(capsys):
    psycopg = pytest.importorskip("psycopg")
    from stategraph.checkpoint.postgres import PostgresSaver

    url = os.environ.get("STATEGRAPH_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")
    schema = f"sg_cli_{os.getpid()}_{id(capsys) % 100000}"
    try:
        admin = psycopg.connect(url, autocommit=True)
    except psycopg.OperationalError:
        pytest.skip("PostgreSQL is not reachable")
    with admin:
        admin.execute(f"CREATE SCHEMA {schema}")
    dsn = psycopg.conninfo.make_conninfo(url, options=f"-c search_path={schema}")
    try:
        from approval_app import builder

        with PostgresSaver.from_conn_string(dsn) as saver:
            saver.setup()
            builder.compile(checkpointer=saver).invoke(
                {"items": []}, {"configurable": {"thread_id": "pg-1"}}
            )
        code, out, _ = run(capsys, "threads", "--postgres", dsn, "--json")
        assert code == 0 and [r["thread_id"] for r in json.loads(out)] == ["pg-1"]
        code, out, _ = run(
            capsys, "resume", "approval_app:graph", "pg-1", "--value", "true", "--postgres", dsn
        )
        assert code == 0 and out.startswith("finished")
    finally:
        with psycopg.connect(url, autocommit=True) as admin:
            admin.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    code, _, err = run(capsys, "threads", "--postgres", "postgresql://nobody@127.0.0.1:1/none")
    assert code == 3 and "Cannot connect to PostgreSQL" in err


def test_console_script_runs(tmp_path, db):
    exe = Path(sys.executable).with_name("stategraph")
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "stategraph.cli._main"]
    proc = subprocess.run(
        [*command, "show", "t-ada", "--sqlite", db, "--graph", "approval_app:graph"],
        capture_output=True,
        text=True,
        cwd=HERE,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "next: review" in proc.stdout
    bad = subprocess.run(
        [*command, "show", "t-none", "--sqlite", db], capture_output=True, text=True, timeout=120
    )
    assert bad.returncode == 3 and bad.stderr.startswith("stategraph show: error:")


def test_draw_json_flag_and_unwritable_output(capsys, tmp_path):
    code, out, _ = run(capsys, "draw", "approval_app:graph", "--json")
    edges = {(e["source"], e["target"]) for e in json.loads(out)["edges"]}
    assert code == 0 and ("draft", "review") in edges
    target = tmp_path / "missing-dir" / "g.svg"
    code, _, err = run(capsys, "draw", "approval_app:graph", "-f", "svg", "-o", str(target))
    assert code == 2 and f"Cannot write {target}: No such file or directory" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("content", [b"", b"not a database at all\n"])
def test_a_file_without_checkpoints_is_refused_and_left_alone(capsys, tmp_path, content):
    path = tmp_path / "other.sqlite"
    path.write_bytes(content)
    for command in (["threads"], ["history", "t-1"], ["show", "t-1"]):
        code, out, err = run(capsys, *command, "--sqlite", str(path))
        assert code == 3 and out == "" and "Traceback" not in err
        expected = "holds no checkpoints" if not content else "is not a SQLite database"
        assert expected in err
    # reading never migrates a foreign file: it is byte for byte what it was
    assert path.read_bytes() == content
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.sqlite"]


def test_every_reading_command_has_json(capsys, db):
    for argv in (
        ["draw", "approval_app:graph", "--json"],
        ["threads", "--sqlite", db, "--json"],
        ["history", "t-ada", "--sqlite", db, "--json"],
        ["show", "t-ada", "--sqlite", db, "--json"],
    ):
        code, out, _ = run(capsys, *argv)
        assert code == 0, argv
        json.loads(out)


def test_missing_optional_dependency_is_exit_code_5(tmp_path):
    """Without Pillow, a PNG drawing is a one-line error naming the extra (exit 5)."""
    script = (
        "import sys\n"
        "sys.modules['PIL'] = None  # Pillow absent\n"
        "from stategraph.cli._main import main\n"
        f"sys.exit(main(['draw', 'approval_app:graph', '-f', 'png', '-o', {str(tmp_path / 'g.png')!r}]))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=HERE, timeout=120
    )
    assert proc.returncode == 5 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("stategraph draw: error:") and "stategraph[draw]" in proc.stderr
    assert not (tmp_path / "g.png").exists()
