"""The ``stategraph.run`` logger, and whether a run starting now should log to it.

Apart from :mod:`stategraph.observe._logging` (which re-exports both) so that a run
can ask, as it starts, without loading the logging observer and the observer protocol
it builds on.
"""

from __future__ import annotations

import logging

__all__ = ["debug_logging_enabled", "logger"]

logger = logging.getLogger("stategraph.run")


def debug_logging_enabled() -> bool:
    """Whether DEBUG records of ``stategraph.run`` would be emitted."""
    return logger.isEnabledFor(logging.DEBUG)
