"""The four benchmark workloads, each written once against a :class:`~bench.libs.Lib`.

A :class:`Workload` builds its graph for one library and one checkpointer, gives the
input and run config, and validates the final values (both what ``invoke`` returned
and, when a checkpointer is used, what ``get_state`` reads back), so a broken run
fails loudly instead of being timed.
"""

from __future__ import annotations

import dataclasses
import itertools
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any

from typing_extensions import TypedDict

from bench.libs import Lib

__all__ = ["FULL", "QUICK", "WORKLOADS", "Sizes", "ValidationError", "Workload", "make_workloads"]


class ValidationError(AssertionError):
    """A workload's result is not what the graph must produce."""


@dataclass(frozen=True)
class Sizes:
    """How big each workload is."""

    nodes: int
    """Nodes of the sequential messages graph."""
    sends: int
    """``Send``s fanned out to the looping subgraph."""
    sub_loops: int
    """Iterations of the subgraph's loop (per ``Send``)."""
    wide_loops: int
    """Iterations of the wide dataclass state loop."""
    rounds: int
    """Tool-calling rounds of the agent loop."""


FULL = Sizes(nodes=1000, sends=100, sub_loops=10, wide_loops=300, rounds=100)
QUICK = Sizes(nodes=100, sends=10, sub_loops=10, wide_loops=30, rounds=10)


@dataclass(frozen=True)
class Workload:
    """One benchmark: how to build, feed and check a graph."""

    name: str
    """Short name used by ``--only`` and in the table."""
    size: str
    """Human description of the size, e.g. "1000 nodes"."""
    build: Callable[[Lib, Any], Any]
    """``build(lib, checkpointer)`` -> compiled graph."""
    make_input: Callable[[Lib], Any]
    """``make_input(lib)`` -> a fresh input for one run."""
    recursion_limit: int
    """Recursion limit passed in every run config."""
    validate: Callable[[Mapping[str, Any]], None]
    """Raise :class:`ValidationError` unless the final state values are right."""

    def config(self, thread_id: str) -> dict[str, Any]:
        """The run config for one run on thread ``thread_id``."""
        return {"configurable": {"thread_id": thread_id}, "recursion_limit": self.recursion_limit}


def _check(ok: bool, workload: str, message: str) -> None:
    if not ok:
        raise ValidationError(f"{workload}: {message}")


# -- 1. sequential MessagesState graph -------------------------------------------------


def _sequential(n: int) -> Workload:
    name = "sequential"

    def build(lib: Lib, checkpointer: Any) -> Any:
        AIMessage = lib.AIMessage

        def step(state: Any) -> dict[str, Any]:
            return {"messages": [AIMessage(content="a fixed reply")]}

        builder = lib.StateGraph(lib.MessagesState)
        names = [f"node_{i}" for i in range(n)]
        for node in names:
            builder.add_node(node, step)
        builder.add_edge(lib.START, names[0])
        for left, right in itertools.pairwise(names):
            builder.add_edge(left, right)
        builder.add_edge(names[-1], lib.END)
        return builder.compile(checkpointer=checkpointer)

    def make_input(lib: Lib) -> Any:
        return {"messages": [lib.HumanMessage(content="start")]}

    def validate(values: Mapping[str, Any]) -> None:
        messages = values["messages"]
        _check(len(messages) == n + 1, name, f"expected {n + 1} messages, got {len(messages)}")
        _check(messages[0].type == "human", name, "first message is not the input")
        ai = messages[1:]
        _check(all(m.type == "ai" and m.content == "a fixed reply" for m in ai), name, "bad AI")
        ids = {m.id for m in messages}
        _check(len(ids) == n + 1 and None not in ids, name, "messages lack distinct ids")

    return Workload(name, f"{n} nodes", build, make_input, n + 10, validate)


# -- 2. fan-out of Sends to a looping subgraph -----------------------------------------


class _FanState(TypedDict):
    results: Annotated[list[int], operator.add]
    total: Annotated[int, operator.add]


class _SubState(TypedDict):
    idx: int
    counter: int
    results: Annotated[list[int], operator.add]
    total: Annotated[int, operator.add]


def _fanout(sends: int, loops: int) -> Workload:
    name = "fanout"

    def build(lib: Lib, checkpointer: Any) -> Any:
        def tick(state: _SubState) -> dict[str, Any]:
            counter = state["counter"] + 1
            update: dict[str, Any] = {"counter": counter, "total": 1}
            if counter == loops:
                update["results"] = [state["idx"]]
            return update

        def again(state: _SubState) -> str:
            return "tick" if state["counter"] < loops else lib.END

        sub = lib.StateGraph(_SubState)
        sub.add_node("tick", tick)
        sub.add_edge(lib.START, "tick")
        sub.add_conditional_edges("tick", again, ["tick", lib.END])
        subgraph = sub.compile()

        def fan(state: _FanState) -> list[Any]:
            return [lib.Send("sub", {"idx": i, "counter": 0}) for i in range(sends)]

        parent = lib.StateGraph(_FanState)
        parent.add_node("sub", subgraph)
        parent.add_conditional_edges(lib.START, fan, ["sub"])
        parent.add_edge("sub", lib.END)
        return parent.compile(checkpointer=checkpointer)

    def make_input(lib: Lib) -> Any:
        return {"results": [], "total": 0}

    def validate(values: Mapping[str, Any]) -> None:
        results = values["results"]
        _check(sorted(results) == list(range(sends)), name, f"results {sorted(results)[:12]}...")
        total = values["total"]
        _check(total == sends * loops, name, f"expected total {sends * loops}, got {total}")

    return Workload(name, f"{sends} sends x {loops} loops", build, make_input, loops + 10, validate)


