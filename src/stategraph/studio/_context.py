"""What every request of the studio needs: the saver, the graph, the store, the settings."""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Any

from stategraph.studio.limits import StudioLimits

__all__ = ["Studio", "StudioError"]


class StudioError(Exception):
    """A request the studio refuses: ``status`` and a message saying what to do."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


@dataclass
class Studio:
    """The studio's state. ``graph`` is compiled with ``saver`` (and ``store``) as its
    checkpointer; without ``allow_writes`` nothing is ever written."""

    saver: Any
    index: Any
    graph: Any = None
    store: Any = None
    allow_writes: bool = False
    token: str | None = None
    assistant_id: str = "agent"
    csrf_secret: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    created_threads: set[str] = field(default_factory=set)
    limits: StudioLimits = field(default_factory=StudioLimits)
    """Request body size and time limits (see :mod:`stategraph.studio.limits`)."""

    def need_writes(self, what: str) -> None:
        """Refuse ``what`` unless the studio was started with ``--allow-writes``."""
        if not self.allow_writes:
            raise StudioError(
                f"{what} changes the database, and this studio is read-only: restart it "
                "with --allow-writes.",
                403,
            )

    def need_graph(self, what: str) -> Any:
        """The graph, or a clear refusal when the studio was started without one."""
        if self.graph is None:
            raise StudioError(
                f"{what} needs the graph: start the studio with it, e.g. "
                "`stategraph studio myapp.graph:graph --sqlite FILE`.",
                409,
            )
        return self.graph

    def check_assistant(self, assistant_id: str | None) -> None:
        """Refuse an assistant id other than the loaded graph's."""
        if assistant_id not in (None, self.assistant_id):
            raise StudioError(
                f"No assistant '{assistant_id}': this studio serves '{self.assistant_id}'.", 404
            )
