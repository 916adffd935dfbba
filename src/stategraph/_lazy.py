"""Lazy package attributes: names a package exports but imports only when first used.

A package keeps ``import`` cheap by listing its public names with the module each
comes from, and hands the table to :func:`lazy_attributes`::

    _LAZY = {"ToolNode": "stategraph.prebuilt.tool_node", ...}
    __getattr__, __dir__ = lazy_attributes(__name__, _LAZY, globals())

The first access imports the module and caches the value in the package namespace, so
later accesses are plain attribute reads.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_attributes"]


def lazy_attributes(
    package: str, table: Mapping[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of ``package`` (whose globals are
    ``namespace``): ``table`` maps each lazy name to the module that defines it;
    ``__dir__`` lists the package's ``__all__``."""

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(namespace["__all__"])

    return __getattr__, __dir__
