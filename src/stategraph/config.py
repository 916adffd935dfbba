"""Access the running graph from inside a node: config, store and stream writer."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from typing_extensions import TypedDict

from stategraph._context import current_task

if TYPE_CHECKING:
    from stategraph.store.base import BaseStore
    from stategraph.types import StreamWriter

__all__ = ["RunnableConfig", "get_config", "get_store", "get_stream_writer"]


class RunnableConfig(TypedDict, total=False):
    """The config of a run (``invoke``/``stream`` ``config=``), as a typed dict.

    The same keys as langchain-core's ``RunnableConfig``, so code annotated with it
    ports unchanged. Every key is optional.
    """

    configurable: dict[str, Any]
    """Per-run settings: ``thread_id``, ``checkpoint_id``, ``checkpoint_ns``, your own."""
    tags: list[str]
    """Tags for this run and the nodes and models in it (``"nostream"`` silences)."""
    metadata: dict[str, Any]
    """Metadata for this run, added to what nodes and the ``messages`` stream see."""
    callbacks: Any
    """Callback handlers (LangChain's or stategraph's) told about the run."""
    run_name: str
    """The name of the run in traces."""
    run_id: Any
    """The id of the run in traces (a UUID)."""
    max_concurrency: int | None
    """How many tasks of one step may run at once."""
    recursion_limit: int
    """How many steps the run may take before ``GraphRecursionError``."""
    executor: Any
    """Where the nodes of this run's tasks execute (a stategraph ``TaskExecutor``:
    threads, Ray, Dask); overrides ``compile(executor=...)``."""


def get_config() -> RunnableConfig:
    """The config of the task that is running (``configurable``, ``tags``, ``metadata``...).

    Raises ``RuntimeError`` when called outside a running node.
    """
    return cast(RunnableConfig, current_task("get_config()").config)


def get_store() -> BaseStore | None:
    """The store given to ``compile(store=...)``, or ``None`` if the graph has none."""
    return current_task("get_store()").runtime.store


def get_stream_writer() -> StreamWriter:
    """A function that emits its argument on the ``custom`` stream of the current run.

    When the caller did not ask for ``custom``, the writer does nothing.
    """
    return current_task("get_stream_writer()").stream_writer
