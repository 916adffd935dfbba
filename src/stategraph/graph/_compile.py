"""Compilation of a ``StateGraph`` builder into a runnable ``CompiledStateGraph``."""

from __future__ import annotations

import copy
import dataclasses
import types
import typing
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic

from typing_extensions import is_typeddict

from stategraph._fields import is_pydantic_class, object_update_items
from stategraph._notes import add_note
from stategraph.channels.binop import BinaryOperatorAggregate
from stategraph.channels.ephemeral_value import EphemeralValue
from stategraph.channels.last_value import LastValueAfterFinish
from stategraph.channels.named_barrier_value import (
    NamedBarrierValue,
    NamedBarrierValueAfterFinish,
)
from stategraph.constants import DEFAULT_ERROR_HANDLER, END, ERROR_HANDLER_PREFIX, START
from stategraph.errors import (
    ErrorCode,
    InvalidUpdateError,
    create_error_message,
    sync_timeout_error,
)
from stategraph.graph._input_check import check_input_writes
from stategraph.graph._schema import ROOT, make_mapper
from stategraph.graph._write import (
    BranchWriter,
    EdgeWriter,
    StateWriter,
    branch_channel,
    goto_writes,
)
from stategraph.pregel._call import make_call
from stategraph.pregel._io import NO_UPDATE
from stategraph.pregel._subgraph_refs import referenced_graphs
from stategraph.pregel.main import Pregel
from stategraph.pregel.node import PregelNode
from stategraph.types import Command
from stategraph.typing import ContextT, InputT, OutputT, StateT

if TYPE_CHECKING:
    from stategraph.graph.state import StateGraph
    from stategraph.pregel._task import Task

__all__ = ["CompiledStateGraph", "compile_graph"]


