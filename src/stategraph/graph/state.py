"""``StateGraph``: the builder of graphs whose nodes communicate through a shared state."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from stategraph.constants import END, NS_END, NS_SEP, RESERVED, START
from stategraph.graph._schema import SchemaInfo, schema_info
from stategraph.types import CachePolicy, RetryPolicy, TimeoutPolicy

__all__ = ["StateGraph", "CompiledStateGraph", "NodeSpec", "BranchSpec"]

StateT = TypeVar("StateT")
ContextT = TypeVar("ContextT")
InputT = TypeVar("InputT")
OutputT = TypeVar("OutputT")


@dataclass
class NodeSpec:
    """Everything ``add_node`` recorded about a node."""

    name: str
    func: Any
    input_schema: Any
    retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None
    cache_policy: CachePolicy | None = None
    timeout: TimeoutPolicy | None = None
    defer: bool = False
    destinations: list[str] | None = None
    destination_labels: dict[str, str] | None = None
    metadata: dict[str, Any] | None = None
    is_subgraph: bool = False


class BranchSpec:
    """A conditional edge: its path function, optional ``path_map`` and known targets."""

    __slots__ = ("ends", "name", "path", "path_map", "source")

    def __init__(
        self,
        source: str,
        name: str,
        path: Callable[..., Any],
        path_map: dict[Hashable, str] | None,
        ends: list[str] | None,
    ) -> None:
        self.source = source
        self.name = name
        self.path = path
        self.path_map = path_map
        self.ends = ends


def _literal_targets(func: Any) -> list[str] | None:
    """Targets named by a ``Literal[...]`` (or ``Command[Literal[...]]``) return annotation."""
    target = func if inspect.isfunction(func) or inspect.ismethod(func) else type(func).__call__
    try:
        hints = typing.get_type_hints(target)
    except Exception:
        return None
    ret = hints.get("return")
    if ret is None:
        return None

    def collect(tp: Any) -> list[str]:
        origin = typing.get_origin(tp)
        if origin is typing.Literal:
            return [a for a in typing.get_args(tp) if isinstance(a, str)]
        out: list[str] = []
        for arg in typing.get_args(tp):
            out.extend(collect(arg))
        return out

    found = collect(ret)
    return found or None


class StateGraph(Generic[StateT, ContextT, InputT, OutputT]):
    """Builder of a graph whose nodes read the shared state and return updates.

    Example::

        builder = StateGraph(State)
        builder.add_node("step", step)
        builder.add_edge(START, "step")
        graph = builder.compile()
        graph.invoke({"x": 1})
    """

    def __init__(
        self,
        state_schema: type[StateT] | None = None,
        context_schema: type[ContextT] | None = None,
        *,
        input_schema: type[InputT] | None = None,
        output_schema: type[OutputT] | None = None,
        **kwargs: Any,
    ) -> None:
        if state_schema is None:
            raise ValueError("StateGraph needs a state schema, e.g. StateGraph(MyState).")
        if "input" in kwargs and input_schema is None:
            input_schema = kwargs.pop("input")
        if "output" in kwargs and output_schema is None:
            output_schema = kwargs.pop("output")
        if "config_schema" in kwargs and context_schema is None:
            context_schema = kwargs.pop("config_schema")
        if kwargs:
            raise TypeError(f"StateGraph() got unexpected arguments: {', '.join(kwargs)}")
        self.state_schema = state_schema
        self.context_schema = context_schema
        self.input_schema: Any = input_schema or state_schema
        self.output_schema: Any = output_schema or state_schema
        self.schemas: dict[Any, SchemaInfo] = {}
        self.nodes: dict[str, NodeSpec] = {}
        self.edges: set[tuple[str, str]] = set()
        self.waiting_edges: set[tuple[tuple[str, ...], str]] = set()
        self.branches: dict[str, dict[str, BranchSpec]] = {}
        self.compiled = False
        for schema in (self.state_schema, self.input_schema, self.output_schema):
            self._add_schema(schema)

    # ------------------------------------------------------------------ schemas
    def _add_schema(self, schema: Any) -> SchemaInfo:
        info = self.schemas.get(schema)
        if info is not None:
            return info
        info = schema_info(schema)
        for key, ch in info.channels.items():
            for other in self.schemas.values():
                existing = other.channels.get(key)
                if existing is not None and type(existing) is not type(ch):
                    raise ValueError(
                        f"State key '{key}' is declared with different channel types in "
                        f"{getattr(other.schema, '__name__', other.schema)} "
                        f"({type(existing).__name__}) and "
                        f"{getattr(schema, '__name__', schema)} ({type(ch).__name__}); "
                        "declare it the same way in every schema."
                    )
        self.schemas[schema] = info
        return info

    @property
    def channels(self) -> dict[str, Any]:
        """All state channels declared by any schema of the graph (first declaration wins)."""
        out: dict[str, Any] = {}
        for info in self.schemas.values():
            for key, ch in info.channels.items():
                out.setdefault(key, ch)
        return out

    @property
    def managed(self) -> dict[str, Any]:
        """All managed-value keys declared by any schema."""
        out: dict[str, Any] = {}
        for info in self.schemas.values():
            out.update(info.managed)
        return out

    # ------------------------------------------------------------------ nodes
    def _check_name(self, name: str) -> None:
        if not isinstance(name, str) or not name:
            raise ValueError(f"Node names must be non-empty strings, got {name!r}.")
        if name in RESERVED or name in (START, END):
            raise ValueError(f"Node name '{name}' is reserved; choose another name.")
        for ch in (NS_SEP, NS_END):
            if ch in name:
                raise ValueError(
                    f"Node name '{name}' contains '{ch}', which is reserved for namespaces."
                )
        if name in self.nodes:
            raise ValueError(f"Node '{name}' already present; node names must be unique.")

    def add_node(
        self,
        node: str | Callable[..., Any] | Any,
        action: Callable[..., Any] | Any | None = None,
        *,
        defer: bool = False,
        metadata: dict[str, Any] | None = None,
        input_schema: type[Any] | None = None,
        retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None,
        cache_policy: CachePolicy | None = None,
        timeout: TimeoutPolicy | float | None = None,
        destinations: dict[str, str] | tuple[str, ...] | None = None,
        **kwargs: Any,
    ) -> StateGraph[StateT, ContextT, InputT, OutputT]:
        """Add a node: ``add_node("name", fn)`` or ``add_node(fn)`` (named after ``fn``).

        ``fn`` may be sync or async, a callable object, a ``functools.partial`` or a
        compiled graph (a subgraph). ``input_schema`` (or the annotation of ``fn``'s
        first parameter) limits what the node reads.
        """
        if "input" in kwargs and input_schema is None:
            input_schema = kwargs.pop("input")
        if kwargs:
            raise TypeError(f"add_node() got unexpected arguments: {', '.join(kwargs)}")
        if self.compiled:
            import warnings

            warnings.warn(
                "Adding a node to a graph that was already compiled: the compiled graph does "
                "not change; compile again to use the new node.",
                stacklevel=2,
            )
        if not isinstance(node, str):
            action = node
            name = getattr(action, "name", None) or getattr(action, "__name__", None)
            if not isinstance(name, str) and callable(action):
                name = type(action).__name__
            if not isinstance(name, str):
                raise ValueError(
                    f"Cannot infer a node name from {action!r}; use add_node('name', action)."
                )
            node = name
        if action is None:
            raise ValueError(f"add_node('{node}') needs an action (a function or a graph).")
        self._check_name(node)
        from stategraph.pregel.main import Pregel

        is_subgraph = isinstance(action, Pregel)
        if input_schema is None and not is_subgraph:
            input_schema = _first_param_schema(action)
        if input_schema is not None:
            self._add_schema(input_schema)
        if timeout is not None and not isinstance(timeout, TimeoutPolicy):
            timeout = TimeoutPolicy(run_timeout=timeout)
        ends = None
        labels: dict[str, str] = {}
        if destinations is not None:
            ends = list(destinations.keys() if isinstance(destinations, dict) else destinations)
            if isinstance(destinations, dict):
                labels = {k: v for k, v in destinations.items() if v}
        elif not is_subgraph:
            ends = _literal_targets(action)
        self.nodes[node] = NodeSpec(
            name=node,
            func=action,
            input_schema=input_schema or self.state_schema,
            retry_policy=retry_policy,
            cache_policy=cache_policy,
            timeout=timeout,
            defer=defer,
            destinations=ends,
            destination_labels=labels,
            metadata=metadata,
            is_subgraph=is_subgraph,
        )
        return self

    def add_edge(
        self, start_key: str | Sequence[str], end_key: str
    ) -> StateGraph[StateT, ContextT, InputT, OutputT]:
        """Add a static edge; a list of starts makes ``end_key`` wait for all of them."""
        if isinstance(start_key, str):
            if start_key == END:
                raise ValueError("END cannot be the start of an edge.")
            if end_key == START:
                raise ValueError("START cannot be the end of an edge.")
            self.edges.add((start_key, end_key))
            return self
        starts = tuple(start_key)
        for s in starts:
            if s == END:
                raise ValueError("END cannot be the start of an edge.")
        if end_key == END:
            raise ValueError("A waiting edge (list of starts) cannot end at END.")
        self.waiting_edges.add((starts, end_key))
        return self

    def add_conditional_edges(
        self,
        source: str,
        path: Callable[..., Any],
        path_map: dict[Hashable, str] | list[str] | None = None,
    ) -> StateGraph[StateT, ContextT, InputT, OutputT]:
        """Route from ``source`` to whatever ``path(state)`` returns.

        ``path`` returns a node name, a list of names, ``Send`` (s) or ``END``;
        ``path_map`` maps its return values to node names (a list maps names to
        themselves). Without a map, a ``Literal[...]`` return annotation tells the
        drawing which nodes can be reached.
        """
        name = getattr(path, "__name__", None) or "condition"
        if name == "<lambda>":
            name = "condition"
        branches = self.branches.setdefault(source, {})
        base, i = name, 1
        while name in branches:
            i += 1
            name = f"{base}_{i}"
        mapping: dict[Hashable, str] | None
        if isinstance(path_map, dict):
            mapping = dict(path_map)
        elif isinstance(path_map, list):
            mapping = {p: p for p in path_map}
        else:
            mapping = None
        ends = list(mapping.values()) if mapping else _literal_targets(path)
        branches[name] = BranchSpec(source, name, path, mapping, ends)
        return self

    def add_sequence(
        self, nodes: Sequence[Callable[..., Any] | tuple[str, Callable[..., Any]]]
    ) -> StateGraph[StateT, ContextT, InputT, OutputT]:
        """Add nodes and chain them with edges in the given order."""
        if not nodes:
            raise ValueError("add_sequence() needs at least one node.")
        previous: str | None = None
        for item in nodes:
            if isinstance(item, tuple):
                name, action = item
                self.add_node(name, action)
            else:
                self.add_node(item)
                name = list(self.nodes)[-1]
            if previous is not None:
                self.add_edge(previous, name)
            previous = name
        return self

    def set_entry_point(self, key: str) -> StateGraph[StateT, ContextT, InputT, OutputT]:
        """Same as ``add_edge(START, key)``."""
        return self.add_edge(START, key)

    def set_conditional_entry_point(
        self,
        path: Callable[..., Any],
        path_map: dict[Hashable, str] | list[str] | None = None,
    ) -> StateGraph[StateT, ContextT, InputT, OutputT]:
        """Same as ``add_conditional_edges(START, path, path_map)``."""
        return self.add_conditional_edges(START, path, path_map)

    def set_finish_point(self, key: str) -> StateGraph[StateT, ContextT, InputT, OutputT]:
        """Same as ``add_edge(key, END)``."""
        return self.add_edge(key, END)

    # ------------------------------------------------------------------ compile
    def validate(
        self, interrupt: Sequence[str] | None = None
    ) -> StateGraph[StateT, ContextT, InputT, OutputT]:
        """Check the structure; every error names the offending element."""
        all_sources = {s for s, _ in self.edges} | {
            s for starts, _ in self.waiting_edges for s in starts
        }
        all_sources |= set(self.branches)
        for source in sorted(all_sources):
            if source != START and source not in self.nodes:
                raise ValueError(
                    f"Found edge starting at unknown node '{source}'. Add it with add_node() "
                    "first, or fix the name."
                )
        if START not in all_sources:
            raise ValueError(
                "Graph must have an entrypoint: add at least one edge from START to another "
                "node (add_edge(START, 'first_node'))."
            )
        targets = {e for _, e in self.edges} | {e for _, e in self.waiting_edges}
        for target in sorted(targets):
            if target != END and target not in self.nodes:
                raise ValueError(
                    f"Found edge ending at unknown node '{target}'. Add it with add_node() first, "
                    "or fix the name."
                )
        for source, branches in self.branches.items():
            for branch in branches.values():
                for end in branch.ends or ():
                    if end != END and end not in self.nodes:
                        raise ValueError(
                            f"Conditional edge '{branch.name}' from '{source}' can route to "
                            f"unknown node '{end}'."
                        )
        for spec in self.nodes.values():
            for end in spec.destinations or ():
                if end != END and end not in self.nodes:
                    raise ValueError(
                        f"Node '{spec.name}' declares destination '{end}', which is not a node."
                    )
        for name in interrupt or ():
            if name not in self.nodes:
                raise ValueError(
                    f"Interrupt node '{name}' not found. Nodes: {', '.join(self.nodes)}."
                )
        return self

    def compile(
        self,
        checkpointer: Any = None,
        *,
        cache: Any = None,
        store: Any = None,
        interrupt_before: Any = None,
        interrupt_after: Any = None,
        debug: bool = False,
        name: str | None = None,
        strict: bool = False,
    ) -> CompiledStateGraph:
        """Validate the graph and compile it into a runnable :class:`CompiledStateGraph`.

        ``strict=True`` turns unknown update keys and interrupt/resume mismatches into
        errors instead of warnings.
        """
        from stategraph.graph._compile import compile_graph

        interrupt_before = interrupt_before or []
        interrupt_after = interrupt_after or []
        names = [
            *([] if interrupt_before == "*" else interrupt_before),
            *([] if interrupt_after == "*" else interrupt_after),
        ]
        self.validate(interrupt=names)
        compiled = compile_graph(
            self,
            checkpointer=checkpointer,
            cache=cache,
            store=store,
            interrupt_before=interrupt_before,
            interrupt_after=interrupt_after,
            debug=debug,
            name=name or "LangGraph",
            strict=strict,
        )
        self.compiled = True
        return compiled


def _first_param_schema(action: Any) -> Any:
    """The state type named by the annotation of ``action``'s first parameter, if any."""
    func = action
    if not (inspect.isfunction(func) or inspect.ismethod(func)):
        func = getattr(action, "__call__", None)  # noqa: B004
        if func is None:
            return None
    try:
        hints = typing.get_type_hints(func)
        params = list(inspect.signature(func).parameters)
    except Exception:
        return None
    if not params:
        return None
    hint = hints.get(params[0])
    if hint is None or not isinstance(hint, type):
        return None
    import dataclasses

    from stategraph._fields import is_pydantic_class

    if (
        dataclasses.is_dataclass(hint)
        or is_pydantic_class(hint)
        or (hasattr(hint, "__annotations__") and hasattr(hint, "__total__"))
    ):
        return hint
    return None


def __getattr__(name: str) -> Any:
    if name == "CompiledStateGraph":
        from stategraph.graph._compile import CompiledStateGraph

        return CompiledStateGraph
    raise AttributeError(name)


if typing.TYPE_CHECKING:
    from stategraph.graph._compile import CompiledStateGraph
