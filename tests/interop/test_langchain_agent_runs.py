"""``create_react_agent``'s runs with a LangChain model (issue 22 item 2): the prompt
function's own result is what the ``Prompt`` run reports, and the structured response is
generated inside a ``generate_structured_response`` chain run, as under LangGraph 1.2.22
(observed side by side by tools/langchain_boundary; asserted here in our own terms).
"""

from __future__ import annotations

import asyncio
from typing import Any
from uuid import UUID

from langchain_core import messages as lc
from langchain_core.callbacks import BaseCallbackHandler
from pydantic import BaseModel

from stategraph.prebuilt import create_react_agent

from .lc_fakes import ScriptedChatModel, add


class Chains(BaseCallbackHandler):
    """Records chain runs: name, parent's name, tags and output."""

    def __init__(self) -> None:
        self.runs: dict[UUID, dict[str, Any]] = {}

    def on_chain_start(self, serialized: Any, inputs: Any, **kw: Any) -> None:
        self.runs[kw["run_id"]] = {
            "name": kw.get("name"),
            "parent": kw.get("parent_run_id"),
            "tags": list(kw.get("tags") or ()),
            "metadata": dict(kw.get("metadata") or {}),
        }

    def on_chain_end(self, outputs: Any, **kw: Any) -> None:
        self.runs[kw["run_id"]]["output"] = outputs

    def named(self, name: str) -> list[dict[str, Any]]:
        return [r for r in self.runs.values() if r["name"] == name]

    def parent_name(self, run: dict[str, Any]) -> Any:
        parent = self.runs.get(run["parent"])
        return None if parent is None else parent["name"]


def test_the_prompt_run_reports_what_the_prompt_function_returned() -> None:
    def prompt(state: Any, config: Any) -> list[Any]:
        user = config["configurable"]["user_name"]
        return [("system", f"You help {user}."), *state["messages"]]

    model = ScriptedChatModel(replies=[lc.AIMessage("hello Ann")])
    agent = create_react_agent(model, [add], prompt=prompt)
    chains = Chains()
    config = {"configurable": {"user_name": "Ann"}, "callbacks": [chains]}
    out = agent.invoke({"messages": [("user", "hi")]}, config)

    assert out["messages"][-1].content == "hello Ann"
    (run,) = chains.named("Prompt")
    first, second = run["output"]
    # the pair as the function returned it; the model converts it (as under LangGraph)
    assert first == ("system", "You help Ann.")
    assert second.content == "hi"
    seen = model.seen[-1]
    assert seen[0].type == "system" and seen[0].content == "You help Ann."


class Weather(BaseModel):
    """A weather report."""

    city: str
    temperature: int


def weather_model() -> ScriptedChatModel:
    return ScriptedChatModel(
        replies=[
            lc.AIMessage("It is 21 degrees in Oslo."),
            lc.AIMessage(
                "",
                tool_calls=[
                    {"name": "Weather", "args": {"city": "Oslo", "temperature": 21}, "id": "w1"}
                ],
            ),
        ]
    )


def check_structured_tree(chains: Chains, out: dict[str, Any]) -> None:
    assert out["structured_response"] == Weather(city="Oslo", temperature=21)
    node, inner = chains.named("generate_structured_response")
    assert chains.parent_name(inner) == "generate_structured_response"
    assert inner["parent"] is not None and chains.runs[inner["parent"]] is node
    assert inner["tags"] == ["seq:step:1"]
    # like LangGraph's own callable, the inner run does not copy the checkpoint namespace
    assert "checkpoint_ns" not in inner["metadata"]
    # the structured model's sequence hangs from the node, beside that run
    (sequence,) = [r for r in chains.named("RunnableSequence") if r["parent"] == inner["parent"]]
    assert sequence["output"] == Weather(city="Oslo", temperature=21)


def test_the_structured_response_is_made_inside_its_own_chain_run() -> None:
    agent = create_react_agent(weather_model(), [add], response_format=Weather)
    chains = Chains()
    out = agent.invoke({"messages": [("user", "weather in Oslo")]}, {"callbacks": [chains]})
    check_structured_tree(chains, out)


def test_the_async_agent_makes_the_structured_response_the_same_way() -> None:
    agent = create_react_agent(weather_model(), [add], response_format=Weather)
    chains = Chains()
    out = asyncio.run(
        agent.ainvoke({"messages": [("user", "weather in Oslo")]}, {"callbacks": [chains]})
    )
    check_structured_tree(chains, out)
