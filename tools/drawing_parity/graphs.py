"""Graphs drawn by both libraries: the same program, with the import prefix chosen at run time.

    python tools/drawing_parity/graphs.py stategraph   # or: langgraph

prints one JSON object: case name -> Mermaid source (or the error raised).
"""

from __future__ import annotations

import importlib
import itertools
import json
import operator
import sys
from typing import Annotated, Any, Literal

from typing_extensions import TypedDict

LIB = sys.argv[1] if len(sys.argv) > 1 else "stategraph"
_graph = importlib.import_module(f"{LIB}.graph")
_types = importlib.import_module(f"{LIB}.types")
if LIB == "langgraph":
    _styles = importlib.import_module("langchain_core.runnables.graph")
else:
    _styles = importlib.import_module("stategraph.drawing")
StateGraph, START, END = _graph.StateGraph, _graph.START, _graph.END
Command, Send = _types.Command, _types.Send
CurveStyle, NodeStyles = _styles.CurveStyle, _styles.NodeStyles


class State(TypedDict):
    log: Annotated[list[str], operator.add]


def noop(state: State) -> dict[str, Any]:
    return {}


def linear() -> Any:
    b = StateGraph(State)
    b.add_node("fetch", noop)
    b.add_node("summarise", noop)
    b.add_edge(START, "fetch")
    b.add_edge("fetch", "summarise")
    b.add_edge("summarise", END)
    return b.compile()


def conditional() -> Any:
    b = StateGraph(State)
    for name in ("draft", "review", "publish", "archive", "dangling"):
        b.add_node(name, noop)
    b.add_edge(START, "draft")
    b.add_edge("draft", "review")
    b.add_conditional_edges(
        "review",
        lambda s: "ok",
        {"ok": "publish", "rejected": "archive", "retry": "draft", "stop": END},
    )
    b.add_edge("publish", END)
    b.add_edge("archive", "dangling")
    return b.compile(interrupt_before=["publish"])


def routed(state: State) -> Command[Literal["left", "right", "__end__"]]:
    return Command(goto="left")


def command_literal() -> Any:
    b = StateGraph(State)
    b.add_node("router", routed)
    b.add_node("left", noop)
    b.add_node("right", noop)
    b.add_edge(START, "router")
    b.add_edge("left", END)
    b.add_edge("right", END)
    return b.compile()


def fan_out(state: State) -> list[Any]:
    return [Send("work", {"log": [str(i)]}) for i in range(3)]


def map_reduce() -> Any:
    b = StateGraph(State)
    b.add_node("work", noop)
    b.add_node("reduce", noop)
    b.add_conditional_edges(START, fan_out, ["work"])
    b.add_edge("work", "reduce")
    b.add_edge("reduce", END)
    return b.compile()


def _inner(depth: int) -> Any:
    b = StateGraph(State)
    b.add_node("think", noop)
    b.add_node("check", noop)
    b.add_edge(START, "think")
    b.add_edge("think", "check")
    if depth > 0:
        b.add_node("deeper", _inner(depth - 1))
        b.add_conditional_edges("check", lambda s: "again", {"again": "think", "go": "deeper"})
        b.add_edge("deeper", END)
    else:
        b.add_conditional_edges("check", lambda s: "again", {"again": "think", "done": END})
    return b.compile()


def nested() -> Any:
    b = StateGraph(State)
    b.add_node("prepare", noop)
    b.add_node("inner", _inner(1))
    b.add_node("finish", noop)
    b.add_edge(START, "prepare")
    b.add_edge("prepare", "inner")
    b.add_edge("inner", "finish")
    b.add_edge("finish", END)
    return b.compile()


def odd_names() -> Any:
    names = [
        "my node",
        "my_node",
        "x(y)",
        "a-b",
        "héllo",
        "semi;colon",
        "end",
        "1st",
        "a.b",
        'say "hi"',
        "a/b",
        "graph",
        "💡 idea",
    ]
    b = StateGraph(State)
    for name in names:
        b.add_node(name, noop)
    b.add_edge(START, names[0])
    for a, c in itertools.pairwise(names):
        b.add_edge(a, c)
    b.add_conditional_edges(names[-1], lambda s: "x", {"go back": "my node", "quit now": END})
    return b.compile()


def loop_and_self() -> Any:
    b = StateGraph(State)
    b.add_node("agent", noop)
    b.add_node("tools", noop)
    b.add_edge(START, "agent")
    b.add_conditional_edges("agent", lambda s: END, ["tools", END])
    b.add_edge("tools", "agent")
    b.add_edge("tools", "tools")
    return b.compile()


def run() -> dict[str, str]:
    cases: dict[str, Any] = {
        "linear": lambda: linear().get_graph().draw_mermaid(),
        "linear_bare": lambda: linear().get_graph().draw_mermaid(with_styles=False),
        "conditional": lambda: conditional().get_graph().draw_mermaid(),
        "command_literal": lambda: command_literal().get_graph().draw_mermaid(),
        "map_reduce": lambda: map_reduce().get_graph().draw_mermaid(),
        "nested_no_xray": lambda: nested().get_graph().draw_mermaid(),
        "nested_xray_true": lambda: nested().get_graph(xray=True).draw_mermaid(),
        "nested_xray_1": lambda: nested().get_graph(xray=1).draw_mermaid(),
        "nested_xray_2": lambda: nested().get_graph(xray=2).draw_mermaid(),
        "odd_names": lambda: odd_names().get_graph().draw_mermaid(),
        "loop_and_self": lambda: loop_and_self().get_graph().draw_mermaid(),
        "options": lambda: (
            conditional()
            .get_graph()
            .draw_mermaid(
                curve_style=CurveStyle.BASIS,
                node_colors=NodeStyles(default="fill:#eee", first="fill:#0f0", last="fill:#f00"),
                wrap_label_n_words=1,
                frontmatter_config={"config": {"theme": "neutral", "look": "handDrawn"}},
            )
        ),
        "odd_names_ascii_nodes": lambda: "\n".join(
            f"{k!r}: {v.name!r}" for k, v in odd_names().get_graph().nodes.items()
        ),
        "nested_xray_json_edges": lambda: "\n".join(
            f"{e.source} -> {e.target} {e.data!r} {e.conditional}"
            for e in nested().get_graph(xray=True).edges
        ),
    }
    out: dict[str, str] = {}
    for name, make in cases.items():
        try:
            out[name] = make()
        except Exception as exc:  # the difference is the result
            out[name] = f"ERROR {type(exc).__name__}: {exc}"
    return out


if __name__ == "__main__":
    print(json.dumps(run(), indent=1))
