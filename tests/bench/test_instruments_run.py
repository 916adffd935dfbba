"""A tiny run of each of issue 23's instruments through ``python -m bench``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _bench(*args: str, timeout: int = 240) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "bench", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_overhead_measures_node_code_and_sqlite_settings(tmp_path: Path) -> None:
    out = _bench(
        "overhead",
        "--workloads",
        "sequential_10,react_agent_10x_sqlite",
        "--rounds",
        "2",
        "--sqlite-synchronous",
        "full",
        "--save",
        str(tmp_path),
    )
    data = json.loads((tmp_path / "overhead-stategraph.json").read_text())
    rows = data["workloads"]
    assert set(rows) == {"sequential_10", "react_agent_10x_sqlite"}
    agent = rows["react_agent_10x_sqlite"]
    assert agent["node"]["calls"] == 32  # 11 agent calls, 11 router calls, 10 tool calls
    assert agent["sqlite"] == "synchronous=FULL journal_mode=wal"
    for row in rows.values():
        assert 0 < row["node_cpu_ms"] < row["total_cpu_ms"]
        assert row["overhead_ms"] == pytest.approx(row["total_cpu_ms"] - row["node_cpu_ms"])
        assert len(row["total"]["cpu_times_s"]) == 2
    assert "ours synchronous=FULL journal_mode=wal" in out
    # the saved run prints again without measuring
    again = _bench("overhead", "--load", str(tmp_path))
    assert again.splitlines()[-4:] == out.splitlines()[-4:]


def test_scaling_prints_our_curves_against_the_floor(tmp_path: Path) -> None:
    out = _bench(
        "scaling",
        "--chain",
        "10",
        "--keys",
        "10,100",
        "--history",
        "10",
        "--min-time",
        "0.02",
        "--save",
        str(tmp_path),
    )
    ours = json.loads((tmp_path / "scaling-stategraph.json").read_text())
    floor = json.loads((tmp_path / "floor-floor.json").read_text())
    assert set(ours["keys"]) == {"10", "100"} and set(floor["keys"]) == {"10", "100"}
    assert 0 < floor["chain"]["10"] < ours["chain"]["10"]
    assert "keys K=100" in out and "Goals (issue 23, goal 2)" in out


def test_rss_reports_the_stages_and_goal(tmp_path: Path) -> None:
    out = _bench("rss", "--save", str(tmp_path))
    data = json.loads((tmp_path / "rss-stategraph.json").read_text())
    stages = data["hwm_mb"]
    assert stages["harness"] <= stages["import"] <= stages["build"] <= stages["run"]
    assert 3.5 < data["payload_mb"] < 4.5  # 100 tool messages of ~36 kB
    assert data["goal_mb"] == 2 * data["payload_mb"] + 3
    assert "react_agent_100x_checkpoint" in out


def test_rss_takes_the_whole_state_as_payload_without_messages(tmp_path: Path) -> None:
    """The fan-out workload's state has no ``messages`` key: its payload is the whole
    final state (it used to fail with a KeyError)."""
    out = tmp_path / "rss.json"
    workload = "fanout_to_subgraph_100x_checkpoint"
    proc = subprocess.run(
        [sys.executable, "-m", "bench.rss", "--workload", workload, "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(out.read_text())
    assert data["workload"] == workload
    assert 0.5 < data["payload_mb"] < 5  # the 100 subgraph results
    assert data["saver_mb"] > 0


def test_storage_measures_a_short_chat(tmp_path: Path) -> None:
    out = _bench("storage", "--turns", "20", "--save", str(tmp_path))
    data = json.loads((tmp_path / "storage-stategraph.json").read_text())
    assert data["turns"] == 20
    assert data["checkpoints_per_turn"] == 3.0
    assert data["wal_bytes"] == 0  # checkpointed into the main file before measuring
    assert data["bytes_per_turn"] > 2 * 150
    assert data["sqlite"].endswith("journal_mode=wal")
    assert "Goal 4: <= 0.06 MB" in out


def test_import_time_is_net_of_the_interpreter(tmp_path: Path) -> None:
    out = _bench("import", "--repeat", "2", "--save", str(tmp_path))
    data = json.loads((tmp_path / "import-stategraph.json").read_text())
    assert data["statement"] == "import stategraph.pregel, stategraph.graph"
    assert data["modules"] > 10
    assert data["importtime_cumulative_ms"] > 0
    assert data["net_cpu_median_ms"] > 0
    assert any(module.startswith("stategraph") for module, _ in data["top_self_us"])
    assert "Goal 5" in out


def test_load_prints_both_sides_of_a_saved_run(tmp_path: Path) -> None:
    for lib, net in (("stategraph", 50.0), ("langgraph", 900.0)):
        saved = {
            "lib": lib,
            "statement": f"import {lib}.pregel, {lib}.graph",
            "net_median_ms": net,
            "net_min_ms": net - 5,
            "net_cpu_median_ms": net - 10,
            "importtime_cumulative_ms": net + 1,
            "modules": 100,
        }
        (tmp_path / f"import-{lib}.json").write_text(json.dumps(saved))
    out = _bench("import", "--load", str(tmp_path))
    rows = [line for line in out.splitlines() if line.startswith(("langgraph ", "stategraph "))]
    assert [row.split("|")[2].strip() for row in rows] == ["890.0", "40.0"]
    assert out.rstrip().endswith("Goal 5: ours <= 60 ms net: wall yes, CPU yes")
