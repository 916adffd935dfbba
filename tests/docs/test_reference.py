"""The documentation: every public name is in the API reference, links and code work."""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

# The public API (module -> names), as the project's API map lists it. A name added to
# the public API belongs here and in a reference page.
PUBLIC = {
    "stategraph": [
        "StateGraph",
        "START",
        "END",
        "Send",
        "Command",
        "interrupt",
        "MessagesState",
        "add_messages",
    ],
    "stategraph.graph": ["StateGraph", "START", "END", "MessagesState", "add_messages"],
    "stategraph.graph.state": ["StateGraph", "CompiledStateGraph"],
    "stategraph.graph.message": ["add_messages", "MessagesState", "REMOVE_ALL_MESSAGES"],
    "stategraph.messages": [
        "BaseMessage",
        "HumanMessage",
        "AIMessage",
        "SystemMessage",
        "ToolMessage",
        "RemoveMessage",
        "AnyMessage",
        "convert_to_messages",
        "AIMessageChunk",
        "ToolMessageChunk",
        "message_chunk_to_message",
        "trim_messages",
        "filter_messages",
        "messages_to_dict",
        "messages_from_dict",
        "get_buffer_string",
    ],
    "stategraph.types": [
        "Send",
        "Command",
        "interrupt",
        "Interrupt",
        "Overwrite",
        "RetryPolicy",
        "CachePolicy",
        "TimeoutPolicy",
        "StateSnapshot",
        "StateUpdate",
        "PregelTask",
        "PregelExecutableTask",
        "StreamMode",
        "StreamWriter",
        "Durability",
        "All",
        "Checkpointer",
        "GraphOutput",
        "ValuesStreamPart",
        "UpdatesStreamPart",
        "CustomStreamPart",
        "MessagesStreamPart",
        "TasksStreamPart",
        "CheckpointStreamPart",
        "DebugStreamPart",
    ],
    "stategraph.errors": [
        "GraphRecursionError",
        "InvalidUpdateError",
        "GraphInterrupt",
        "GraphBubbleUp",
        "ParentCommand",
        "EmptyInputError",
        "EmptyChannelError",
        "TaskNotFound",
        "NodeTimeoutError",
        "ErrorCode",
    ],
    "stategraph.channels": [
        "BaseChannel",
        "LastValue",
        "LastValueAfterFinish",
        "BinaryOperatorAggregate",
        "DeltaChannel",
        "Topic",
        "EphemeralValue",
        "NamedBarrierValue",
        "NamedBarrierValueAfterFinish",
        "UntrackedValue",
        "AnyValue",
    ],
    "stategraph.constants": ["START", "END", "TAG_HIDDEN", "TAG_NOSTREAM"],
    "stategraph.config": ["get_config", "get_store", "get_stream_writer", "RunnableConfig"],
    "stategraph.runtime": ["Runtime", "get_runtime"],
    "stategraph.pregel": ["Pregel", "NodeBuilder"],
    "stategraph.pregel.remote": ["RemoteGraph", "RemoteError", "StreamPart"],
    "stategraph.remote": [
        "RemoteGraph",
        "RemoteError",
        "RemoteTimeoutError",
        "RemoteTimeouts",
        "RemoteLimits",
        "StreamPart",
        "HttpClient",
        "AsyncHttpClient",
    ],
    "stategraph.managed": ["RemainingSteps", "IsLastStep"],
    "stategraph.typing": ["StateT", "ContextT", "InputT", "OutputT"],
    "stategraph.checkpoint.base": [
        "BaseCheckpointSaver",
        "Checkpoint",
        "CheckpointMetadata",
        "CheckpointTuple",
        "SerializerProtocol",
        "empty_checkpoint",
        "copy_checkpoint",
        "create_checkpoint",
        "uuid6",
    ],
    "stategraph.checkpoint.memory": ["InMemorySaver", "MemorySaver"],
    "stategraph.channels.delta": ["DeltaChannel"],
    "stategraph.checkpoint.sqlite": ["SqliteSaver"],
    "stategraph.checkpoint.sqlite.aio": ["AsyncSqliteSaver"],
    "stategraph.checkpoint.postgres": ["PostgresSaver"],
    "stategraph.checkpoint.postgres.aio": ["AsyncPostgresSaver"],
    "stategraph.checkpoint.serde.base": ["SerializerProtocol"],
    "stategraph.checkpoint.serde.jsonplus": ["JsonPlusSerializer"],
    "stategraph.store.base": [
        "BaseStore",
        "Item",
        "SearchItem",
        "GetOp",
        "PutOp",
        "SearchOp",
        "ListNamespacesOp",
        "MatchCondition",
    ],
    "stategraph.store.memory": ["InMemoryStore"],
    "stategraph.cache.base": ["BaseCache"],
    "stategraph.cache.memory": ["InMemoryCache"],
    "stategraph.cache.sqlite": ["SqliteCache"],
    "stategraph.func": ["entrypoint", "task"],
    "stategraph.prebuilt": [
        "ToolNode",
        "tools_condition",
        "create_react_agent",
        "InjectedState",
        "InjectedStore",
    ],
    "stategraph.drawing": [
        "Graph",
        "Node",
        "Edge",
        "CurveStyle",
        "NodeStyles",
        "MermaidDrawMethod",
    ],
    "stategraph.callbacks": ["GraphCallbackHandler", "GraphLifecycleEvent", "BaseCallbackHandler"],
    "stategraph.stream": ["StreamChannel", "StreamTransformer", "GraphRunStream"],
    "stategraph.tracing": ["instrument", "uninstrument"],
    "stategraph.prebuilt.interrupt": ["HumanInterrupt", "HumanResponse"],
    "stategraph.testing": [
        "FakeChatModel",
        "run_node",
        "arun_node",
        "trace_path",
        "atrace_path",
        "assert_path",
        "deterministic",
    ],
    "stategraph.executors": [
        "TaskExecutor",
        "ThreadExecutor",
        "TaskPayload",
        "TaskResult",
        "WorkerLostError",
        "StoreUnreachableError",
        "RemoteTaskError",
        "run_payload",
    ],
    "stategraph.executors.ray": ["RayExecutor"],
    "stategraph.executors.dask": ["DaskExecutor"],
}


