"""Where subgraphs keep their state: namespaces, reading and editing it, durability.

Every test runs on each saver kind, through the sync and the async API (see
``persistence_helpers.Harness``). The expected behaviour was checked against
LangGraph 1.2 run as a black box on equivalent graphs.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any

import pytest
from persistence_helpers import Harness, cfg
from typing_extensions import TypedDict

from stategraph.graph import START, StateGraph
from stategraph.types import Command, StateSnapshot, interrupt


class Notes(TypedDict):
    """State of the subgraphs: an append-only list."""

    notes: Annotated[list[str], operator.add]


class Top(TypedDict):
    """State of the parents: an append-only list of its own."""

    out: Annotated[list[str], operator.add]


def note_graph(tag: str, seen: list[tuple[str, list[str]]], checkpointer: Any = None) -> Any:
    """One node that records the notes it found, then adds ``tag``."""

    def write(state: Notes) -> dict[str, list[str]]:
        seen.append((tag, list(state.get("notes", []))))
        return {"notes": [tag]}

    return (
        StateGraph(Notes)
        .add_node("write", write)
        .add_edge(START, "write")
        .compile(checkpointer=checkpointer)
    )


def asking_graph(checkpointer: Any = None) -> Any:
    """``first`` adds a note, ``ask`` stores the answer to an interrupt."""

    def ask(state: Notes) -> dict[str, list[str]]:
        return {"notes": [f"answer={interrupt('what?')}"]}

    return (
        StateGraph(Notes)
        .add_node("first", lambda s: {"notes": ["first"]})
        .add_node("ask", ask)
        .add_edge(START, "first")
        .add_edge("first", "ask")
        .compile(checkpointer=checkpointer)
    )


def namespaces(h: Harness, thread: str) -> set[str]:
    """Every checkpoint namespace the saver holds for ``thread``."""
    return {s.config["configurable"]["checkpoint_ns"] for s in h.saver.list(cfg(thread))}


def test_a_stateful_subgraph_streams_and_saves_under_the_node_name(h: Harness) -> None:
    seen: list[tuple[str, list[str]]] = []
    sub = note_graph("n", seen, checkpointer=True)
    parent = (
        StateGraph(Top).add_node("keep", sub).add_edge(START, "keep").compile(checkpointer=h.saver)
    )
    config = cfg("stable")
    first = h.stream(parent, {"out": []}, config, subgraphs=True, stream_mode="updates")
    second = h.stream(parent, {"out": []}, config, subgraphs=True, stream_mode="updates")

    assert first == [(("keep",), {"write": {"notes": ["n"]}}), ((), {"keep": None})]
    assert second == first
    # the second run found the notes of the first one: the state outlives the parent task
    assert seen == [("n", []), ("n", ["n"])]
    assert namespaces(h, "stable") == {"", "keep"}


def test_graphs_called_from_one_node_each_get_a_namespace(h: Harness) -> None:
    seen: list[tuple[str, list[str]]] = []
    kept_a = note_graph("a", seen, checkpointer=True)
    fresh = note_graph("b", seen)
    kept_c = note_graph("c", seen, checkpointer=True)

    def caller(state: Top) -> dict[str, list[str]]:
        for graph in (kept_a, fresh, kept_c):
            graph.invoke({"notes": []})
        return {"out": ["done"]}

    parent = (
        StateGraph(Top)
        .add_node("caller", caller)
        .add_edge(START, "caller")
        .compile(checkpointer=h.saver)
    )
    config = cfg("numbered")
    chunks = h.stream(parent, {"out": []}, config, subgraphs=True, stream_mode="updates")
    task_id = next(s for s in h.history(parent, config) if s.next == ("caller",)).tasks[0].id

    assert [ns for ns, _ in chunks] == [
        ("caller",),
        (f"caller:{task_id}", "1"),
        ("caller", "2"),
        (),
    ]
    assert namespaces(h, "numbered") == {"", "caller", f"caller:{task_id}|1", "caller|2"}

    seen.clear()
    h.invoke(parent, {"out": []}, config)
    # each kept graph finds its own notes only; the third never sees the first's
    assert seen == [("a", ["a"]), ("b", []), ("c", ["c"])]


def test_get_state_shows_a_stateful_subgraph_called_inside_a_node(h: Harness) -> None:
    sub = asking_graph(checkpointer=True)

    def caller(state: Top) -> dict[str, list[str]]:
        return {"out": sub.invoke({"notes": ["in"]})["notes"]}

    parent = (
        StateGraph(Top)
        .add_node("caller", caller)
        .add_edge(START, "caller")
        .compile(checkpointer=h.saver)
    )
    config = cfg("inside")
    paused = h.invoke(parent, {"out": []}, config)
    assert [i.value for i in paused["__interrupt__"]] == ["what?"]

    top = h.get_state(parent, config, subgraphs=True)
    inner = top.tasks[0].state
    assert isinstance(inner, StateSnapshot)
    assert inner.values == {"notes": ["in", "first"]}
    assert inner.next == ("ask",)
    conf = inner.config["configurable"]
    assert conf["checkpoint_ns"] == "caller"
    assert conf["checkpoint_map"] == {
        "": top.config["configurable"]["checkpoint_id"],
        "caller": conf["checkpoint_id"],
    }
    # without subgraphs=True the task points at the task's own namespace
    plain = h.get_state(parent, config).tasks[0].state
    assert plain == {
        "configurable": {"thread_id": "inside", "checkpoint_ns": f"caller:{top.tasks[0].id}"}
    }

    done = h.invoke(parent, Command(resume="yes"), config)
    assert done == {"out": ["in", "first", "answer=yes"]}


def test_subgraph_history_configs_name_the_parent_checkpoint(h: Harness) -> None:
    sub = note_graph("n", [], checkpointer=True)
    parent = (
        StateGraph(Top).add_node("keep", sub).add_edge(START, "keep").compile(checkpointer=h.saver)
    )
    config = cfg("maps")
    h.invoke(parent, {"out": []}, config)
    # the subgraph ran from the parent's checkpoint whose next task was "keep"
    ran_from = next(s for s in h.history(parent, config) if s.next == ("keep",))
    parent_id = ran_from.config["configurable"]["checkpoint_id"]

    history = h.history(parent, cfg("maps", checkpoint_ns="keep"))
    assert [s.metadata["source"] for s in history] == ["loop", "loop", "input"]
    for snap in history:
        conf = snap.config["configurable"]
        assert conf["checkpoint_map"] == {"": parent_id, "keep": conf["checkpoint_id"]}
        if snap.parent_config is not None:
            up = snap.parent_config["configurable"]
            assert up["checkpoint_map"] == {"": parent_id, "keep": up["checkpoint_id"]}
    # the subgraph's own state is read with the subgraph's channels
    assert history[0].values == {"notes": ["n"]}


def test_update_state_needs_a_declared_subgraph_at_the_namespace(h: Harness) -> None:
    helper = note_graph("h", [])
    holder = {"graph": helper}  # reached through a subscript: not detected

    def tools(state: Top) -> dict[str, list[str]]:
        holder["graph"].invoke({"notes": []})
        return {"out": ["tools"]}

    inner = StateGraph(Notes).add_node("review", lambda s: {}).add_edge(START, "review").compile()
    parent = (
        StateGraph(Top)
        .add_node("tools", tools)
        .add_node("research", inner)
        .add_edge(START, "tools")
        .add_edge(START, "research")
        .compile(checkpointer=h.saver)
    )
    config = cfg("undeclared")
    h.invoke(parent, {"out": []}, config)
    tools_ns = next(ns for ns in namespaces(h, "undeclared") if ns.startswith("tools:"))
    before = len(h.history(parent, cfg("undeclared", checkpoint_ns=tools_ns)))

    with pytest.raises(ValueError, match="Subgraph tools not found"):
        h.update_state(parent, cfg("undeclared", checkpoint_ns=tools_ns), {"notes": ["x"]})
    # "research" exists, but runs no subgraph at "review"
    with pytest.raises(ValueError, match=r"Subgraph research\|review not found"):
        h.update_state(
            parent, cfg("undeclared", checkpoint_ns="research:1|review:2"), {"notes": ["x"]}
        )
    assert len(h.history(parent, cfg("undeclared", checkpoint_ns=tools_ns))) == before
    # reading the undeclared namespace still works, with the parent's channels
    assert (
        h.get_state(parent, cfg("undeclared", checkpoint_ns=tools_ns)).config["configurable"][
            "checkpoint_ns"
        ]
        == tools_ns
    )


def test_update_state_on_a_subgraph_namespace_writes_there(h: Harness) -> None:
    sub = asking_graph(checkpointer=True)
    parent = (
        StateGraph(Top).add_node("ask", sub).add_edge(START, "ask").compile(checkpointer=h.saver)
    )
    config = cfg("edit")
    h.invoke(parent, {"out": []}, config)
    sub_config = h.get_state(parent, config, subgraphs=True).tasks[0].state.config
    root_id = sub_config["configurable"]["checkpoint_map"][""]

    new_config = h.update_state(parent, sub_config, {"notes": ["edited"]})
    conf = new_config["configurable"]
    assert conf["checkpoint_ns"] == "ask"
    assert conf["checkpoint_map"] == {"": root_id, "ask": conf["checkpoint_id"]}
    edited = h.get_state(parent, new_config)
    assert edited.values == {"notes": ["first", "edited"]}
    assert edited.metadata["source"] == "update"
    assert edited.metadata["parents"] == {"": root_id}
    assert edited.next == ("ask",)


def test_a_child_graph_with_a_thread_of_its_own_is_independent(h: Harness) -> None:
    child = (
        StateGraph(Notes)
        .add_node("n", lambda s: {"notes": ["child"]})
        .add_edge(START, "n")
        .compile(checkpointer=h.saver)
    )
    child_config = cfg("child-thread")

    def call_child(state: Top) -> dict[str, list[str]]:
        child.invoke({"notes": []}, child_config)
        return {"out": ["called"]}

    parent = (
        StateGraph(Top).add_node("p", call_child).add_edge(START, "p").compile(checkpointer=h.saver)
    )
    h.invoke(parent, {"out": []}, cfg("parent-thread"))
    h.invoke(parent, {"out": []}, cfg("parent-thread"))

    state = h.get_state(child, child_config)
    assert state.values == {"notes": ["child", "child"]}
    assert state.config["configurable"]["checkpoint_ns"] == ""
    assert namespaces(h, "parent-thread") == {""}
    assert namespaces(h, "child-thread") == {""}


@pytest.mark.parametrize("kind", ["finishes", "interrupts", "keeps state"])
def test_exit_durability_saves_a_subgraph_only_when_needed(h: Harness, kind: str) -> None:
    sub = (
        asking_graph()
        if kind == "interrupts"
        else note_graph("n", [], checkpointer=True if kind == "keeps state" else None)
    )
    parent = (
        StateGraph(Top).add_node("sub", sub).add_edge(START, "sub").compile(checkpointer=h.saver)
    )
    config = cfg(f"exit-{kind}")
    h.invoke(parent, {"out": []}, config, durability="exit")
    found = namespaces(h, f"exit-{kind}")
    if kind == "finishes":
        # nothing to resume or keep: only the parent's final checkpoint is saved
        assert found == {""}
        assert len(list(h.saver.list(config))) == 1
    elif kind == "interrupts":
        (sub_ns,) = found - {""}
        assert sub_ns.startswith("sub:")
        assert h.invoke(parent, Command(resume="ok"), config, durability="exit") == {"out": []}
    else:
        assert found == {"", "sub"}


def test_checkpointer_true_is_for_subgraphs_only(h: Harness) -> None:
    graph = note_graph("n", [], checkpointer=True)
    with pytest.raises(RuntimeError, match="checkpointer=True cannot be used for root graphs"):
        h.invoke(graph, {"notes": []}, cfg("root"))
    with pytest.raises(RuntimeError, match="checkpointer=True cannot be used for root graphs"):
        h.get_state(graph, cfg("root"))


def test_a_subgraph_without_checkpointer_starts_over_on_resume(h: Harness) -> None:
    runs: list[str] = []

    def first(state: Notes) -> dict[str, list[str]]:
        runs.append("first")
        return {"notes": ["first"]}

    def ask(state: Notes) -> dict[str, list[str]]:
        runs.append("ask")
        return {"notes": [f"answer={interrupt('what?')}"]}

    sub = (
        StateGraph(Notes)
        .add_node("first", first)
        .add_node("ask", ask)
        .add_edge(START, "first")
        .add_edge("first", "ask")
        .compile(checkpointer=False)
    )
    parent = StateGraph(Notes).add_node("sub", sub).add_edge(START, "sub")
    graph = parent.compile(checkpointer=h.saver)
    config = cfg("no-saver")
    h.invoke(graph, {"notes": []}, config)
    assert runs == ["first", "ask"]
    # it keeps no state, so its task points at nothing
    assert h.get_state(graph, config, subgraphs=True).tasks[0].state is None

    done = h.invoke(graph, Command(resume="yes"), config)
    assert runs == ["first", "ask", "first", "ask"]
    assert done == {"notes": ["first", "answer=yes"]}
    assert namespaces(h, "no-saver") == {""}


def test_a_breakpoint_inside_a_subgraph_pauses_the_parent(h: Harness) -> None:
    runs: list[str] = []

    def step(name: str) -> Any:
        def node(state: Top) -> dict[str, list[str]]:
            runs.append(name)
            return {"out": [name]}

        return node

    sub = (
        StateGraph(Top)
        .add_node("s1", step("s1"))
        .add_node("s2", step("s2"))
        .add_edge(START, "s1")
        .add_edge("s1", "s2")
        .compile(interrupt_before=["s2"])
    )
    parent = (
        StateGraph(Top)
        .add_node("sub", sub)
        .add_node("side", step("side"))
        .add_node("after", step("after"))
        .add_edge(START, "sub")
        .add_edge(START, "side")
        .add_edge(["sub", "side"], "after")
        .compile(checkpointer=h.saver)
    )
    config = cfg("sub-breakpoint")
    chunks = h.stream(
        parent, {"out": []}, config, subgraphs=True, stream_mode=["updates", "values"]
    )
    pauses = [c for c in chunks if c[1] == "updates" and "__interrupt__" in c[2]]
    # one pause, reported by the parent; the sibling's write is kept and shown
    assert pauses == [((), "updates", {"__interrupt__": ()})]
    assert ((), "values", {"out": ["side"]}) in chunks[-2:]
    assert h.get_state(parent, config).next == ("sub",)

    resumed = h.invoke(parent, None, config)
    assert resumed == {"out": ["side", "s1", "s2", "after"]}
    assert runs == ["s1", "side", "s2", "after"] or runs == ["side", "s1", "s2", "after"]