class CompiledStateGraph(
    Pregel[StateT, ContextT, InputT, OutputT], Generic[StateT, ContextT, InputT, OutputT]
):
    """A compiled ``StateGraph``: a :class:`~stategraph.pregel.Pregel` with state semantics."""

    __drawing_kind__ = ("langgraph", "graph", "state", "CompiledStateGraph")

    builder: StateGraph[Any, Any, Any, Any]
    state_keys: frozenset[str]
    root_state: bool = False
    """Whether the state is one bare value (channel ``__root__``), not keys."""

    def task_update(self, task: Task, keys: str | Sequence[str] | None = None) -> Any:
        """The state update a task made (what ``stream_mode="updates"`` shows).

        ``keys`` (a run's ``output_keys=``) limits it to those state keys; one key (a
        str) gives the bare value written to it, ``None`` if the task wrote none.
        """
        if task.node.metadata.get("__hidden__"):
            return NO_UPDATE
        single = ROOT if self.root_state else keys if isinstance(keys, str) else None
        if single is not None:
            values = [val for chan, val in task.writes if chan == single]
            if not values:
                return None
            # several writes (a list of Commands): each value, in order
            return values[0] if len(values) == 1 else values
        shown = self.state_keys if keys is None else self.state_keys.intersection(keys)
        pairs = [(chan, val) for chan, val in task.writes if chan in shown]
        if not pairs:
            return None
        out = dict(pairs)
        if len(out) < len(pairs):
            # a key written twice (a list of updates): show each write separately
            return [{chan: val} for chan, val in pairs]
        return out

    @property
    def _output_class(self) -> Any:
        """The user's output schema: ``version="v2"`` builds output values as it.

        (Not ``output_schema``, which may be a generated model: a ``TypedDict``'s
        values stay dicts.) A bare-value state (``root_state``) is left as it is.
        """
        return dict if getattr(self, "root_state", False) else self.builder.output_schema

    @property
    def _state_class(self) -> Any:
        """The user's state schema: ``version="v2"`` builds checkpoint values as it."""
        return dict if getattr(self, "root_state", False) else self.builder.state_schema

    def command_update_writes(self, cmd: Command[Any]) -> list[tuple[str, Any]]:
        """Writes of ``Command(update=...)`` given as input: state keys only."""
        writer = StateWriter(
            "__input__", set(self.state_keys), self.nodes, strict=self.strict, root=self.root_state
        )
        return writer.writes_for(Command(update=cmd.update))

    def check_input(self, value: Any, channels: Mapping[str, Any]) -> None:
        """Fold the input through the reducers on copies: raise before anything is saved.

        See :mod:`stategraph.graph._input_check`.
        """
        start = self.nodes.get(START)
        writer = (
            next((w for w in start.writers if isinstance(w, _InputWriter)), None) if start else None
        )
        if writer is None or isinstance(value, Command) or writer.kind == "pydantic":
            # a pydantic input is validated by its model when the input task runs (and
            # validating it here too would run its validators twice)
            return
        check_input_writes(writer.writes_for_input(value), channels)

    def check_state_edit(
        self, writes: list[tuple[str, Any]], channels: Mapping[str, Any], edit: str
    ) -> None:
        """Fold ``update_state`` writes through the reducers on copies, as for an input:
        a value a reducer rejects raises naming the key before anything is saved."""
        check_input_writes(writes, channels, f"{edit} value")

    def goto_writes(self, goto: Any) -> list[tuple[str, Any]]:
        """Writes of ``Command(goto=...)`` given as input."""
        return goto_writes(goto, self.nodes, "__input__")

    def get_input_jsonschema(self, config: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """JSON schema of the input, from the builder's input schema."""
        return state_jsonschema(self.builder, self.builder.input_schema, self.get_name("Input"))

    def get_output_jsonschema(self, config: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """JSON schema of the output, from the builder's output schema."""
        return state_jsonschema(self.builder, self.builder.output_schema, self.get_name("Output"))


def state_jsonschema(builder: StateGraph[Any, Any, Any, Any], schema: Any, name: str) -> Any:
    """The JSON schema of a state schema as LangGraph shows it.

    A pydantic model or a ``TypedDict`` gives its own schema; other schemas (dataclasses,
    bare values) a model called ``name`` with a field per key, typed by the key's
    channel, with the schema's defaults.
    """
    from pydantic import TypeAdapter

    from stategraph._typeddict_compat import pydantic_ready
    from stategraph.pregel._schema import fields_model, root_model

    if is_pydantic_class(schema):
        return schema.model_json_schema()
    if is_typeddict(schema):
        return TypeAdapter(pydantic_ready(schema)).json_schema()
    info = builder.schemas.get(schema)
    channels = builder.channels
    if info is not None and info.kind == "root":
        tp = info.channels[ROOT].UpdateType
        return root_model(name, tp, default=None, passthrough=False).model_json_schema()
    if info is None:
        return root_model(name, schema, default=None, passthrough=False).model_json_schema()
    defaults = _field_defaults(schema)
    fields = {
        key: (ch.UpdateType, defaults.get(key, ...))
        for key, ch in info.channels.items()
        if key in channels
    }
    return fields_model(name, fields).model_json_schema()


def _field_defaults(schema: Any) -> dict[str, Any]:
    """Defaults of a dataclass schema's fields, for its JSON schema.

    A field with no default whose type admits ``None`` is optional (default ``None``);
    a default of ``...`` means required, as in pydantic.
    """
    if not dataclasses.is_dataclass(schema):
        return {}
    try:
        hints = typing.get_type_hints(schema)
    except Exception:
        hints = {}
    out: dict[str, Any] = {}
    for f in dataclasses.fields(schema):
        if f.default is not dataclasses.MISSING:
            if f.default is not Ellipsis:
                out[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            out[f.name] = f.default_factory()
        elif _admits_none(hints.get(f.name)):
            out[f.name] = None
    return out


def _admits_none(tp: Any) -> bool:
    """Whether ``None`` is a value of type ``tp`` (``X | None``, ``Optional[X]``)."""
    if tp is None or tp is type(None):
        return True
    return any(arg is type(None) for arg in typing.get_args(tp)) and typing.get_origin(tp) in (
        typing.Union,
        types.UnionType,
    )


class _InputWriter:
    """Writes the graph input to the state: validated, defaults applied, keys filtered."""

    __slots__ = ("fill", "kind", "schema", "writer")

    def __init__(
        self, schema: Any, writer: StateWriter, fill: Mapping[str, Any] | None = None
    ) -> None:
        self.schema = schema
        # keys whose channel starts with a value (reducer keys: [] for a list): an
        # input may leave them out even if the schema requires them, as the nodes will
        # see the channel's value
        self.fill = dict(fill or {})
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
            filled: set[str] = set()
            if isinstance(value, self.schema):
                model = value
            else:
                if isinstance(value, Mapping) and self.fill:
                    value, filled = self._filled(value, self.schema.model_fields)
                try:
                    model = self.schema.model_validate(value)
                except Exception as exc:
                    add_note(exc, f"While validating the graph input as {self.schema.__name__}.")
                    raise
            if isinstance(value, Mapping):
                # as in LangGraph, the input's own values are written (a nested model
                # given as a dict stays a dict in the state); validation only checks them
                return {
                    k: value[k]
                    for k in type(model).model_fields
                    if k in value and k in model.model_fields_set and k not in filled
                }
            return {
                k: getattr(model, k)
                for k in type(model).model_fields
                if k in model.model_fields_set and k not in filled
            }
        if self.kind == "dataclass":
            if dataclasses.is_dataclass(value) and not isinstance(value, type):
                return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
            if isinstance(value, Mapping):
                names = {f.name for f in dataclasses.fields(self.schema)}
                checked, _ = self._filled(value, names)
                try:
                    self.schema(**{k: v for k, v in checked.items() if k in names})
                except TypeError as exc:
                    raise TypeError(
                        f"Invalid graph input for {self.schema.__name__}: {exc}. Provide the "
                        "fields that have no default."
                    ) from exc
                return dict(value)
        return value

    def _filled(self, value: Mapping[str, Any], fields: Any) -> tuple[dict[str, Any], set[str]]:
        """``value`` with the missing reducer keys set to their channel's start value."""
        missing = {k for k in self.fill if k in fields and k not in value}
        if not missing:
            return dict(value), set()
        return {**{k: copy.copy(self.fill[k]) for k in missing}, **value}, missing

    def __call__(self, task: Task, output: Any) -> None:
        task.writes.extend(self.writes_for_input(output))

    def writes_for_input(self, output: Any) -> list[tuple[str, Any]]:
        """The writes of graph input ``output``; a value that is not an input (a str
        for a dict state...) raises :class:`InvalidUpdateError` naming the input."""
        value = self.coerce(output)
        if (
            self.kind == "dict"
            and not self.writer.root
            and not isinstance(value, (Mapping, Command, list, tuple))
            and value is not None
            and object_update_items(value) is None
        ):
            raise InvalidUpdateError(
                create_error_message(
                    message=(
                        f"Expected dict, got {value!r:.200}: the graph input must be a dict "
                        "of state keys (or a Command). Pass e.g. graph.invoke({'key': ...})."
                    ),
                    error_code=ErrorCode.INVALID_GRAPH_NODE_RETURN_VALUE,
                )
            )
        return self.writer.writes_for(value)


def _identity(value: Any) -> Any:
    return value


def _start_values(channels: Mapping[str, Any]) -> dict[str, Any]:
    """The values reducer channels start with (``[]`` for a list key, ...)."""
    out: dict[str, Any] = {}
    for key, ch in channels.items():
        if isinstance(ch, BinaryOperatorAggregate) and ch.is_available():
            out[key] = ch.get()
    return out


def _schema_keys(
    builder: StateGraph[Any, Any, Any, Any], schema: Any
) -> tuple[Any, dict[str, Any]]:
    """The channels a schema reads (the root channel's name alone for a bare-value
    state, so the value itself is read) and its managed keys."""
    info = builder.schemas[schema]
    if info.kind == "root":
        return ROOT, {}
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
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Build the channels and nodes of a compiled graph from ``builder``."""
    channels: dict[str, Any] = {k: ch.copy() for k, ch in builder.channels.items()}
    state_keys = frozenset(channels)
    managed_all = builder.managed
    specs = dict(builder.nodes)
    channels[START] = EphemeralValue(builder.input_schema, key=START)
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
    state_reads, _ = _schema_keys(builder, state_schema)
    root = builder.schemas[state_schema].kind == "root"
    state_mapper = make_mapper(state_schema, "<conditional edge>")
    branch_writers: dict[str, list[BranchWriter]] = {}
    for source, branches in builder.branches.items():
        for bname, branch in branches.items():
            call = make_call(branch.path, f"{source}:{bname}")
            reads, mapper, managed = (
                state_reads,
                state_mapper,
                builder.schemas[state_schema].managed,
            )
            if branch.input_schema is not None:
                # a routing function annotated with its own schema reads only its keys
                reads, managed = _schema_keys(builder, branch.input_schema)
                mapper = make_mapper(branch.input_schema, f"{source}:{bname}")
            branch_writers.setdefault(source, []).append(
                BranchWriter(
                    source,
                    bname,
                    call,
                    branch.path_map,
                    node_names,
                    reads,
                    mapper,
                    managed,
                    ends=branch.ends,
                )
            )

    # where each routing function sits in its node's sequence (LangGraph's trace tags):
    # the node's function, its state writer, its edge writer (if it has static edges)
    for source, writers in branch_writers.items():
        first = (1 if source == START else 2) + (1 if edge_writes[source] else 0)
        for k, branch_writer in enumerate(writers):
            branch_writer.seq_step = first + k + 1

    # START node
    input_keys, _ = _schema_keys(builder, builder.input_schema)
    start_keys = {input_keys} if isinstance(input_keys, str) else set(input_keys)
    start_writer = StateWriter(
        START, start_keys, node_names, strict=False, warn_unknown=False, root=root
    )
    nodes[START] = PregelNode(
        channels=START,
        triggers=[START],
        proc=make_call(_identity, START),
        writers=[
            _InputWriter(builder.input_schema, start_writer, _start_values(channels)),
            EdgeWriter(edge_writes[START]),
            *branch_writers.get(START, []),
        ],
        metadata={"__hidden__": True},
        tags=["langsmith:hidden"],
        name=START,
    )

    defaults = builder.node_defaults
    handler_names = _error_handler_names(specs, defaults)
    for n, spec in specs.items():
        schema = spec.input_schema
        reads, managed = _schema_keys(builder, schema)
        managed = {k: v for k, v in managed.items() if k in managed_all}
        if spec.is_subgraph:
            proc: Any = spec.func
            mapper = None
            reads = state_reads if root else list(state_reads)
        else:
            proc = make_call(spec.func, n)
            mapper = make_mapper(schema, n)
        subgraphs = [spec.func] if spec.is_subgraph else referenced_graphs(spec.func)
        timeout = spec.timeout or defaults.get("timeout")
        labels = spec.destination_labels or {}
        writer = StateWriter(
            n,
            set(state_keys),
            node_names,
            strict=strict,
            warn_unknown=not spec.is_subgraph,
            root=root,
            destinations=[(d, labels.get(d)) for d in spec.destinations or ()],
        )
        nodes[n] = PregelNode(
            channels=reads,
            triggers=triggers[n],
            proc=proc,
            writers=[writer, EdgeWriter(edge_writes[n]), *branch_writers.get(n, [])],
            mapper=mapper,
            retry_policy=spec.retry_policy or defaults.get("retry_policy"),
            cache_policy=spec.cache_policy or defaults.get("cache_policy"),
            timeout=timeout,
            tags=_node_tags(spec.func),
            metadata=dict(spec.metadata or {}),
            managed=managed,
            defer=bool(spec.defer),
            subgraphs=subgraphs,
            name=n,
            error_handler=handler_names.get(n),
            trace_policy=spec.trace_policy,
        )
        if timeout is not None and not getattr(proc, "is_async", False) and not spec.is_subgraph:
            raise sync_timeout_error(f"Node '{n}'")

    # error-handler nodes: never triggered by channels, started by the runtime when the
    # node they handle fails for good
    state_managed = {
        k: v for k, v in builder.schemas[state_schema].managed.items() if k in managed_all
    }
    for n, hname in handler_names.items():
        if hname in nodes:
            continue
        func = specs[n].error_handler or defaults["error_handler"]
        hproc = make_call(func, hname, error_handler=True)
        nodes[hname] = PregelNode(
            channels=state_reads,
            triggers=[],
            proc=hproc,
            writers=[StateWriter(hname, set(state_keys), node_names, strict=strict, root=root)],
            mapper=make_mapper(state_schema, hname),
            retry_policy=defaults.get("retry_policy"),
            timeout=defaults.get("timeout"),
            managed=state_managed,
            name=hname,
        )
        if defaults.get("timeout") is not None and not hproc.is_async:
            raise sync_timeout_error(f"Error handler node '{hname}'")

    output_keys, _ = _schema_keys(builder, builder.output_schema)
    if checkpointer not in (None, True, False):
        _allow_schema_types(checkpointer, builder)
    if cache is not None:
        _allow_schema_types(cache, builder)
    graph: CompiledStateGraph[Any, Any, Any, Any] = CompiledStateGraph(
        nodes=nodes,
        channels=channels,
        input_channels=START,
        output_channels=output_keys,
        stream_channels=ROOT if root else sorted(state_keys, key=list(channels).index),
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
    graph.root_state = root
    return graph


def _error_handler_names(specs: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, str]:
    """Map each node that has an error handler to the name of its handler node."""
    names: dict[str, str] = {}
    for n, spec in specs.items():
        if spec.error_handler is not None:
            names[n] = f"{ERROR_HANDLER_PREFIX}{n}"
        elif defaults.get("error_handler") is not None:
            names[n] = DEFAULT_ERROR_HANDLER
    for hname in set(names.values()):
        if hname in specs:
            raise ValueError(
                f"Node '{hname}' uses a name stategraph needs for an error-handler node. "
                "Rename that node."
            )
    return names


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


def _node_tags(func: Any) -> list[str]:
    """Tags a node object carries (``ToolNode(..., tags=["nostream"])``), else none."""
    tags = getattr(func, "tags", None)
    if isinstance(tags, (list, tuple)) and all(isinstance(t, str) for t in tags):
        return list(tags)
    return []
