"""Finding the user's graph from ``module:attribute`` or ``path/to/file.py:attribute``."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from stategraph.cli._errors import EXIT_GRAPH_ERROR, EXIT_USAGE, CliError

__all__ = ["load_graph"]


def _is_graph(obj: Any) -> bool:
    return callable(getattr(obj, "get_graph", None)) and callable(getattr(obj, "invoke", None))


def _import(target: str) -> ModuleType:
    path = Path(target)
    if target.endswith(".py") or os.sep in target or "/" in target:
        if not path.is_file():
            raise CliError(f"No such file: {target}", EXIT_USAGE)
        folder = str(path.resolve().parent)
        if folder not in sys.path:
            sys.path.insert(0, folder)
        name = path.stem
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise CliError(f"Cannot load {target} as a Python module.", EXIT_USAGE)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            raise CliError(
                f"Importing {target} failed: {type(exc).__name__}: {exc}", EXIT_GRAPH_ERROR
            ) from exc
        return module
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        return importlib.import_module(target)
    except ModuleNotFoundError as exc:
        if exc.name and target.startswith(exc.name):
            raise CliError(
                f"Cannot import module '{target}': {exc}. Run the command from your project "
                "folder, or give a file path such as app/graph.py:graph.",
                EXIT_USAGE,
            ) from exc
        raise CliError(
            f"Importing '{target}' failed: {type(exc).__name__}: {exc}", EXIT_GRAPH_ERROR
        ) from exc
    except Exception as exc:
        raise CliError(
            f"Importing '{target}' failed: {type(exc).__name__}: {exc}", EXIT_GRAPH_ERROR
        ) from exc


def load_graph(spec: str) -> Any:
    """The compiled graph named by ``spec`` (``module:attr``, ``file.py:attr``).

    A ``StateGraph`` builder is compiled; a function taking no arguments is called and
    must return a graph.
    """
    if ":" not in spec:
        raise CliError(
            f"'{spec}' does not name a graph: use module:attribute (e.g. myapp.graph:graph) "
            "or path/to/file.py:attribute.",
            EXIT_USAGE,
        )
    target, _, attr_path = spec.rpartition(":")
    module = _import(target)
    obj: Any = module
    for part in attr_path.split("."):
        if not hasattr(obj, part):
            graphs = sorted(
                name
                for name, value in vars(module).items()
                if not name.startswith("_")
                and not isinstance(value, type)
                and (_is_graph(value) or hasattr(value, "compile"))
            )
            hint = f" Graphs found there: {', '.join(graphs)}." if graphs else ""
            raise CliError(f"'{target}' has no attribute '{attr_path}'.{hint}", EXIT_USAGE)
        obj = getattr(obj, part)
    if not _is_graph(obj) and callable(getattr(obj, "compile", None)):
        try:
            obj = obj.compile()
        except Exception as exc:
            raise CliError(
                f"Compiling '{spec}' failed: {type(exc).__name__}: {exc}", EXIT_GRAPH_ERROR
            ) from exc
    elif not _is_graph(obj) and callable(obj):
        try:
            obj = obj()
        except TypeError as exc:
            raise CliError(
                f"'{spec}' is a function; it must take no arguments and return a graph ({exc}).",
                EXIT_USAGE,
            ) from exc
        except Exception as exc:
            raise CliError(
                f"Calling '{spec}' failed: {type(exc).__name__}: {exc}", EXIT_GRAPH_ERROR
            ) from exc
    if not _is_graph(obj):
        raise CliError(
            f"'{spec}' is a {type(obj).__name__}, not a graph: name a compiled graph, a "
            "StateGraph builder or a function returning a graph.",
            EXIT_USAGE,
        )
    return obj
