"""Find the compiled graphs a node function can run (its subgraphs).

A graph called inside a node runs as that node's subgraph; knowing it lets
``get_subgraphs()``, ``get_state(subgraphs=True)`` and ``update_state`` on a subgraph
namespace find it. The search reads what the function can reach without running it:

* values it holds directly: ``functools.partial`` arguments, the instance of a bound
  method or callable object, closure cells, globals it names;
* attribute chains its bytecode loads from those (``holder.graph.invoke``), including
  chains in nested functions that start from a captured variable;
* the function a wrapper names in ``__wrapped__``.

Attributes are read with :func:`inspect.getattr_static`, so no property or
``__getattr__`` runs. Subscripts (``graphs["a"]``) and attributes of ``self`` are not
followed.
"""

from __future__ import annotations

import dis
import functools
import inspect
from types import BuiltinFunctionType, CodeType, FunctionType, MethodType
from typing import Any

__all__ = ["referenced_graphs"]

_ROOT_LOADS = frozenset({"LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF", "LOAD_CLASSDEREF"})
_ATTR_LOADS = frozenset({"LOAD_ATTR", "LOAD_METHOD"})
_NO_VALUE = object()
# values no attribute chain worth following starts from (checked before reading bytecode,
# which costs far more than the checks)
_LEAVES = (
    str,
    bytes,
    int,
    float,
    complex,
    type(None),
    FunctionType,
    BuiltinFunctionType,
    MethodType,
)


def referenced_graphs(func: Any) -> list[Any]:
    """The compiled graphs (``Pregel`` instances) ``func`` can call, in discovery order."""
    from stategraph.pregel.main import Pregel

    found: list[Any] = []
    visited: set[int] = set()

    def add(value: Any) -> None:
        if isinstance(value, Pregel) and all(value is not g for g in found):
            found.append(value)

    def visit(fn: Any) -> None:
        if id(fn) in visited:
            return
        visited.add(id(fn))
        while isinstance(fn, functools.partial):
            for value in (*fn.args, *fn.keywords.values()):
                add(value)
            fn = fn.func
        if inspect.ismethod(fn):
            add(fn.__self__)
            fn = fn.__func__
        elif not inspect.isfunction(fn):
            for value in vars(fn).values() if hasattr(fn, "__dict__") else ():
                add(value)
            fn = getattr(type(fn), "__call__", None)  # noqa: B004
        code = getattr(fn, "__code__", None)
        if isinstance(code, CodeType):
            _scan_function(fn, code, add)
        wrapped = getattr(fn, "__wrapped__", None)
        if wrapped is not None:
            visit(wrapped)

    visit(func)
    return found


def _scan_function(fn: Any, code: CodeType, add: Any) -> None:
    cells: dict[str, Any] = {}
    closure = getattr(fn, "__closure__", None) or ()
    for name, cell in zip(code.co_freevars, closure, strict=False):
        try:
            cells[name] = cell.cell_contents
        except ValueError:  # a variable that was never assigned
            continue
    for value in cells.values():
        add(value)
    scope = getattr(fn, "__globals__", None) or {}
    named = [scope[n] for n in code.co_names if n in scope]
    if all(isinstance(v, _LEAVES) for v in (*cells.values(), *named)):
        return  # nothing in reach can hold a graph behind an attribute
    for value in _chain_values(code, cells, scope, top=True):
        add(value)
    for nested in _nested_code(code):
        # a nested function reaches the outer scope only through captured variables
        for value in _chain_values(nested, cells, None, top=False):
            add(value)


def _nested_code(code: CodeType) -> list[CodeType]:
    out: list[CodeType] = []
    for const in code.co_consts:
        if isinstance(const, CodeType):
            out.append(const)
            out.extend(_nested_code(const))
    return out


def _chain_values(
    code: CodeType, cells: dict[str, Any], scope: dict[str, Any] | None, *, top: bool
) -> list[Any]:
    """Values loaded by ``root.attr.attr...`` sequences in ``code`` (roots included)."""
    values: list[Any] = []
    current: Any = _NO_VALUE
    for ins in dis.get_instructions(code):
        op = ins.opname
        if op in _ROOT_LOADS:
            current = _root_value(op, ins.argval, cells, scope)
            if current is not _NO_VALUE and top:
                values.append(current)
        elif op in _ATTR_LOADS and current is not _NO_VALUE:
            try:
                current = inspect.getattr_static(current, ins.argval)
            except AttributeError:
                current = _NO_VALUE
                continue
            values.append(current)
        elif op not in ("CACHE", "EXTENDED_ARG"):
            current = _NO_VALUE
    return values


def _root_value(op: str, name: Any, cells: dict[str, Any], scope: dict[str, Any] | None) -> Any:
    if op in ("LOAD_DEREF", "LOAD_CLASSDEREF"):
        return cells.get(name, _NO_VALUE)
    if scope is None:
        return _NO_VALUE
    return scope.get(name, _NO_VALUE)
