"""Seed 003's cross-process experiment: pause in one Python process, resume in another
against the same SQLite file (``restart_worker.py`` beside this test).

Recorded result of the seed (LangGraph 1.2.16)::

    "separate_processes": [{"phase": "paused", "next": ["review"]},
                           {"phase": "resumed", "approved": true}]
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from persistence_helpers import shape

from stategraph.checkpoint.sqlite import SqliteSaver
from stategraph.checkpoint.sqlite.aio import AsyncSqliteSaver

EXAMPLE = Path(__file__).resolve().parent / "restart_worker.py"
SEED_RESULT = [{"phase": "paused", "next": ["review"]}, {"phase": "resumed", "approved": True}]


def _example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("restart_worker", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _phase(db: Path, phase: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), str(db), phase],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


@pytest.mark.slow
def test_example_script_reproduces_the_seed_result() -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"separate_processes": SEED_RESULT}


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["sync", "async"])
def test_state_between_and_after_the_two_processes(tmp_path: Path, mode: str) -> None:
    example = _example()
    db = tmp_path / "checkpoints.sqlite"

    def read() -> tuple[object, list[object]]:
        """The thread's snapshot and history, read in this (third) process."""
        if mode == "sync":
            with SqliteSaver.from_conn_string(str(db)) as saver:
                graph = example.build().compile(checkpointer=saver)
                return graph.get_state(example.THREAD), list(
                    graph.get_state_history(example.THREAD)
                )

        async def go() -> tuple[object, list[object]]:
            async with AsyncSqliteSaver.from_conn_string(str(db)) as saver:
                graph = example.build().compile(checkpointer=saver)
                snap = await graph.aget_state(example.THREAD)
                hist = [s async for s in graph.aget_state_history(example.THREAD)]
                return snap, hist

        return asyncio.run(go())

    assert _phase(db, "pause") == SEED_RESULT[0]
    snap, history = read()
    assert snap.values == {"item": "demo"}  # type: ignore[attr-defined]
    assert snap.next == ("review",)  # type: ignore[attr-defined]
    [intr] = snap.interrupts  # type: ignore[attr-defined]
    assert intr.value == {"item": "demo"}
    assert [t.name for t in snap.tasks] == ["review"]  # type: ignore[attr-defined]
    assert shape(history) == [("loop", 0, ("review",)), ("input", -1, ("__start__",))]  # type: ignore[arg-type]

    assert _phase(db, "resume") == SEED_RESULT[1]
    snap, history = read()
    assert snap.values == {"item": "demo", "approved": True}  # type: ignore[attr-defined]
    assert (snap.next, snap.interrupts, snap.tasks) == ((), (), ())  # type: ignore[attr-defined]
    assert shape(history) == [  # type: ignore[arg-type]
        ("loop", 1, ()),
        ("loop", 0, ("review",)),
        ("input", -1, ("__start__",)),
    ]


def test_example_rejects_an_unknown_phase(tmp_path: Path) -> None:
    example = _example()
    with pytest.raises(ValueError, match="unknown phase 'later'"):
        example.worker(str(tmp_path / "x.sqlite"), "later")
    assert example.main(["only-one-argument"]) == 2
