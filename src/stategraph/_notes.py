"""Exception notes on every supported Python (``add_note`` exists only from 3.11)."""

from __future__ import annotations

__all__ = ["add_note"]


def add_note(exc: BaseException, note: str) -> None:
    """Attach ``note`` to ``exc`` (PEP 678), once; on Python 3.10 set ``__notes__``."""
    notes = getattr(exc, "__notes__", None)
    if notes is not None and note in notes:
        return
    method = getattr(exc, "add_note", None)
    if method is not None:
        method(note)
        return
    try:
        exc.__notes__ = [*(notes or ()), note]  # type: ignore[attr-defined]
    except (AttributeError, TypeError):
        pass
