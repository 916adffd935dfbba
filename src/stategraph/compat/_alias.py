"""The ``langgraph`` import alias: a meta-path finder answering ``langgraph...`` names.

``langgraph.X`` resolves to the module ``stategraph.X`` itself (the same module object,
so classes are identical under both names), except for the few private LangGraph
modules that libraries built on LangGraph import, which resolve to stand-ins in
:mod:`stategraph.compat._langgraph_internal` (see :data:`_REMAP`).
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

__all__ = [
    "LangGraphInstalledError",
    "alias_installed",
    "install_langgraph_alias",
    "uninstall_langgraph_alias",
]

_ROOT = "langgraph"
_REMAP = {
    # LangGraph's private helpers that langgraph-swarm, langgraph-supervisor and
    # langchain.agents import
    "langgraph._internal": "stategraph.compat._langgraph_internal",
}


class LangGraphInstalledError(RuntimeError):
    """The alias was asked for while LangGraph itself is installed or imported."""


def _target(fullname: str) -> str:
    for prefix, replacement in _REMAP.items():
        if fullname == prefix or fullname.startswith(prefix + "."):
            return replacement + fullname[len(prefix) :]
    return "stategraph" + fullname[len(_ROOT) :]


class _AliasLoader(importlib.abc.Loader):
    """Hands out the already imported stategraph module under the LangGraph name."""

    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return importlib.import_module(self.target)

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the stategraph module is already executed."""


class _AliasFinder(importlib.abc.MetaPathFinder):
    """Finds ``langgraph`` and its submodules as stategraph modules."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: Any = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != _ROOT and not fullname.startswith(_ROOT + "."):
            return None
        module_name = _target(fullname)
        try:
            found = importlib.util.find_spec(module_name)
        except ModuleNotFoundError:
            found = None
        if found is None:
            raise ModuleNotFoundError(
                f"No module named {fullname!r}: the LangGraph alias maps it to "
                f"{module_name!r}, which stategraph does not have. Import the stategraph "
                "module that offers the name you need, or report the missing module.",
                name=fullname,
            )
        is_package = found.submodule_search_locations is not None
        return importlib.util.spec_from_loader(
            fullname, _AliasLoader(module_name), is_package=is_package
        )

    def __repr__(self) -> str:
        return "<stategraph LangGraph alias>"


def _installed_finder() -> _AliasFinder | None:
    for finder in sys.meta_path:
        if isinstance(finder, _AliasFinder):
            return finder
    return None


def alias_installed() -> bool:
    """Whether :func:`install_langgraph_alias` is in effect."""
    return _installed_finder() is not None


def _real_langgraph() -> str | None:
    """Where the real LangGraph is, if it is imported or installed."""
    module = sys.modules.get(_ROOT)
    if module is not None and not getattr(module, "__name__", "").startswith("stategraph"):
        return str(getattr(module, "__file__", None) or getattr(module, "__path__", _ROOT))
    try:
        spec = importlib.util.find_spec(_ROOT)
    except (ImportError, ValueError):
        spec = None
    if spec is not None:
        locations = list(spec.submodule_search_locations or [])
        return ", ".join(locations) or str(spec.origin)
    return None


def install_langgraph_alias() -> None:
    """Make ``import langgraph...`` resolve to stategraph (idempotent).

    Raises :class:`LangGraphInstalledError` when LangGraph itself is installed or
    imported: uninstall it (``pip uninstall langgraph``), or drop the alias and use
    LangGraph.
    """
    if alias_installed():
        return
    real = _real_langgraph()
    if real is not None:
        raise LangGraphInstalledError(
            f"install_langgraph_alias(): LangGraph itself is installed ({real}), so "
            "'import langgraph' must keep meaning LangGraph. Uninstall it "
            "(pip uninstall langgraph langgraph-prebuilt langgraph-checkpoint) to run "
            "LangGraph-based libraries on stategraph, or drop the alias."
        )
    sys.meta_path.insert(0, _AliasFinder())


def uninstall_langgraph_alias() -> None:
    """Undo :func:`install_langgraph_alias` (forgets the ``langgraph`` module names)."""
    finder = _installed_finder()
    if finder is None:
        return
    sys.meta_path.remove(finder)
    for name in [n for n in sys.modules if n == _ROOT or n.startswith(_ROOT + ".")]:
        del sys.modules[name]
