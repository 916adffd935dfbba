"""The served graphs: imported once, bound to the server's checkpointer and store.

A ``graphs`` entry may name a compiled graph, a ``StateGraph`` builder (compiled
here), or a *factory*: a function (sync or async) taking nothing or the run's config
and returning one of those, or a context manager yielding one (entered for the run
and left when it ends). Factories are called for every run, as LangGraph Server
does, so a graph can depend on the assistant's config.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import inspect
import sys
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

from stategraph.server._config import ConfigError, GraphSpec

__all__ = ["GraphRegistry", "GraphLoadError"]


class GraphLoadError(ConfigError):
    """A ``graphs`` entry that cannot be imported or is not a graph."""


def _is_graph(obj: Any) -> bool:
    return callable(getattr(obj, "astream", None)) and callable(getattr(obj, "get_graph", None))


def _import_target(target: str, base: Path, graph_id: str) -> Any:
    if target.endswith(".py") or "/" in target or "\\" in target:
        path = (base / target).resolve()
        if not path.is_file():
            raise GraphLoadError(f"graphs.{graph_id}: no such file {path}.")
        name = f"stategraph_serve_{graph_id}_{path.stem}"
        if name in sys.modules:
            return sys.modules[name]
        if str(path.parent) not in sys.path:
            sys.path.insert(0, str(path.parent))
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise GraphLoadError(f"graphs.{graph_id}: cannot load {path} as Python.")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            del sys.modules[name]
            raise GraphLoadError(
                f"graphs.{graph_id}: importing {path} failed: {type(exc).__name__}: {exc}"
            ) from exc
        return module
    try:
        return importlib.import_module(target)
    except Exception as exc:
        raise GraphLoadError(
            f"graphs.{graph_id}: importing module '{target}' failed: {type(exc).__name__}: "
            f"{exc}. Run the server from your project folder or list the folder in "
            "dependencies."
        ) from exc


class _Entry:
    __slots__ = ("factory", "graph", "spec", "takes_config")

    def __init__(self, spec: GraphSpec, obj: Any) -> None:
        self.spec = spec
        self.graph: Any = None
        self.factory: Any = None
        self.takes_config = False
        if _is_graph(obj):
            self.graph = obj
        elif hasattr(obj, "add_node") and callable(getattr(obj, "compile", None)):
            self.graph = obj.compile()
        elif callable(obj):
            self.factory = obj
            try:
                params = [
                    p
                    for p in inspect.signature(obj).parameters.values()
                    if p.default is inspect.Parameter.empty
                    and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                ]
            except (TypeError, ValueError):
                params = []
            if len(params) > 1:
                raise GraphLoadError(
                    f"graphs.{spec.graph_id}: the factory {spec.path} takes "
                    f"{len(params)} arguments; it may take none or one (the run's config)."
                )
            self.takes_config = len(params) == 1
        else:
            raise GraphLoadError(
                f"graphs.{spec.graph_id}: {spec.path} is a {type(obj).__name__}, not a graph: "
                "name a compiled graph, a StateGraph builder or a function returning a graph."
            )


class GraphRegistry:
    """The graphs of a server, by graph id."""

    def __init__(
        self, specs: Mapping[str, GraphSpec], base_dir: Path, checkpointer: Any, store: Any
    ) -> None:
        self.base_dir = base_dir
        self.checkpointer = checkpointer
        self.store = store
        self._entries: dict[str, _Entry] = {}
        for graph_id, spec in specs.items():
            target, _, attr_path = spec.path.rpartition(":")
            module = _import_target(target, base_dir, graph_id)
            obj: Any = module
            for part in attr_path.split("."):
                if not hasattr(obj, part):
                    raise GraphLoadError(
                        f"graphs.{graph_id}: '{target}' has no attribute '{attr_path}'."
                    )
                obj = getattr(obj, part)
            self._entries[graph_id] = _Entry(spec, obj)

    @property
    def ids(self) -> list[str]:
        """The graph ids, in config order."""
        return list(self._entries)

    def spec(self, graph_id: str) -> GraphSpec:
        """The config entry of ``graph_id`` (``KeyError`` if unknown)."""
        return self._entries[graph_id].spec

    def _bind(self, graph: Any, graph_id: str) -> Any:
        if callable(getattr(graph, "compile", None)) and not _is_graph(graph):
            graph = graph.compile()
        if not _is_graph(graph):
            raise GraphLoadError(
                f"graphs.{graph_id}: the factory returned a {type(graph).__name__}, not a graph."
            )
        update: dict[str, Any] = {"checkpointer": self.checkpointer}
        if self.store is not None:
            update["store"] = self.store
        return graph.copy(update)

    @contextlib.asynccontextmanager
    async def graph(
        self, graph_id: str, config: Mapping[str, Any] | None = None
    ) -> AsyncIterator[Any]:
        """The graph ``graph_id`` bound to the server's checkpointer and store (a
        factory is called with ``config`` and, if it is a context manager, left on exit)."""
        entry = self._entries[graph_id]
        if entry.graph is not None:
            yield self._bind(entry.graph, graph_id)
            return
        made = entry.factory(dict(config or {})) if entry.takes_config else entry.factory()
        if inspect.isawaitable(made):
            made = await made
        if hasattr(made, "__aenter__"):
            async with made as graph:
                yield self._bind(graph, graph_id)
        elif hasattr(made, "__enter__") and not _is_graph(made):
            with made as graph:
                yield self._bind(graph, graph_id)
        else:
            yield self._bind(made, graph_id)

    def static(self, graph_id: str) -> Any | None:
        """The graph when it is not a factory (for drawings and schemas), else ``None``."""
        entry = self._entries[graph_id]
        return None if entry.graph is None else self._bind(entry.graph, graph_id)
