"""A ReAct agent: a chat model that calls tools until it can answer.

Run it with ``python examples/react_agent.py``. The "model" here is a small
deterministic stand-in so the example runs offline; in an application pass a real chat
model (for example an adapter from ``stategraph.models``) to ``create_react_agent``.
Everything else (tool calling, the loop, persistence of the conversation) is what a
real agent does.
"""

from __future__ import annotations

import json
import re
from typing import Any

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.messages import AIMessage, BaseMessage, ToolMessage
from stategraph.prebuilt import ToolNode, create_react_agent

PRICES = {"apple": 0.5, "pear": 0.75, "melon": 3.0}


def price(fruit: str) -> float:
    """The unit price of a fruit, in euros."""
    if fruit not in PRICES:
        raise ValueError(f"unknown fruit {fruit!r}; we sell {', '.join(PRICES)}")
    return PRICES[fruit]


def multiply(a: float, b: float) -> float:
    """a times b."""
    return a * b


class RuleModel:
    """Answers "how much do N FRUITs cost?" by calling ``price`` then ``multiply``."""

    def bind_tools(self, tools: list[Any]) -> RuleModel:
        self.tools = [getattr(t, "name", getattr(t, "__name__", "")) for t in tools]
        return self

    def invoke(self, messages: list[BaseMessage]) -> AIMessage:
        question = next(m for m in messages if m.type == "human").content
        results = [m for m in messages if isinstance(m, ToolMessage)]
        match = re.search(r"(\d+) (\w+?)s? cost", str(question))
        if match is None:
            return AIMessage("Ask me what some fruit costs, e.g. 'how much do 3 pears cost?'")
        count, fruit = int(match.group(1)), match.group(2)
        if not results:
            return AIMessage("", tool_calls=[_call("price", {"fruit": fruit}, "c1")])
        if len(results) == 1:
            if results[0].status == "error":
                return AIMessage(f"Sorry: {results[0].content}")
            unit = float(str(results[0].content))
            return AIMessage("", tool_calls=[_call("multiply", {"a": unit, "b": count}, "c2")])
        return AIMessage(f"{count} {fruit}s cost {float(str(results[-1].content)):.2f} euros.")


def _call(name: str, args: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def build() -> Any:
    """The agent graph, remembering conversations per thread.

    ``handle_tool_errors=True`` turns a tool's exception into an error message the
    model reads (and can recover from) instead of failing the run.
    """
    tools = ToolNode([price, multiply], handle_tool_errors=True)
    return create_react_agent(RuleModel(), tools, checkpointer=InMemorySaver())


def main() -> dict[str, Any]:
    """Ask two questions; return the answers and the tools the agent called."""
    agent = build()
    config = {"configurable": {"thread_id": "shopper"}}
    first = agent.invoke({"messages": [("user", "How much do 3 pears cost?")]}, config)
    calls = [c["name"] for m in first["messages"] for c in getattr(m, "tool_calls", None) or ()]
    second = agent.invoke(
        {"messages": [("user", "How much do 2 kiwis cost?")]},
        {"configurable": {"thread_id": "other"}},
    )
    report = {
        "answer": first["messages"][-1].content,
        "tools_called": calls,
        "unknown_fruit": second["messages"][-1].content,
        "messages_in_thread": len(agent.get_state(config).values["messages"]),
    }
    print(json.dumps(report, indent=2))
    return report


if __name__ == "__main__":
    main()