# -- 3. wide dataclass state loop --------------------------------------------------------

_PLAIN_FIELDS = 36


def _wide_state_class() -> type:
    fields: list[Any] = [(f"f{i}", int, dataclasses.field(default=0)) for i in range(_PLAIN_FIELDS)]
    fields += [
        ("step", int, dataclasses.field(default=0)),
        ("label", str, dataclasses.field(default="")),
        ("items", Annotated[list[int], operator.add], dataclasses.field(default_factory=list)),
        ("total", Annotated[int, operator.add], dataclasses.field(default=0)),
    ]
    cls = dataclasses.make_dataclass("WideState", fields)
    cls.__module__ = __name__  # `module=` needs Python 3.12
    return cls


WideState = _wide_state_class()
"""A 40-field dataclass state: 38 plain fields and two reducer fields."""


def _wide(loops: int) -> Workload:
    name = "wide_state"

    def build(lib: Lib, checkpointer: Any) -> Any:
        def tick(state: Any) -> dict[str, Any]:
            step = state.step
            return {
                "step": step + 1,
                "items": [step],
                "total": 1,
                f"f{step % _PLAIN_FIELDS}": step,
            }

        def again(state: Any) -> str:
            return "tick" if state.step < loops else lib.END

        builder = lib.StateGraph(WideState)
        builder.add_node("tick", tick)
        builder.add_edge(lib.START, "tick")
        builder.add_conditional_edges("tick", again, ["tick", lib.END])
        return builder.compile(checkpointer=checkpointer)

    def make_input(lib: Lib) -> Any:
        return {"step": 0, "label": "wide"}

    def validate(values: Mapping[str, Any]) -> None:
        _check(values["step"] == loops, name, f"expected step {loops}, got {values['step']}")
        _check(values["total"] == loops, name, f"expected total {loops}, got {values['total']}")
        _check(list(values["items"]) == list(range(loops)), name, "items are not 0..loops-1")
        _check(values["label"] == "wide", name, f"label changed to {values['label']!r}")
        expected = [0] * _PLAIN_FIELDS
        for step in range(loops):
            expected[step % _PLAIN_FIELDS] = step
        # LangGraph leaves never-written fields out of the output; stategraph fills defaults
        got = [values.get(f"f{i}", 0) for i in range(_PLAIN_FIELDS)]
        _check(got == expected, name, f"plain fields {got} != {expected}")

    return Workload(name, f"40 fields x {loops} loops", build, make_input, loops + 10, validate)


# -- 4. hand-written agent loop ----------------------------------------------------------


def _agent(rounds: int) -> Workload:
    name = "agent_loop"
    script: list[tuple[str, list[dict[str, Any]]]] = [
        (f"calling add #{i}", [{"name": "add", "args": {"a": i, "b": 1}, "id": f"call_{i}"}])
        for i in range(rounds)
    ]
    script.append(("done", []))

    def build(lib: Lib, checkpointer: Any) -> Any:
        AIMessage, ToolMessage = lib.AIMessage, lib.ToolMessage

        def agent(state: Any) -> dict[str, Any]:
            # The script plays the model: [human, (ai, tool) * k] -> the k-th reply.
            content, calls = script[(len(state["messages"]) - 1) // 2]
            return {"messages": [AIMessage(content=content, tool_calls=calls)]}

        def tools(state: Any) -> dict[str, Any]:
            calls = state["messages"][-1].tool_calls
            return {
                "messages": [
                    ToolMessage(
                        content=str(c["args"]["a"] + c["args"]["b"]),
                        tool_call_id=c["id"],
                        name=c["name"],
                    )
                    for c in calls
                ]
            }

        def route(state: Any) -> str:
            return "tools" if state["messages"][-1].tool_calls else lib.END

        builder = lib.StateGraph(lib.MessagesState)
        builder.add_node("agent", agent)
        builder.add_node("tools", tools)
        builder.add_edge(lib.START, "agent")
        builder.add_conditional_edges("agent", route, ["tools", lib.END])
        builder.add_edge("tools", "agent")
        return builder.compile(checkpointer=checkpointer)

    def make_input(lib: Lib) -> Any:
        return {"messages": [lib.HumanMessage(content="add things up")]}

    def validate(values: Mapping[str, Any]) -> None:
        messages = values["messages"]
        expected = 2 * rounds + 2
        _check(
            len(messages) == expected, name, f"expected {expected} messages, got {len(messages)}"
        )
        tool_messages = [m for m in messages if m.type == "tool"]
        _check(
            [m.content for m in tool_messages] == [str(i + 1) for i in range(rounds)],
            name,
            "tool results are wrong",
        )
        _check(
            [m.tool_call_id for m in tool_messages] == [f"call_{i}" for i in range(rounds)],
            name,
            "tool_call_ids are wrong",
        )
        last = messages[-1]
        _check(last.type == "ai" and not last.tool_calls, name, "did not end on a final answer")

    # each round is two steps (agent, tools), plus the final agent step
    return Workload(name, f"{rounds} rounds", build, make_input, 2 * rounds + 10, validate)


def make_workloads(sizes: Sizes) -> list[Workload]:
    """Every workload at ``sizes``, in table order."""
    return [
        _sequential(sizes.nodes),
        _fanout(sizes.sends, sizes.sub_loops),
        _wide(sizes.wide_loops),
        _agent(sizes.rounds),
    ]


WORKLOADS = tuple(w.name for w in make_workloads(QUICK))
"""Names accepted by ``--only``."""
