"""Drawings as LangGraph draws them (issue 22, item 9): a functional entrypoint ends
with a dotted (conditional) edge; create_react_agent's tools node lists its tools."""

from __future__ import annotations

from stategraph.func import entrypoint, task
from stategraph.messages import AIMessage
from stategraph.prebuilt import create_react_agent


def test_an_entrypoints_end_edge_is_dotted() -> None:
    @task
    def double(x: int) -> int:
        return 2 * x

    @entrypoint()
    def wf(x: int) -> int:
        return double(x).result()

    mermaid = wf.get_graph().draw_mermaid()
    assert "\t__start__ --> wf;\n" in mermaid
    assert "\twf -.-> __end__;\n" in mermaid
    assert wf.invoke(2) == 4


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def mul(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


def test_the_agents_tools_node_is_labelled_with_its_tools() -> None:
    for version in ("v1", "v2"):
        agent = create_react_agent(lambda messages: AIMessage("hi"), [add, mul], version=version)
        graph = agent.get_graph()
        assert graph.nodes["tools"].metadata == {"__tools": ["add", "mul"]}
        assert "\ttools(tools<hr/><small><em>__tools = add, mul</em></small>)\n" in (
            graph.draw_mermaid()
        )
        assert agent.invoke({"messages": [("user", "x")]})["messages"][-1].content == "hi"
