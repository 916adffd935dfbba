"""One namespace per library, so every workload is written once.

``load("stategraph")`` and ``load("langgraph")`` return a :class:`Lib` whose attributes
are the library's own ``StateGraph``, ``START``, ``END``, ``Send``, ``MessagesState``,
message classes and checkpoint savers. LangGraph's message classes come from
``langchain_core.messages`` and its SQLite saver from ``langgraph-checkpoint-sqlite``.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import Any

__all__ = ["LIBRARIES", "Lib", "available", "load"]

LIBRARIES = ("stategraph", "langgraph")
"""Every library the suite knows, in the order the table shows them."""

# name -> (attribute, module it comes from)
_IMPORTS: dict[str, dict[str, str]] = {
    "stategraph": {
        "StateGraph": "stategraph.graph",
        "START": "stategraph.graph",
        "END": "stategraph.graph",
        "MessagesState": "stategraph.graph",
        "Send": "stategraph.types",
        "AIMessage": "stategraph.messages",
        "ToolMessage": "stategraph.messages",
        "HumanMessage": "stategraph.messages",
        "InMemorySaver": "stategraph.checkpoint.memory",
        "SqliteSaver": "stategraph.checkpoint.sqlite",
    },
    "langgraph": {
        "StateGraph": "langgraph.graph",
        "START": "langgraph.graph",
        "END": "langgraph.graph",
        "MessagesState": "langgraph.graph",
        "Send": "langgraph.types",
        "AIMessage": "langchain_core.messages",
        "ToolMessage": "langchain_core.messages",
        "HumanMessage": "langchain_core.messages",
        "InMemorySaver": "langgraph.checkpoint.memory",
        "SqliteSaver": "langgraph.checkpoint.sqlite",
    },
}


@dataclass(frozen=True)
class Lib:
    """The names a workload needs, taken from one library."""

    name: str
    StateGraph: Any
    START: str
    END: str
    Send: Any
    MessagesState: Any
    AIMessage: Any
    ToolMessage: Any
    HumanMessage: Any
    InMemorySaver: Any
    SqliteSaver: Any

    def saver(self, kind: str, path: str) -> AbstractContextManager[Any]:
        """Open a checkpointer of ``kind`` ("none", "memory" or "sqlite") for one case.

        ``path`` is the SQLite file used by the "sqlite" kind; the saver is closed when
        the context exits. The "none" kind yields ``None`` (no checkpointer).
        """
        if kind not in ("none", "memory", "sqlite"):
            raise ValueError(f"Unknown saver kind {kind!r}; use 'none', 'memory' or 'sqlite'.")
        return _open_saver(self, kind, path)


@contextmanager
def _open_saver(lib: Lib, kind: str, path: str) -> Iterator[Any]:
    if kind == "none":
        yield None
    elif kind == "memory":
        yield lib.InMemorySaver()
    else:
        with lib.SqliteSaver.from_conn_string(path) as saver:
            saver.setup()
            yield saver


def available(name: str) -> bool:
    """Whether every module library ``name`` needs can be imported here."""
    if name not in _IMPORTS:
        raise ValueError(f"Unknown library {name!r}; choose from {', '.join(LIBRARIES)}.")
    for module in set(_IMPORTS[name].values()):
        try:
            found = importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:
            found = False
        if not found:
            return False
    return True


def load(name: str) -> Lib:
    """Import library ``name`` ("stategraph" or "langgraph") and return its namespace."""
    if name not in _IMPORTS:
        raise ValueError(f"Unknown library {name!r}; choose from {', '.join(LIBRARIES)}.")
    values = {
        attr: getattr(importlib.import_module(module), attr)
        for attr, module in _IMPORTS[name].items()
    }
    return Lib(name=name, **values)
