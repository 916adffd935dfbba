"""Issue 23's instruments: their arithmetic and tables on fixed inputs."""

from __future__ import annotations

import ast
import os
import sqlite3
import sys
from pathlib import Path

import pytest
from bench.floor import chain, keys, pregel
from bench.importtime import parse_importtime, statement
from bench.overhead import overhead_ms
from bench.rss import deep_size, goal_mb
from bench.sidebyside import (
    import_table,
    overhead_table,
    ratio,
    rss_table,
    scaling_goals,
    scaling_table,
    storage_table,
)
from bench.storage import MESSAGE_CHARS, chat_messages, table_bytes

ROOT = Path(__file__).resolve().parents[2]


def test_overhead_is_total_minus_node_code_in_ms() -> None:
    assert overhead_ms(0.0125, 0.0025) == pytest.approx(10.0)
    assert overhead_ms(0.001, 0.001) == 0.0


def test_ratio_is_theirs_over_ours_and_none_when_missing() -> None:
    assert ratio(20.0, 2.0) == 10.0
    assert ratio(None, 2.0) is None
    assert ratio(3.0, None) is None
    assert ratio(3.0, 0.0) is None


def test_overhead_table_shows_ratio_goal_and_sqlite_settings() -> None:
    ours = {
        "workloads": {
            "sequential_10": {"total_cpu_ms": 0.5, "node_cpu_ms": 0.1, "overhead_ms": 0.4},
            "react_agent_100x_sqlite": {
                "total_cpu_ms": 100.0,
                "node_cpu_ms": 10.0,
                "overhead_ms": 90.0,
                "sqlite": "synchronous=NORMAL journal_mode=wal",
            },
        }
    }
    theirs = {
        "workloads": {
            "sequential_10": {"overhead_ms": 2.0},
            "react_agent_100x_sqlite": {
                "overhead_ms": 1800.0,
                "sqlite": "synchronous=FULL journal_mode=wal",
            },
        }
    }
    text = overhead_table(ours, theirs)
    lines = text.splitlines()
    seq = next(line for line in lines if line.startswith("sequential_10"))
    assert "5.0x" in seq and seq.rstrip().endswith("NO")
    agent = next(line for line in lines if line.startswith("react_agent_100x_sqlite"))
    assert "20.0x" in agent and agent.rstrip().endswith("yes")
    assert "ours synchronous=NORMAL journal_mode=wal" in text
    assert "LG synchronous=FULL journal_mode=wal" in text


def test_scaling_goals_on_fixed_curves() -> None:
    ours = {
        "chain": {"1000": 6.5},
        "keys": {"10": 10.0, "1000": 40.0},
        "history": {"10": 20.0, "1000": 31.0},
    }
    goals = scaling_goals(ours)
    assert list(goals.values()) == [(6.5, True), (40.0, False), (4.0, False), (1.55, False)]
    table = scaling_table(ours, {"chain": {"1000": 200.0}}, {"chain": {"1000": 1.3}})
    row = next(line for line in table.splitlines() if line.startswith("chain N=1000"))
    assert "5.0x" in row  # ours / floor
    assert "30.8x" in row  # LG / ours


def test_rss_storage_and_import_tables_apply_the_goals() -> None:
    rss = {
        "workload": "react_agent_100x_checkpoint",
        "hwm_mb": {"harness": 25.0, "run": 34.0},
        "above_harness_mb": 9.0,
        "payload_mb": 4.0,
        "goal_mb": goal_mb(4.0),
    }
    assert goal_mb(4.0) == 11.0
    assert rss_table(rss, None).splitlines()[-1].rstrip().endswith("yes")
    storage = {
        "turns": 1000,
        "total_mb": 3.0,
        "bytes_per_turn": 3000.0,
        "checkpoints_per_turn": 3.0,
        "cpu_ms_per_turn": 1.0,
        "sqlite": "synchronous=NORMAL journal_mode=wal",
    }
    assert storage_table(storage, None).endswith("Goal 4: <= 2.90 MB: NO")
    assert storage_table({**storage, "turns": 2000}, None).endswith("Goal 4: <= 5.80 MB: yes")
    imp = {
        "statement": statement("stategraph"),
        "net_median_ms": 59.0,
        "net_cpu_median_ms": 61.0,
        "net_min_ms": 55.0,
        "importtime_cumulative_ms": 70.0,
        "modules": 120,
    }
    assert import_table(imp, None).endswith("Goal 5: ours <= 60 ms net: wall yes, CPU NO")
    assert statement("langgraph") == "import langgraph.pregel, langgraph.graph"


def test_parse_importtime_counts_only_top_level_imports_of_the_library() -> None:
    stderr = "\n".join(
        [
            "import time: self [us] | cumulative | imported package",
            "import time:       100 |        100 | typing",
            "import time:       300 |        300 |   stategraph.channels",
            "import time:       200 |        500 | stategraph",
            "import time:        50 |         50 |     stategraph.graph.x",
            "import time:       400 |        450 | stategraph.graph",
            "import time:        10 |         10 | stategraphx",
        ]
    )
    total, rows = parse_importtime(stderr, "stategraph")
    assert total == 950
    assert ("stategraph.channels", 300, 300) in rows
    assert len(rows) == 6


def test_deep_size_counts_shared_objects_once() -> None:
    shared = "x" * 1000
    once = deep_size([shared])
    twice = deep_size([shared, shared])
    assert twice - once == sys.getsizeof([shared, shared]) - sys.getsizeof([shared])
    assert once >= 1000


def test_chat_messages_are_deterministic_150_characters() -> None:
    texts = chat_messages(3)
    assert texts == chat_messages(3)
    assert all(len(u) == len(a) == MESSAGE_CHARS for u, a in texts)
    assert len({u for u, _ in texts}) == 3


def test_table_bytes_sums_rows_and_column_lengths() -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (a TEXT, b BLOB, c INTEGER)")
    conn.execute("INSERT INTO t VALUES ('abc', x'0102', NULL)")
    conn.execute("INSERT INTO t VALUES ('de', NULL, 12345)")
    assert table_bytes(conn) == {"t": {"rows": 2, "bytes": 3 + 2 + 2 + 5}}


def test_floor_loop_runs_a_chain_and_a_wide_state() -> None:
    nodes, subs = chain(5)
    chunks = pregel(nodes, subs, {}, {"messages": []}, {"messages": []})
    assert chunks == [{f"n{i}": None} for i in range(5)]
    knodes, ksubs, kvals = keys(20)
    chunks = pregel(knodes, ksubs, {}, kvals, {"k0": 0})
    assert chunks == [{f"n{i}": {f"k{i}": i}} for i in range(10)]


def _shared_workloads() -> Path | None:
    candidates = [os.environ.get("STATEGRAPH_BENCH_SHARED", "")]
    candidates += [str(p / "shared" / "langgraph-bench") for p in ROOT.parents]
    for folder in candidates:
        path = Path(folder) / "workloads.py" if folder else None
        if path is not None and path.is_file():
            return path
    return None


def _body(path: Path) -> str:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    first = tree.body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
        tree.body = tree.body[1:]  # the module docstring may differ
    return ast.dump(tree)


def test_langgraph_suite_is_in_sync_with_the_shared_workloads() -> None:
    shared = _shared_workloads()
    if shared is None:
        pytest.skip("../shared/langgraph-bench/workloads.py not found beside the checkout")
    assert _body(ROOT / "bench" / "langgraph_suite.py") == _body(shared), (
        f"bench/langgraph_suite.py differs from {shared} (beyond the docstring and layout): "
        "copy the change over so both measure the same workloads"
    )