def directives() -> set[str]:
    """Every ``::: dotted.path`` of the reference pages."""
    found: set[str] = set()
    for page in (DOCS / "reference").glob("*.md"):
        found |= set(re.findall(r"^::: ([\w.]+)", page.read_text(), flags=re.MULTILINE))
    return found


def resolve(path: str) -> object:
    """The object a ``::: dotted.path`` directive renders (None if it names nothing)."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for part in parts[cut:]:
            obj = getattr(obj, part, None)
        return obj
    return None


def documented(module: str, name: str, paths: set[str]) -> bool:
    """``module.name`` is rendered: directly, or as a member of a documented module."""
    obj = getattr(importlib.import_module(module), name)
    home = getattr(obj, "__module__", None)
    candidates = {f"{module}.{name}"}
    if isinstance(home, str):
        candidates.add(f"{home}.{name}")
    if candidates & paths:
        return True
    # documented under another public path (a class re-exported by a package)
    if any(path.rsplit(".", 1)[-1] == name and resolve(path) is obj for path in paths):
        return True
    for path in paths:
        try:
            documented_module = importlib.import_module(path)
        except ImportError:
            continue
        if name in getattr(documented_module, "__all__", ()) and (
            getattr(documented_module, name, None) is obj or path in (module, home)
        ):
            return True
    return False


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_public_names_exist_and_are_in_the_reference(module: str) -> None:
    paths = directives()
    missing = [n for n in PUBLIC[module] if not documented(module, n, paths)]
    assert not missing, f"{module}: not in docs/reference: {missing}"


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_every_exported_name_is_in_the_reference(module: str) -> None:
    """Not only the names listed above: everything the module's ``__all__`` exports."""
    paths = directives()
    exported = [n for n in importlib.import_module(module).__all__ if n != "__version__"]
    missing = [n for n in exported if not documented(module, n, paths)]
    assert not missing, f"{module}: not in docs/reference: {missing}"


def nav_pages() -> list[str]:
    """The pages the ``nav`` of mkdocs.yml lists (commented-out lines do not count)."""
    pages = [_nav_page(line) for line in (ROOT / "mkdocs.yml").read_text().splitlines()]
    return [p for p in pages if p is not None]


def _nav_page(line: str) -> str | None:
    """The page of one nav line (``- Title: page.md``, quoted titles too), or None."""
    found = re.match(
        r"""\s*-\s*(?:(?:"[^"]*"|'[^']*'|[^#:"']+):\s*)?["']?([\w./-]+\.md)["']?\s*$""", line
    )
    return found.group(1) if found else None


def test_nav_lines_are_read_like_yaml() -> None:
    assert nav_pages.__doc__
    for line, page in [
        ("      - Drawing: drawing.md", "drawing.md"),
        ('      - "Scale-out: Ray and Dask": scale-out.md', "scale-out.md"),
        ("      - 'A: b': a.md", "a.md"),
        ("          - reference/index.md", "reference/index.md"),
    ]:
        assert _nav_page(line) == page, line
    assert _nav_page("      # - Tracing: tracing.md") is None


