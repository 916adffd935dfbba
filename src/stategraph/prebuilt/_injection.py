"""Markers for tool parameters that the :class:`~stategraph.prebuilt.ToolNode` fills in.

A tool parameter annotated ``Annotated[T, InjectedState]``, ``Annotated[T,
InjectedState("key")]``, ``Annotated[T, InjectedStore()]`` or ``Annotated[str,
InjectedToolCallId]`` is hidden from the argument schema the model sees and filled by
the tool node from the graph state, the graph's store or the tool call's id. A
parameter typed ``RunnableConfig`` (stategraph's or langchain-core's, plain or as
``Annotated[RunnableConfig, InjectedToolArg]``) receives the run's config. langchain-
core's ``InjectedToolArg`` / ``InjectedToolCallId`` markers are recognized too.

Once an application uses langchain-core, these marker classes also become subclasses
of langchain-core's (see :mod:`stategraph.interop.langchain._tool_types`), so LangChain
``@tool`` s hide such parameters from the model as they do in LangGraph.
"""

from __future__ import annotations

import inspect
import sys
import typing
from collections.abc import Callable, Mapping
from typing import Any

__all__ = [
    "InjectedToolArg",
    "InjectedState",
    "InjectedStore",
    "InjectedToolCallId",
    "Injection",
    "find_injections",
    "injection_of",
]


class _Marker:
    """Private root of the markers: gives them a base class that the LangChain bridge
    can extend with langchain-core's ``InjectedToolArg`` (Python refuses to change the
    bases of a class whose only base is ``object``)."""


class InjectedToolArg(_Marker):
    """Base marker: the parameter is hidden from the model-facing schema.

    Used alone (``Annotated[T, InjectedToolArg]``), the tool node does not fill the
    parameter; the function's default applies unless the caller passes it.
    """


class InjectedState(InjectedToolArg):
    """Inject the graph state (``Annotated[dict, InjectedState]``) or one key of it
    (``Annotated[str, InjectedState("key")]``) into a tool parameter.
    """

    def __init__(self, field: str | None = None) -> None:
        self.field = field

    def __repr__(self) -> str:
        return f"InjectedState({self.field!r})" if self.field else "InjectedState()"


class InjectedStore(InjectedToolArg):
    """Inject the graph's long-term memory store (``Annotated[BaseStore, InjectedStore()]``).

    The graph must be compiled with ``store=...``; otherwise the tool call fails with an
    error naming the tool.
    """

    def __repr__(self) -> str:
        return "InjectedStore()"


class InjectedToolCallId(InjectedToolArg):
    """Inject the id of the tool call being run (``Annotated[str, InjectedToolCallId]``).

    Tools returning a ``Command`` use it to build the matching ``ToolMessage``.
    """


class Injection:
    """What to inject into one parameter: ``kind`` is "state", "store", "call_id",
    "config" (the run's ``RunnableConfig``), "runtime" (a
    :class:`~stategraph.prebuilt.ToolRuntime`) or "none"."""

    __slots__ = ("field", "kind")

    def __init__(self, kind: str, field: str | None = None) -> None:
        self.kind = kind
        self.field = field

    def __repr__(self) -> str:
        return f"Injection({self.kind!r}, {self.field!r})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Injection) and other.kind == self.kind and other.field == self.field
        )

    def __hash__(self) -> int:
        return hash((self.kind, self.field))


def _marker_classes(marker: Any) -> tuple[type, ...] | None:
    """The classes (MRO) of an ``Annotated`` marker, or ``None`` if it is not one.

    Markers are stategraph's classes above or langchain-core's ``InjectedToolArg``
    family (recognized by name, without importing langchain-core).
    """
    cls = marker if isinstance(marker, type) else type(marker)
    mro = cls.__mro__
    if any(c.__name__ == "InjectedToolArg" for c in mro):
        return mro
    return None


def _marker_injection(marker: Any, base: Any = None) -> Injection | None:
    mro = _marker_classes(marker)
    if mro is None:
        return None
    names = {c.__name__ for c in mro}
    if "InjectedState" in names:
        field = None if isinstance(marker, type) else getattr(marker, "field", None)
        return Injection("state", field)
    if "InjectedStore" in names:
        return Injection("store")
    if "InjectedToolCallId" in names:
        return Injection("call_id")
    if _is_runnable_config(base):
        return Injection("config")
    return Injection("none")


