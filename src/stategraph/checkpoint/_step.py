"""What a step changed, as the runtime hands it to a saver's ``put``.

The runtime's ``new_versions`` argument is a :class:`StepVersions`: a plain dict of
the channel versions that changed since the parent checkpoint, which also names the
nodes whose ``versions_seen`` entry changed since it. A saver that stores checkpoint
bodies as their change from an earlier body (``SqliteSaver``) uses it to do work in
proportion to what the step changed instead of the size of the graph. Any other
caller passes a plain dict, and every saver may treat this one as such.

This module imports nothing: the runtime loads it with every run that saves.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["StepVersions"]


class StepVersions(dict[str, Any]):
    """``new_versions`` with a promise about the checkpoint it comes with.

    The checkpoint's ``channel_versions`` are its parent's with these versions set
    (none removed), and its ``versions_seen`` are its parent's with only the entries
    of the nodes in :attr:`seen` replaced (none removed). The runtime never changes
    either after the call (its ``versions_seen`` entries are copy-on-write).
    """

    __slots__ = ("seen",)

    seen: Iterable[str]
    """The nodes whose ``versions_seen`` entry changed since the parent checkpoint."""

    def __init__(self, versions: Mapping[str, Any], seen: Iterable[str]) -> None:
        """Wrap ``versions``; ``seen`` is kept as given (not copied)."""
        super().__init__(versions)
        self.seen = seen
