"""Compilation of a ``StateGraph`` builder into a runnable ``CompiledStateGraph``."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from stategraph._fields import is_pydantic_class
from stategraph._notes import add_note
from stategraph.channels.ephemeral_value import EphemeralValue
from stategraph.channels.last_value import LastValueAfterFinish
from stategraph.channels.named_barrier_value import (
    NamedBarrierValue,
    NamedBarrierValueAfterFinish,
)
from stategraph.constants import END, START
from stategraph.graph._schema import make_mapper
from stategraph.graph._write import (
    BranchWriter,
    EdgeWriter,
    StateWriter,
    branch_channel,
    goto_writes,
)
from stategraph.pregel.call import make_call
from stategraph.pregel.io import NO_UPDATE
from stategraph.pregel.main import Pregel
from stategraph.pregel.node import PregelNode
from stategraph.types import Command

if TYPE_CHECKING:
    from stategraph.graph.state import StateGraph
    from stategraph.pregel.task import Task

__all__ = ["CompiledStateGraph", "compile_graph"]


class CompiledStateGraph(Pregel):
    """A compiled ``StateGraph``: a :class:`~stategraph.pregel.Pregel` with state semantics."""

    builder: StateGraph[Any, Any, Any, Any]
    state_keys: frozenset[str]

    def task_update(self, task: Task) -> Any:
        """The state update a task made (what ``stream_mode="updates"`` shows)."""
        if task.node.metadata.get("__hidden__"):
            return NO_UPDATE
        keys = self.state_keys
        pairs = [(chan, val) for chan, val in task.writes if chan in keys]
        if not pairs:
            return None
        out = dict(pairs)
        if len(out) < len(pairs):
            # a key written twice (a list of updates): show each write separately
            return [{chan: val} for chan, val in pairs]
        return out

    def command_update_writes(self, cmd: Command[Any]) -> list[tuple[str, Any]]:
        """Writes of ``Command(update=...)`` given as input: state keys only."""
        writer = StateWriter("__input__", set(self.state_keys), self.nodes, strict=self.strict)
        return writer.writes_for(Command(update=cmd.update))

    def goto_writes(self, goto: Any) -> list[tuple[str, Any]]:
        """Writes of ``Command(goto=...)`` given as input."""
        return goto_writes(goto, self.nodes, "__input__")

    @property
    def input_schema(self) -> Any:
        """The graph's input schema."""
        return self.builder.input_schema

    @property
    def output_schema(self) -> Any:
        """The graph's output schema."""
        return self.builder.output_schema

    def get_input_jsonschema(self) -> dict[str, Any]:
        """JSON schema of the input (via pydantic)."""
        from pydantic import TypeAdapter

        return TypeAdapter(self.builder.input_schema).json_schema()

    def get_output_jsonschema(self) -> dict[str, Any]:
        """JSON schema of the output (via pydantic)."""
        from pydantic import TypeAdapter

        return TypeAdapter(self.builder.output_schema).json_schema()

    def get_graph(
        self, config: Mapping[str, Any] | None = None, *, xray: int | bool = False
    ) -> Any:
        """A drawable view (``draw_mermaid()``, ``draw_ascii()``) of the builder's structure."""
        from stategraph.graph._draw import draw_state_graph

        return draw_state_graph(self.builder)


