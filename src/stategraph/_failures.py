"""Log a failing handler, observer or exporter once, and let the run go on."""

from __future__ import annotations

import logging
import threading
import weakref
from typing import Any

__all__ = ["report_failure"]

logger = logging.getLogger("stategraph.observe")

_reported: weakref.WeakSet[Any] = weakref.WeakSet()
_reported_ids: set[int] = set()
_lock = threading.Lock()


def _first_time(owner: Any) -> bool:
    with _lock:
        try:
            if owner in _reported:
                return False
            _reported.add(owner)
        except TypeError:  # not weak-referenceable: remember its id
            if id(owner) in _reported_ids:
                return False
            _reported_ids.add(id(owner))
    return True


def report_failure(owner: Any, error: BaseException, what: str) -> None:
    """Log (at WARNING, with the traceback) that ``owner`` raised while handling
    ``what``; only the first failure of each owner is logged."""
    if not _first_time(owner):
        return
    logger.warning(
        "%s %r raised %s while handling %s; the run goes on (later errors of this "
        "handler are not logged). Set raise_error = True on it to make its errors "
        "fail the run.",
        type(owner).__name__,
        owner,
        type(error).__name__,
        what,
        exc_info=error,
    )
