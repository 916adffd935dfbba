"""What an import from LangGraph copied (kept apart so the package imports light)."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["ImportReport"]


@dataclass
class ImportReport:
    """What :func:`~stategraph.checkpoint.langgraph_import.import_langgraph` copied."""

    threads: list[str] = field(default_factory=list)
    """Thread ids written, in the order they were imported."""
    checkpoints: int = 0
    """Checkpoints written (all namespaces)."""
    writes: int = 0
    """Pending writes written."""
    skipped: list[str] = field(default_factory=list)
    """Threads already imported (the target holds their last checkpoint): not touched."""