class _InputWriter:
    """Writes the graph input to the state: validated, defaults applied, keys filtered."""

    __slots__ = ("kind", "schema", "writer")

    def __init__(self, schema: Any, writer: StateWriter) -> None:
        self.schema = schema
        self.kind = (
            "pydantic"
            if is_pydantic_class(schema)
            else "dataclass"
            if dataclasses.is_dataclass(schema)
            else "dict"
        )
        self.writer = writer

    def coerce(self, value: Any) -> Any:
        """Validate the input against the schema; keep only the fields it sets.

        As in LangGraph, fields left to their defaults are not written to the state
        (nodes still see the defaults, since they receive schema instances).
        """
        if value is None or isinstance(value, Command):
            return value
        if self.kind == "pydantic":
            if isinstance(value, self.schema):
                model = value
            else:
                try:
                    model = self.schema.model_validate(value)
                except Exception as exc:
                    add_note(exc, f"While validating the graph input as {self.schema.__name__}.")
                    raise
            return {
                k: getattr(model, k)
                for k in type(model).model_fields
                if k in model.model_fields_set
            }
        if self.kind == "dataclass":
            if dataclasses.is_dataclass(value) and not isinstance(value, type):
                return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
            if isinstance(value, Mapping):
                names = {f.name for f in dataclasses.fields(self.schema)}
                try:
                    self.schema(**{k: v for k, v in value.items() if k in names})
                except TypeError as exc:
                    raise TypeError(
                        f"Invalid graph input for {self.schema.__name__}: {exc}. Provide the "
                        "fields that have no default."
                    ) from exc
                return dict(value)
        return value

    def __call__(self, task: Task, output: Any) -> None:
        task.writes.extend(self.writer.writes_for(self.coerce(output)))


def _identity(value: Any) -> Any:
    return value


def _referenced_graphs(func: Any) -> list[Pregel]:
    """Compiled graphs a node function calls (found in its closure and globals).

    A graph invoked inside a node runs as that node's subgraph; knowing it lets
    ``get_subgraphs()`` and ``get_state(subgraphs=True)`` show it.
    """
    import functools
    import inspect

    found: list[Pregel] = []

    def add(value: Any) -> None:
        if isinstance(value, Pregel) and all(value is not g for g in found):
            found.append(value)

    while isinstance(func, functools.partial):
        for value in (*func.args, *func.keywords.values()):
            add(value)
        func = func.func
    if inspect.ismethod(func):
        add(func.__self__)
        func = func.__func__
    elif not inspect.isfunction(func):
        for value in vars(func).values() if hasattr(func, "__dict__") else ():
            add(value)
        func = getattr(type(func), "__call__", None)  # noqa: B004
    code = getattr(func, "__code__", None)
    if code is None:
        return found
    for cell in getattr(func, "__closure__", None) or ():
        try:
            add(cell.cell_contents)
        except ValueError:
            continue
    scope = getattr(func, "__globals__", {})
    for name in code.co_names:
        add(scope.get(name))
    return found


def _schema_keys(
    builder: StateGraph[Any, Any, Any, Any], schema: Any
) -> tuple[list[str], dict[str, Any]]:
    info = builder.schemas[schema]
    return list(info.channels), dict(info.managed)


