"""Every example in ``examples/`` runs and does what its docstring says."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def load(name: str) -> ModuleType:
    path = EXAMPLES / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"example_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_every_example_is_tested() -> None:
    tested = {"approval", "react_agent", "map_reduce", "supervisor", "long_term_memory"}
    tested |= {"fastapi_sse", "notebook"}
    tested |= {"streaming_chat"}  # run by tests/integration/test_examples.py
    tested |= {"studio_demo"}
    tested |= {"lease_workers"}  # run by tests/concurrency/test_lease_workers.py
    tested |= {"langchain_events_agent"}  # run by tests/interop (needs langchain-core)
    found = {p.stem for p in EXAMPLES.iterdir() if p.suffix in (".py", ".ipynb")}
    assert found == tested


def test_react_agent(capsys: pytest.CaptureFixture[str]) -> None:
    report = load("react_agent").main()
    assert report["answer"] == "3 pears cost 2.25 euros."
    assert report["tools_called"] == ["price", "multiply"]
    assert "unknown fruit 'kiwi'" in report["unknown_fruit"]
    assert report["messages_in_thread"] == 6
    assert '"answer"' in capsys.readouterr().out


def test_map_reduce() -> None:
    report = load("map_reduce").main()
    assert report["summary"] == {"chunks": 3, "words": 23}
    assert report["tasks"] == ["plan", "count_words", "count_words", "count_words", "summarize"]


def test_supervisor(capsys: pytest.CaptureFixture[str]) -> None:
    report = load("supervisor").main()
    assert report["log"] == [
        "supervisor -> research",
        "research: search, read",
        "supervisor -> writing",
        "writing: outline, draft",
        "supervisor -> done",
    ]
    assert report["done"] == ["research", "writing"]
    assert "| search |" in capsys.readouterr().out  # the xray drawing of the teams


def test_long_term_memory() -> None:
    report = load("long_term_memory").main()
    assert report["drink"] == "You told me: I like tea more than coffee."
    assert report["city"] == "You told me: I live in Oslo."
    assert report["stranger"] == "I don't know anything about you yet."
    assert len(report["facts"]) == 3


def _events(body: str) -> list[tuple[str, Any]]:
    import json

    out = []
    for block in body.strip().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines())
        out.append((lines["event"], json.loads(lines["data"])))
    return out


async def test_fastapi_sse_app_streams_pauses_and_resumes(tmp_path: Path) -> None:
    pytest.importorskip("fastapi")
    httpx = pytest.importorskip("httpx")
    from stategraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    module = load("fastapi_sse")
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "sse.sqlite")) as saver:
        app = module.create_app(saver)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            async with client.stream("POST", "/threads/t1/runs", json={"topic": "graphs"}) as r:
                assert r.status_code == 200
                assert r.headers["content-type"].startswith("text/event-stream")
                body = "".join([chunk async for chunk in r.aiter_text()])
            events = _events(body)
            kinds = [kind for kind, _ in events]
            assert kinds[:3] == ["token", "token", "token"]
            assert kinds[-3:] == ["update", "interrupt", "end"]
            words = [data["token"] for kind, data in events if kind == "token"]
            assert " ".join(words).startswith("A short note about graphs")
            assert events[-2][1]["value"]["choices"] == ["approve", "reject"]
            assert events[-1][1] == {"next": ["review"]}

            shown = (await client.get("/threads/t1")).json()
            assert shown["next"] == ["review"] and shown["interrupts"][0]["draft"]

            resumed = await client.post("/threads/t1/resume", json={"value": "approve"})
            assert _events(resumed.text) == [
                ("update", {"review": {"decision": "approve"}}),
                ("end", {"next": []}),
            ]
            again = await client.post("/threads/t1/resume", json={"value": "approve"})
            assert again.status_code == 409
            assert (await client.get("/threads/none")).status_code == 404


def test_notebook_runs_and_displays_the_graph(tmp_path: Path) -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    notebook = nbformat.read(EXAMPLES / "notebook.ipynb", as_version=4)
    client = nbclient.NotebookClient(
        notebook,
        timeout=180,
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute()
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    graph_display = outputs[0]
    assert graph_display.output_type == "execute_result"
    html = graph_display.data["text/html"]
    assert "<svg" in html and "Mermaid source" in html
    assert graph_display.data["text/vnd.mermaid"].startswith("---\nconfig:")
    assert 'data-id="review"' in graph_display.data["image/svg+xml"]
    paused = outputs[2]
    assert "#c92a2a" in paused.data["image/svg+xml"]  # review marked as waiting
    printed = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "['write', 'review: approve', 'publish']" in printed
    assert "| publish |" in printed


def test_studio_demo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from stategraph.checkpoint.sqlite import SqliteSaver
    from stategraph.cli._checkpoints import pending_interrupts, pending_nodes

    path = str(tmp_path / "demo.sqlite")
    report = load("studio_demo").main([path])
    out = capsys.readouterr().out
    assert f"--sqlite {path} --store {path}.store --allow-writes" in out
    assert "stategraph studio " in out and "studio_demo.py:graph" in out
    assert report["waiting"]["question"] == "Publish this draft?"
    assert "forbidden lore" in report["failed"]
    with SqliteSaver.from_conn_string(path) as saver:

        def latest(thread: str) -> Any:
            return saver.get_tuple({"configurable": {"thread_id": thread}})

        waiting = latest("waiting")
        assert pending_nodes(waiting.checkpoint) == ["review"]
        assert pending_interrupts(waiting.pending_writes)[0]["value"]["draft"].startswith(
            "Volcanoes"
        )
        failed = latest("failed")
        errors = [v for _t, ch, v in failed.pending_writes if ch == "__error__"]
        assert errors and "press refused" in str(errors[0])
        assert latest("published").checkpoint["channel_values"]["status"] == "published"
        rejected = latest("rejected")
        assert rejected.metadata["source"] == "update"
        assert rejected.checkpoint["channel_values"]["comment"] == "needs sources"
        namespaces = {
            t.config["configurable"]["checkpoint_ns"]
            for t in saver.list({"configurable": {"thread_id": "published"}})
        }
        assert any(ns.startswith("research:") for ns in namespaces)
