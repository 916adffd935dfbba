"""Access the running graph from inside a node: config, store and stream writer."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stategraph._context import current_task

if TYPE_CHECKING:
    from stategraph.store.base import BaseStore
    from stategraph.types import StreamWriter

__all__ = ["get_config", "get_store", "get_stream_writer"]


def get_config() -> dict[str, Any]:
    """The config of the task that is running (``configurable``, ``tags``, ``metadata``...).

    Raises ``RuntimeError`` when called outside a running node.
    """
    return current_task("get_config()").config


def get_store() -> BaseStore | None:
    """The store given to ``compile(store=...)``, or ``None`` if the graph has none."""
    return current_task("get_store()").runtime.store


def get_stream_writer() -> StreamWriter:
    """A function that emits its argument on the ``custom`` stream of the current run.

    When the caller did not ask for ``custom``, the writer does nothing.
    """
    return current_task("get_stream_writer()").stream_writer
