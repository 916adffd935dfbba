"""What callback handlers see of routing functions and of the run's configurable values
(issue 22 items 1 and 8): names and metadata as LangGraph 1.2.22 with langchain-core 1.x
reports them."""

from __future__ import annotations

from typing import Any

from typing_extensions import TypedDict

from stategraph.callbacks import BaseCallbackHandler
from stategraph.graph import END, START, StateGraph


class State(TypedDict):
    n: int


class Chains(BaseCallbackHandler):
    def __init__(self) -> None:
        self.started: list[tuple[str, dict[str, Any]]] = []

    def on_chain_start(self, serialized: Any, inputs: Any, **kwargs: Any) -> None:
        self.started.append((kwargs.get("name"), dict(kwargs.get("metadata") or {})))


def _graph(router: Any) -> Any:
    builder = StateGraph(State)
    builder.add_node("inc", lambda s: {"n": s["n"] + 1})
    builder.add_edge(START, "inc")
    builder.add_conditional_edges("inc", router, [END])
    return builder.compile()


def test_a_lambda_router_is_reported_as_unnamed() -> None:
    handler = Chains()
    _graph(lambda s: END).invoke({"n": 0}, {"callbacks": [handler]})
    names = [name for name, _ in handler.started]
    assert "Unnamed" in names
    assert "<lambda>" not in names


def test_a_named_router_keeps_its_name() -> None:
    def route_on(state: State) -> str:
        return END

    handler = Chains()
    _graph(route_on).invoke({"n": 0}, {"callbacks": [handler]})
    assert "route_on" in [name for name, _ in handler.started]


def test_only_the_thread_of_the_configurable_values_reaches_run_metadata() -> None:
    handler = Chains()
    config = {
        "callbacks": [handler],
        "configurable": {"thread_id": "t-7", "user_id": "ann", "max_results": 3},
    }
    _graph(lambda s: END).invoke({"n": 0}, config)
    graph_meta = handler.started[0][1]
    assert graph_meta["thread_id"] == "t-7"
    assert "user_id" not in graph_meta and "max_results" not in graph_meta
