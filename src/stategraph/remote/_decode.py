"""The server's answers turned into local objects, checked field by field.

A state, a history, an update's answer, a drawing or a list of interrupts that does not
have the shape LangGraph Server gives them is a :class:`~stategraph.remote.RemoteError`
naming the endpoint and the field (``tasks[0].interrupts``), never a raw ``KeyError``
or ``AttributeError`` and never a silently wrong value: a string ``next`` is not read
as a tuple of one-letter node names, a string ``__interrupt__`` not as one interrupt
per character.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stategraph.drawing._graph import Edge, Graph, Node
from stategraph.remote._errors import RemoteError, describe_value
from stategraph.types import Interrupt, PregelTask, StateSnapshot

__all__ = [
    "malformed",
    "interrupts_of",
    "snapshot_of",
    "history_of",
    "checkpoint_config_of",
    "graph_of",
]

_PLACEHOLDER_ID = "placeholder-id"
_MAX_DEPTH = 32
"""Subgraph states nest this deep at most (a server cannot make decoding recurse
without end)."""


def malformed(where: str, field: str, expected: str, value: Any) -> RemoteError:
    """The error for a field of an answer that is not what it must be."""
    return RemoteError(
        f"{where}: malformed answer: '{field}' must be {expected}, got {describe_value(value)}.",
        endpoint=where,
        field=field,
    )


def _mapping(value: Any, where: str, field: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise malformed(where, field, "an object", value)
    return value


def _optional_mapping(value: Any, where: str, field: str) -> dict[str, Any] | None:
    if value is None:
        return None
    return dict(_mapping(value, where, field))


def _optional_str(value: Any, where: str, field: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise malformed(where, field, "a string or null", value)
    return value


def _list(value: Any, where: str, field: str) -> list[Any] | tuple[Any, ...]:
    """A JSON list (None counts as empty)."""
    if value is None:
        return []
    if not isinstance(value, (list, tuple)):
        raise malformed(where, field, "a list", value)
    return value


def _required(state: Mapping[str, Any], key: str, where: str, field: str) -> Any:
    if key not in state:
        raise RemoteError(
            f"{where}: malformed answer: '{field}' is missing.", endpoint=where, field=field
        )
    return state[key]


def interrupts_of(value: Any, where: str, field: str) -> tuple[Interrupt, ...]:
    """A list of interrupts (objects with ``value``, ``id``, ``response_schema``)."""
    out = []
    for i, item in enumerate(_list(value, where, field)):
        if isinstance(item, Interrupt):
            out.append(item)
            continue
        item = _mapping(item, where, f"{field}[{i}]")
        ident = _optional_str(item.get("id"), where, f"{field}[{i}].id")
        schema = _optional_mapping(
            item.get("response_schema"), where, f"{field}[{i}].response_schema"
        )
        out.append(Interrupt(item.get("value"), ident or _PLACEHOLDER_ID, response_schema=schema))
    return tuple(out)


def _task_of(task: Any, where: str, field: str, depth: int) -> PregelTask:
    task = _mapping(task, where, field)
    ident = _required(task, "id", where, f"{field}.id")
    name = _required(task, "name", where, f"{field}.name")
    if not isinstance(ident, str):
        raise malformed(where, f"{field}.id", "a string", ident)
    if not isinstance(name, str):
        raise malformed(where, f"{field}.name", "a string", name)
    child = task.get("state")
    checkpoint = _optional_mapping(task.get("checkpoint"), where, f"{field}.checkpoint")
    if isinstance(child, Mapping) and "values" in child:
        child_state: Any = _snapshot(child, where, f"{field}.state", depth + 1)
    elif checkpoint:
        child_state = {"configurable": checkpoint}
    else:
        child_state = None
    error = task.get("error")
    return PregelTask(
        id=ident,
        name=name,
        path=(),
        error=error if error is None or isinstance(error, str) else repr(error),
        interrupts=interrupts_of(task.get("interrupts"), where, f"{field}.interrupts"),
        state=child_state,
        result=task.get("result"),
    )


def _snapshot(state: Any, where: str, field: str, depth: int) -> StateSnapshot:
    if depth > _MAX_DEPTH:
        raise malformed(where, field, f"nested at most {_MAX_DEPTH} deep", "...")
    prefix = f"{field}." if field else ""
    state = _mapping(state, where, field or "the answer")
    values = _required(state, "values", where, f"{prefix}values")
    checkpoint = _optional_mapping(
        _required(state, "checkpoint", where, f"{prefix}checkpoint"), where, f"{prefix}checkpoint"
    )
    next_nodes = _list(state.get("next"), where, f"{prefix}next")
    for i, node in enumerate(next_nodes):
        if not isinstance(node, str):
            raise malformed(where, f"{prefix}next[{i}]", "a node name (a string)", node)
    tasks = tuple(
        _task_of(t, where, f"{prefix}tasks[{i}]", depth)
        for i, t in enumerate(_list(state.get("tasks"), where, f"{prefix}tasks"))
    )
    parent = _optional_mapping(state.get("parent_checkpoint"), where, f"{prefix}parent_checkpoint")
    return StateSnapshot(
        values=values,
        next=tuple(next_nodes),
        config={"configurable": checkpoint},
        metadata=_optional_mapping(state.get("metadata"), where, f"{prefix}metadata"),
        created_at=_optional_str(state.get("created_at"), where, f"{prefix}created_at"),
        parent_config={"configurable": parent} if parent else None,
        tasks=tasks,
        interrupts=tuple(i for t in tasks for i in t.interrupts),
    )


def snapshot_of(state: Any, where: str) -> StateSnapshot:
    """A thread state (``values``, ``next``, ``tasks``, ``checkpoint``...)."""
    return _snapshot(state, where, "", 0)


def history_of(states: Any, where: str) -> list[StateSnapshot]:
    """A list of thread states, newest first."""
    return [
        _snapshot(s, where, f"[{i}]", 0) for i, s in enumerate(_list(states, where, "the answer"))
    ]


def checkpoint_config_of(answer: Any, where: str) -> dict[str, Any]:
    """The config of the checkpoint an update created (``{"checkpoint": {...}}``)."""
    answer = _mapping(answer, where, "the answer")
    checkpoint = _mapping(_required(answer, "checkpoint", where, "checkpoint"), where, "checkpoint")
    return {"configurable": dict(checkpoint)}


def graph_of(data: Any, where: str) -> Graph:
    """A drawing (``nodes`` with ``id``/``data``, ``edges`` with ``source``/``target``)."""
    data = _mapping(data, where, "the answer")
    graph = Graph()
    for i, item in enumerate(_list(data.get("nodes"), where, "nodes")):
        item = _mapping(item, where, f"nodes[{i}]")
        ident = _required(item, "id", where, f"nodes[{i}].id")
        if not isinstance(ident, str):
            raise malformed(where, f"nodes[{i}].id", "a string", ident)
        node_data = item.get("data")
        name = node_data.get("name") if isinstance(node_data, Mapping) else None
        graph.nodes[ident] = Node(
            id=ident,
            name=name if isinstance(name, str) and name else ident,
            data=node_data,
            metadata=_optional_mapping(item.get("metadata"), where, f"nodes[{i}].metadata"),
        )
    for i, edge in enumerate(_list(data.get("edges"), where, "edges")):
        edge = _mapping(edge, where, f"edges[{i}]")
        ends = []
        for key in ("source", "target"):
            end = _required(edge, key, where, f"edges[{i}].{key}")
            if not isinstance(end, str):
                raise malformed(where, f"edges[{i}].{key}", "a node id (a string)", end)
            ends.append(end)
        graph.edges.append(
            Edge(
                source=ends[0],
                target=ends[1],
                data=edge.get("data"),
                conditional=bool(edge.get("conditional", False)),
            )
        )
    return graph