def test_every_page_is_in_the_nav() -> None:
    listed = nav_pages()
    pages = [p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")]
    assert sorted(p for p in pages if p not in listed) == []
    assert sorted(p for p in listed if p not in pages) == []


@pytest.mark.slow
def test_site_builds_strict_without_a_warning(tmp_path: Path) -> None:
    """What `make docs` runs. A warning (a page missing from the nav, a broken link or
    anchor, a reference that does not resolve) fails the build: never run it --quiet,
    which hides the warnings from --strict."""
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings")
    assert "--quiet" not in (ROOT / "Makefile").read_text().split("\ndocs:", 1)[1][:300]
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=300,
    )
    warnings = [ln for ln in proc.stderr.splitlines() if ln.startswith(("WARNING", "ERROR"))]
    assert proc.returncode == 0 and warnings == [], proc.stderr[-3000:]


def test_quickstart_code_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Python blocks of the quickstart, run in order, do what the page says."""
    monkeypatch.chdir(tmp_path)
    text = (DOCS / "quickstart.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    namespace: dict[str, object] = {"__name__": "quickstart"}
    for block in blocks:
        if "draw_png" in block and importlib.util.find_spec("PIL") is None:
            continue
        exec(compile(block, "quickstart.md", "exec", dont_inherit=True), namespace)
    assert namespace["done"]["approved"] is True  # type: ignore[index]
    assert (tmp_path / "graph.png").read_bytes()[:4] == b"\x89PNG"


def porting_rows(text: str) -> list[tuple[str, str, list[str]]]:
    """(their module, our module, names) of each ``from X import ...`` table row."""
    rows = []
    pattern = r"^\| `from ([\w.]+) import ([^`]+)` \| `from ([\w.]+) import ([^`]+)` \|$"
    for theirs, their_names, ours, our_names in re.findall(pattern, text, flags=re.MULTILINE):
        names = their_names if our_names.strip() == "..." else our_names
        rows.append((theirs, ours, [n.strip() for n in names.split(",") if n.strip() != "..."]))
    return rows


def test_readme_porting_tables_import() -> None:
    """Every row of the README's porting tables imports, and the table names the
    modules a port most often needs, with the exceptions to the prefix rule."""
    text = (ROOT / "README.md").read_text()
    rows = porting_rows(text)
    for theirs, ours, names in rows:
        module = importlib.import_module(ours)
        missing = [n for n in names if not hasattr(module, n)]
        assert not missing, f"README: {ours} lacks {missing} (row for {theirs})"
    covered = {theirs for theirs, _, _ in rows} | {
        f"{theirs}.{n}" for theirs, _, names in rows for n in names
    }
    needed = {
        "langgraph.graph",
        "langgraph.types",
        "langgraph.config",
        "langgraph.runtime",
        "langgraph.func",
        "langgraph.store.base",
        "langgraph.checkpoint.sqlite",
        "langgraph.prebuilt",
        "langchain_core.messages",
        "langchain_core.tools",
        "langchain_core.runnables.RunnableConfig",
    }
    assert needed <= covered, sorted(needed - covered)
    assert "The exceptions" in text and "docs/porting.md" in text


def test_threads_guide_code_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Python blocks of the threads guide, run in order, give what its comments say."""
    monkeypatch.chdir(tmp_path)
    text = (DOCS / "threads.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)
    ns: dict[str, Any] = {"__name__": "threads_guide"}
    for block in blocks:
        exec(compile(block, "threads.md", "exec", dont_inherit=True), ns)
    assert ns["snapshot"].values == {
        "topic": "owls",
        "notes": ["facts about owls", "draft on owls"],
    }
    assert ns["snapshot"].next == ()
    assert ns["snapshot"].metadata["user"] == "ada" and ns["snapshot"].metadata["step"] == 2
    assert ns["steps"] == [(2, ()), (1, ("write",)), (0, ("research",)), (-1, ("__start__",))]
    assert ns["replayed"] == {"topic": "owls", "notes": ["facts about owls", "draft on owls"]}
    assert ns["fork_result"] == {"topic": "bats", "notes": ["facts about owls", "draft on bats"]}
    assert ns["latest"] == ns["fork_result"]
    assert ns["saved"] == 1 and ns["gone"] == {}
    assert (tmp_path / "threads.sqlite").is_file()
    assert "(2, ()), (1, ('write',)), (0, ('research',)), (-1, ('__start__',))" in text
