"""Optional dependencies: import an extra's package, or say which extra installs it.

An integration imports its third-party package inside :func:`requires_extra`, whose
message names what is missing and the ``pip install "stategraph[...]"`` that brings it::

    with requires_extra('PNG drawings need Pillow: pip install "stategraph[draw]"'):
        from PIL import Image

An ``ImportError`` raised in the block becomes ``ImportError(message)``, chained to the
original (``raise ... from``), so the user reads the fix and the cause. This module
imports nothing of stategraph: any layer may use it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["requires_extra"]


@contextmanager
def requires_extra(message: str) -> Iterator[None]:
    """Run the ``import`` statements of the block; an ``ImportError`` among them is
    raised again as ``ImportError(message)`` from the original one."""
    try:
        yield
    except ImportError as exc:
        raise ImportError(message) from exc