def compile_graph(
    builder: StateGraph[Any, Any, Any, Any],
    *,
    checkpointer: Any,
    cache: Any,
    store: Any,
    interrupt_before: Any,
    interrupt_after: Any,
    debug: bool,
    name: str,
    strict: bool,
) -> CompiledStateGraph:
    """Build the channels and nodes of a compiled graph from ``builder``."""
    channels: dict[str, Any] = {k: ch.copy() for k, ch in builder.channels.items()}
    state_keys = frozenset(channels)
    managed_all = builder.managed
    specs = dict(builder.nodes)
    channels[START] = EphemeralValue(Any, key=START)
    nodes: dict[str, PregelNode] = {}
    node_names: dict[str, Any] = {START: None, **{n: None for n in specs}}

    # triggers
    triggers: dict[str, list[str]] = {n: [] for n in specs}
    for n, spec in specs.items():
        chan = branch_channel(n)
        channels[chan] = (
            LastValueAfterFinish(Any, key=chan)
            if spec.defer
            else EphemeralValue(Any, guard=False, key=chan)
        )
        triggers[n].append(chan)
    edge_writes: dict[str, list[tuple[str, Any]]] = {START: [], **{n: [] for n in specs}}
    for start, end in sorted(builder.edges):
        if end != END:
            edge_writes[start].append((branch_channel(end), None))
    for starts, end in sorted(builder.waiting_edges):
        chan = f"join:{'+'.join(starts)}:{end}"
        barrier_cls = NamedBarrierValueAfterFinish if specs[end].defer else NamedBarrierValue
        channels[chan] = barrier_cls(str, set(starts), key=chan)
        triggers[end].append(chan)
        for s in starts:
            edge_writes[s].append((chan, s))

    # branches
    state_schema = builder.state_schema
    state_reads = list(builder.schemas[state_schema].channels)
    state_mapper = make_mapper(state_schema, "<conditional edge>")
    branch_writers: dict[str, list[BranchWriter]] = {}
    for source, branches in builder.branches.items():
        for bname, branch in branches.items():
            call = make_call(branch.path, f"{source}:{bname}")
            branch_writers.setdefault(source, []).append(
                BranchWriter(
                    source,
                    bname,
                    call,
                    branch.path_map,
                    node_names,
                    state_reads,
                    state_mapper,
                    builder.schemas[state_schema].managed,
                )
            )

    # START node
    input_keys, _ = _schema_keys(builder, builder.input_schema)
    start_writer = StateWriter(START, set(input_keys), node_names, strict=False, warn_unknown=False)
    nodes[START] = PregelNode(
        channels=START,
        triggers=[START],
        proc=make_call(_identity, START),
        writers=[
            _InputWriter(builder.input_schema, start_writer),
            EdgeWriter(edge_writes[START]),
            *branch_writers.get(START, []),
        ],
        metadata={"__hidden__": True},
        tags=["langsmith:hidden"],
        name=START,
    )

    for n, spec in specs.items():
        schema = spec.input_schema
        reads, managed = _schema_keys(builder, schema)
        managed = {k: v for k, v in managed.items() if k in managed_all}
        if spec.is_subgraph:
            proc: Any = spec.func
            mapper = None
            reads = list(state_reads)
        else:
            proc = make_call(spec.func, n)
            mapper = make_mapper(schema, n)
        subgraphs = [spec.func] if spec.is_subgraph else _referenced_graphs(spec.func)
        writer = StateWriter(
            n, set(state_keys), node_names, strict=strict, warn_unknown=not spec.is_subgraph
        )
        nodes[n] = PregelNode(
            channels=reads,
            triggers=triggers[n],
            proc=proc,
            writers=[writer, EdgeWriter(edge_writes[n]), *branch_writers.get(n, [])],
            mapper=mapper,
            retry_policy=spec.retry_policy,
            cache_policy=spec.cache_policy,
            timeout=spec.timeout,
            metadata=dict(spec.metadata or {}),
            managed=managed,
            defer=bool(spec.defer),
            subgraphs=subgraphs,
            name=n,
        )
        if (
            spec.timeout is not None
            and not getattr(proc, "is_async", False)
            and not spec.is_subgraph
        ):
            raise ValueError(
                f"Node '{n}' has a timeout but is synchronous; timeouts are supported for async "
                "nodes only (a running thread cannot be stopped safely)."
            )

    output_keys, _ = _schema_keys(builder, builder.output_schema)
    if checkpointer not in (None, True, False):
        _allow_schema_types(checkpointer, builder)
    if cache is not None:
        _allow_schema_types(cache, builder)
    graph = CompiledStateGraph(
        nodes=nodes,
        channels=channels,
        input_channels=START,
        output_channels=output_keys,
        stream_channels=sorted(state_keys, key=list(channels).index),
        stream_mode="updates",
        interrupt_before_nodes=interrupt_before,
        interrupt_after_nodes=interrupt_after,
        checkpointer=checkpointer,
        store=store,
        cache=cache,
        context_schema=builder.context_schema,
        name=name,
        debug=debug,
        strict=strict,
    )
    graph.builder = builder
    graph.state_keys = state_keys
    return graph


def _allow_schema_types(holder: Any, builder: StateGraph[Any, Any, Any, Any]) -> None:
    serde = getattr(holder, "serde", None)
    allow = getattr(serde, "allow", None)
    if allow is None:
        return
    from stategraph.checkpoint.serde.jsonplus import collect_schema_types

    schemas = [builder.state_schema, builder.input_schema, builder.output_schema]
    if builder.context_schema is not None:
        schemas.append(builder.context_schema)
    schemas.extend(spec.input_schema for spec in builder.nodes.values())
    allow(*collect_schema_types(*schemas))