def _is_runnable_config(hint: Any) -> bool:
    """Whether ``hint`` is a ``RunnableConfig`` (stategraph's or langchain-core's)."""
    if typing.get_origin(hint) is typing.Union or type(hint).__name__ == "UnionType":
        return any(_is_runnable_config(a) for a in typing.get_args(hint) if a is not type(None))
    return getattr(hint, "__name__", None) == "RunnableConfig" and isinstance(
        getattr(hint, "__annotations__", None), Mapping
    )


def injection_of(hint: Any) -> Injection | None:
    """The injection an annotation asks for, or ``None`` for a model-facing parameter.

    Looks through ``Optional``/``Union`` members for an ``Annotated`` carrying a marker.
    """
    from stategraph.prebuilt._tool_runtime import ToolRuntime

    origin = typing.get_origin(hint)
    if hint is ToolRuntime or origin is ToolRuntime:
        return Injection("runtime")
    if origin is typing.Annotated:
        base, *markers = typing.get_args(hint)
        for marker in reversed(markers):
            found = _marker_injection(marker, base)
            if found is not None:
                return found
        return injection_of(base)
    if _is_runnable_config(hint):
        return Injection("config")
    if origin is typing.Union or type(hint).__name__ == "UnionType":
        for arg in typing.get_args(hint):
            found = injection_of(arg)
            if found is not None:
                return found
    return None


def resolved_hints(func: Callable[..., Any]) -> dict[str, Any]:
    """``func``'s parameter annotations with ``Annotated`` extras, strings resolved when possible."""
    target = inspect.unwrap(func)
    try:
        module = sys.modules.get(getattr(target, "__module__", "") or "")
        globalns = vars(module) if module is not None else None
        return typing.get_type_hints(target, globalns=globalns, include_extras=True)
    except Exception:
        return dict(getattr(target, "__annotations__", {}) or {})


def find_injections(func: Callable[..., Any]) -> dict[str, Injection]:
    """Map each injected parameter of ``func`` to what fills it."""
    hints = resolved_hints(func)
    out: dict[str, Injection] = {}
    for name, hint in hints.items():
        if name == "return":
            continue
        found = injection_of(hint)
        if found is not None:
            out[name] = found
    return out


def injected_values(
    injections: Mapping[str, Injection],
    *,
    state: Any,
    call_id: str | None,
    store: Any,
    tool_name: str,
    runtime: Callable[[], Any] | None = None,
    config: Callable[[], Any] | None = None,
) -> dict[str, Any]:
    """The values to pass for ``injections`` given the state, call id and store.

    ``runtime`` builds the call's :class:`~stategraph.prebuilt.ToolRuntime` and
    ``config`` returns the run's config (each called only when a parameter asks for it).
    """
    values: dict[str, Any] = {}
    for param, spec in injections.items():
        if spec.kind == "config":
            values[param] = _run_config() if config is None else config()
            continue
        if spec.kind == "runtime":
            if runtime is None:
                from stategraph.prebuilt._tool_runtime import current_tool_runtime

                values[param] = current_tool_runtime(state, call_id, [])
            else:
                values[param] = runtime()
            continue
        if spec.kind == "state":
            values[param] = state if spec.field is None else _state_field(state, spec.field)
        elif spec.kind == "call_id":
            values[param] = call_id
        elif spec.kind == "store":
            if store is None:
                raise ValueError(
                    f"Tool '{tool_name}' asks for the store in parameter '{param}' "
                    "(InjectedStore), but the graph has none. Compile the graph with "
                    "store=..., e.g. builder.compile(store=InMemoryStore())."
                )
            values[param] = store
    return values


def _run_config() -> Any:
    """The running graph's config (an empty one outside a graph run)."""
    from stategraph.config import get_config

    try:
        return get_config()
    except RuntimeError:
        return {}


def _state_field(state: Any, field: str) -> Any:
    if isinstance(state, Mapping):
        if field in state:
            return state[field]
        raise KeyError(
            f"InjectedState({field!r}): the graph state has no key '{field}'. "
            f"Keys present: {', '.join(map(str, state)) or '(none)'}."
        )
    if hasattr(state, field):
        return getattr(state, field)
    raise KeyError(
        f"InjectedState({field!r}): the graph state {type(state).__name__} has no field '{field}'."
    )


def _adopt_langchain_markers() -> None:
    """If langchain-core is already loaded, let the LangChain bridge make these markers
    langchain-core's too before any LangChain tool builds its schema."""
    if "langchain_core" in sys.modules:
        from stategraph._bridges import langchain_bridge

        langchain_bridge()


_adopt_langchain_markers()
