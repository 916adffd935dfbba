"""Small modules with one job: no module of ``src/stategraph`` grows past 800 lines.

A module past that size has usually taken on a second job; split it by concern (see
docs/architecture.md, "where each kind of change goes") rather than raising the limit.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "stategraph"
LIMIT = 800


def line_counts() -> dict[str, int]:
    return {
        str(path.relative_to(PACKAGE.parent)): len(path.read_text(encoding="utf-8").splitlines())
        for path in PACKAGE.rglob("*.py")
    }


def test_the_count_reads_the_package() -> None:
    counts = line_counts()
    assert counts["stategraph/pregel/main.py"] > 0
    assert len(counts) > 300


def test_no_module_is_over_the_limit() -> None:
    over = {name: n for name, n in line_counts().items() if n > LIMIT}
    assert not over, f"modules over {LIMIT} lines (split them by concern): {over}"
