"""``StateGraph``: the builder of graphs whose nodes communicate through a shared state."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic

from stategraph.channels.last_value import LastValue
from stategraph.constants import (
    DEFAULT_ERROR_HANDLER,
    END,
    ERROR_HANDLER_PREFIX,
    NS_END,
    NS_SEP,
    RESERVED,
    START,
)
from stategraph.graph._schema import SchemaInfo, schema_info
from stategraph.types import CachePolicy, RetryPolicy, TimeoutPolicy, TracePolicy, coerce_timeout
from stategraph.warnings import (
    LangGraphDeprecatedSinceV05,
    LangGraphDeprecatedSinceV10,
    renamed_argument,
    warn_deprecated,
)

__all__ = ["StateGraph", "CompiledStateGraph", "NodeSpec", "NodeAction", "BranchSpec"]

from stategraph.typing import ContextT, InputT, OutputT, StateT


@dataclass
class NodeSpec:
    """Everything ``add_node`` recorded about a node."""

    name: str
    func: Any
    input_schema: Any
    retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None
    cache_policy: CachePolicy[Any] | None = None
    timeout: TimeoutPolicy | None = None
    defer: bool = False
    destinations: list[str] | None = None
    destination_labels: dict[str, str] | None = None
    metadata: dict[str, Any] | None = None
    is_subgraph: bool = False
    error_handler: Any = None
    trace_policy: TracePolicy | None = None

    @property
    def runnable(self) -> NodeAction:
        """The node's action as LangGraph's builder exposes it (``.func`` is what was
        given to ``add_node``)."""
        return NodeAction(self.name, self.func)


@dataclass(frozen=True)
class NodeAction:
    """What ``NodeSpec.runnable`` returns: the node's name and its function, callable
    object or compiled graph (``func``)."""

    name: str
    func: Any


@dataclass(slots=True, eq=False)
class BranchSpec:
    """A conditional edge: its path function, optional ``path_map`` and known targets."""

    source: str
    name: str
    path: Callable[..., Any]
    path_map: dict[Hashable, str] | None
    ends: list[str] | None
    input_schema: Any = None
    """The schema the routing function's first parameter is annotated with: it reads
    only those keys (``None``: the whole state)."""


def _literal_targets(func: Any, *, in_command: bool = False) -> list[str] | None:
    """Targets named by a ``Literal[...]`` return annotation of a routing function, or
    (``in_command=True``, for nodes) by a ``Command[Literal[...]]`` one."""
    target = func if inspect.isfunction(func) or inspect.ismethod(func) else type(func).__call__
    try:
        hints = typing.get_type_hints(target)
    except Exception:
        return None
    ret = hints.get("return")
    if ret is None:
        return None

    from stategraph.types import Command

    def collect(tp: Any, inside: bool) -> list[str]:
        origin = typing.get_origin(tp)
        if origin is typing.Literal:
            return [a for a in typing.get_args(tp) if isinstance(a, str)] if inside else []
        inside = inside or origin is Command
        out: list[str] = []
        for arg in typing.get_args(tp):
            out.extend(collect(arg, inside))
        return out

    found = collect(ret, not in_command)
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
        if "input" in kwargs:
            warn_deprecated(LangGraphDeprecatedSinceV05, renamed_argument("input", "input_schema"))
            given = kwargs.pop("input")
            input_schema = input_schema if input_schema is not None else given
        if "output" in kwargs:
            warn_deprecated(
                LangGraphDeprecatedSinceV05, renamed_argument("output", "output_schema")
            )
            given = kwargs.pop("output")
            output_schema = output_schema if output_schema is not None else given
        if "config_schema" in kwargs:
            warn_deprecated(
                LangGraphDeprecatedSinceV10, renamed_argument("config_schema", "context_schema")
            )
            given = kwargs.pop("config_schema")
            context_schema = context_schema if context_schema is not None else given
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
        self.node_defaults: dict[str, Any] = {}
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
                # a plain key in an input/output schema may stand for a key with a
                # reducer in the state: the first declaration's channel is used
                if (
                    existing is not None
                    and type(existing) is not type(ch)
                    and not isinstance(ch, LastValue)
                ):
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
        cache_policy: CachePolicy[Any] | None = None,
        timeout: TimeoutPolicy | float | None = None,
        destinations: dict[str, str] | tuple[str, ...] | None = None,
        error_handler: Callable[..., Any] | None = None,
        trace_policy: TracePolicy | None = None,
        **kwargs: Any,
    ) -> StateGraph[StateT, ContextT, InputT, OutputT]:
        """Add a node: ``add_node("name", fn)`` or ``add_node(fn)`` (named after ``fn``).

        ``fn`` may be sync or async, a callable object, a ``functools.partial`` or a
        compiled graph (a subgraph). ``input_schema`` (or the annotation of ``fn``'s
        first parameter) limits what the node reads. ``error_handler`` runs when the
        node fails for good (after its retries): it receives the state and a
        :class:`~stategraph.errors.NodeError` (parameter ``error``) and returns an
        update or a ``Command``, as a node does (see ``docs/error-handling.md``). ``trace_policy`` transforms what
        tracers record as the node's input and output (see :class:`TracePolicy`).
        """
        if "input" in kwargs:
            warn_deprecated(LangGraphDeprecatedSinceV05, renamed_argument("input", "input_schema"))
            given = kwargs.pop("input")
            input_schema = input_schema if input_schema is not None else given
        if "retry" in kwargs:
            warn_deprecated(LangGraphDeprecatedSinceV05, renamed_argument("retry", "retry_policy"))
            given = kwargs.pop("retry")
            retry_policy = retry_policy if retry_policy is not None else given
        if kwargs:
            raise TypeError(f"add_node() got unexpected arguments: {', '.join(kwargs)}")
        if trace_policy is not None and not isinstance(trace_policy, TracePolicy):
            raise TypeError(
                f"add_node(trace_policy=...) takes a TracePolicy, got "
                f"{type(trace_policy).__name__}; e.g. TracePolicy(process_inputs=scrub)."
            )
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
        from stategraph.pregel.main import Pregel

        if not (callable(action) or isinstance(action, Pregel) or hasattr(action, "invoke")):
            raise TypeError(
                f"add_node('{node}', ...) takes a function, an async function, a callable "
                f"object or a compiled graph; got {type(action).__name__} {action!r:.100}."
            )
        self._check_name(node)

        is_subgraph = isinstance(action, Pregel)
        if not is_subgraph:
            _check_config_annotation(action)
        if input_schema is None and not is_subgraph:
            input_schema = _first_param_schema(action)
        if input_schema is not None:
            self._add_schema(input_schema)
        timeout = coerce_timeout(timeout, f"Node '{node}'")
        if error_handler is not None:
            _check_handler(error_handler, f"error_handler of node '{node}'")
        ends = None
        labels: dict[str, str] = {}
        if destinations is not None:
            ends = list(destinations.keys() if isinstance(destinations, dict) else destinations)
            if isinstance(destinations, dict):
                labels = dict(destinations)
        elif not is_subgraph:
            ends = _literal_targets(action, in_command=True)
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
            error_handler=error_handler,
            trace_policy=trace_policy,
        )
        return self

    def set_node_defaults(
        self,
        *,
        retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None,
        cache_policy: CachePolicy | None = None,
        error_handler: Callable[..., Any] | None = None,
        timeout: TimeoutPolicy | float | Any | None = None,
    ) -> StateGraph[StateT, ContextT, InputT, OutputT]:
        """Policies for every node that does not set its own in ``add_node``.

        Applied at ``compile()``, so the order relative to ``add_node`` does not matter;
        not inherited by subgraphs. ``retry_policy`` and ``timeout`` also apply to
        error-handler nodes; ``cache_policy`` and ``error_handler`` only to regular
        nodes (a handler never handles its own failure). Returns the builder.
        """
        if error_handler is not None:
            _check_handler(error_handler, "set_node_defaults(error_handler=...)")
        values = {
            "retry_policy": retry_policy,
            "cache_policy": cache_policy,
            "error_handler": error_handler,
            "timeout": coerce_timeout(timeout, "set_node_defaults()"),
        }
        self.node_defaults.update({k: v for k, v in values.items() if v is not None})
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
            # waiting for all of them before ending is the same as ending after each
            for s in starts:
                self.edges.add((s, END))
            return self
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
        schema = _first_param_schema(path)
        if schema is not None and schema is not self.state_schema:
            self._add_schema(schema)
        else:
            schema = None
        branches[name] = BranchSpec(source, name, path, mapping, ends, schema)
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
        handlers = {f"{ERROR_HANDLER_PREFIX}{n}" for n, s in self.nodes.items() if s.error_handler}
        if self.node_defaults.get("error_handler") is not None:
            handlers.add(DEFAULT_ERROR_HANDLER)
        for name in interrupt or ():
            if name not in self.nodes and name not in handlers:
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
        transformers: Sequence[Any] | None = None,
        executor: Any = None,
    ) -> CompiledStateGraph[StateT, ContextT, InputT, OutputT]:
        """Validate the graph and compile it into a runnable :class:`CompiledStateGraph`.

        ``strict=True`` turns unknown update keys and interrupt/resume mismatches into
        errors instead of warnings. ``transformers`` are ``StreamTransformer`` classes
        (or factories) every ``stream_events(version="v3")`` run of the graph registers.
        ``executor`` is where the nodes of the graph's tasks run (a
        :class:`~stategraph.executors.TaskExecutor`: threads, Ray or Dask; see
        ``docs/scale-out.md``); ``config["executor"]`` overrides it per run.
        """
        if executor is not None:
            from stategraph.executors.base import check_executor

            check_executor(executor, "compile(executor=...)")
        from stategraph.graph._compile import compile_graph
        from stategraph.observe._stream_v3 import normalize_transformer_factories

        factories = normalize_transformer_factories(transformers)

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
        compiled.stream_transformers = tuple(factories)
        if executor is not None:
            compiled.executor = executor
        self.compiled = True
        return compiled


def _check_handler(handler: Any, what: str) -> None:
    from stategraph.pregel.main import Pregel

    if isinstance(handler, Pregel) or not callable(handler):
        raise TypeError(
            f"{what} must be a function (sync or async) taking the state and the error, "
            f"got {handler!r}."
        )


def _check_config_annotation(action: Any) -> None:
    """Warn when a node's ``config`` parameter is annotated with something other than
    ``RunnableConfig`` (or ``RunnableConfig | None``), as LangGraph does."""
    func: Any = action
    if not (inspect.isfunction(action) or inspect.ismethod(action)):
        func = getattr(action, "__call__", None)  # noqa: B004
    if func is None:
        return
    try:
        param = inspect.signature(func).parameters.get("config")
    except (TypeError, ValueError):
        return
    if param is None or param.annotation is inspect.Parameter.empty:
        return
    ann = param.annotation
    text = ann if isinstance(ann, str) else getattr(ann, "__name__", None) or repr(ann)
    if "RunnableConfig" in str(text) or "RunnableConfig" in repr(ann):
        return
    import warnings

    warnings.warn(
        f"The 'config' parameter should be typed as 'RunnableConfig' or 'RunnableConfig | "
        f"None', not '{text}'. The node still receives the run's config; annotate it with "
        "stategraph.config.RunnableConfig so that type checkers know its keys.",
        UserWarning,
        stacklevel=3,
    )


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


if TYPE_CHECKING:
    from stategraph.graph._compile import CompiledStateGraph
