"""The LangGraph ecosystem's own examples, run with fake models: langgraph-swarm,
langgraph-supervisor and LangChain 1.x's ``create_agent``.

    python ecosystem.py            # with LangGraph installed
    python ecosystem.py --alias    # on stategraph, through install_langgraph_alias()

Prints one JSON object: per app, the final state (messages as type/name/content/tool
calls, other keys) of each turn and the node names of each ``updates`` chunk. Ids are
masked. ``tests/interop/test_langgraph_alias.py`` checks stategraph's output against
LangGraph's, recorded in the test.
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

__all__ = ["run_all"]


def _message(m: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": m.type, "content": m.content}
    if getattr(m, "name", None):
        out["name"] = m.name
    calls = [
        {"name": c["name"], "args": c["args"], "id": c["id"]}
        for c in getattr(m, "tool_calls", None) or []
    ]
    if calls:
        out["tool_calls"] = calls
    if getattr(m, "tool_call_id", None):
        out["tool_call_id"] = m.tool_call_id
    return out


def _state(state: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in state.items():
        if key == "messages":
            out[key] = [_message(m) for m in value]
        elif key != "remaining_steps":
            out[key] = (
                value if isinstance(value, (str, int, float, bool, type(None))) else repr(value)
            )
    return out


def _turns(app: Any, inputs: list[Any], config: dict[str, Any]) -> dict[str, Any]:
    states = [_state(app.invoke(i, config)) for i in inputs]
    return {"states": states}


def _updates(app: Any, inputs: list[Any], config: dict[str, Any]) -> list[list[list[str]]]:
    runs = []
    for i in inputs:
        runs.append(
            [
                [*ns_and_chunk[0], *ns_and_chunk[1]]  # namespace names + node names
                for ns_and_chunk in (
                    ([s.split(":")[0] for s in ns], list(chunk))
                    for ns, chunk in app.stream(i, config, stream_mode="updates", subgraphs=True)
                )
            ]
        )
    return runs


def swarm(fresh: bool = True) -> Any:
    """langgraph-swarm's quickstart: Alice (adds) and Bob (a pirate) hand over."""
    from fakes import ScriptedChatModel, ai, call
    from langchain.agents import create_agent
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph_swarm import create_handoff_tool, create_swarm

    def add(a: int, b: int) -> int:
        """Add two numbers"""
        return a + b

    alice_model = ScriptedChatModel(
        replies=[
            ai("", call("transfer_to_bob", {}, "a1")),
            ai("", call("add", {"a": 5, "b": 7}, "a2")),
            ai("5 + 7 = 12"),
        ]
    )
    bob_model = ScriptedChatModel(
        replies=[ai("Ahoy, matey!"), ai("", call("transfer_to_alice", {}, "b1"))]
    )
    alice = create_agent(
        alice_model,
        tools=[add, create_handoff_tool(agent_name="Bob", description="Transfer to Bob")],
        system_prompt="You are Alice, an addition expert.",
        name="Alice",
    )
    bob = create_agent(
        bob_model,
        tools=[
            create_handoff_tool(
                agent_name="Alice", description="Transfer to Alice, she can help with math"
            )
        ],
        system_prompt="You are Bob, you speak like a pirate.",
        name="Bob",
    )
    workflow = create_swarm([alice, bob], default_active_agent="Alice")
    return workflow.compile(checkpointer=InMemorySaver()), workflow


SWARM_INPUTS = [
    {"messages": [{"role": "user", "content": "i'd like to speak to Bob"}]},
    {"messages": [{"role": "user", "content": "what's 5 + 7?"}]},
]


def supervisor() -> Any:
    """langgraph-supervisor's quickstart: a research expert and a math expert."""
    from fakes import ScriptedChatModel, ai, call
    from langgraph.prebuilt import create_react_agent
    from langgraph_supervisor import create_supervisor

    def add(a: float, b: float) -> float:
        """Add two numbers."""
        return a + b

    def web_search(query: str) -> str:
        """Search the web for information."""
        return "Meta 67317, Apple 164000"

    research = create_react_agent(
        model=ScriptedChatModel(
            replies=[
                ai("", call("web_search", {"query": "FAANG headcount 2024"}, "r1")),
                ai("Meta 67317, Apple 164000"),
            ]
        ),
        tools=[web_search],
        name="research_expert",
        prompt="You are a world class researcher with access to web search. Do not do any math.",
    )
    math = create_react_agent(
        model=ScriptedChatModel(
            replies=[ai("", call("add", {"a": 67317, "b": 164000}, "m1")), ai("231317")]
        ),
        tools=[add],
        name="math_expert",
        prompt="You are a math expert. Always use one tool at a time.",
    )
    workflow = create_supervisor(
        [research, math],
        model=ScriptedChatModel(
            replies=[
                ai("", call("transfer_to_research_expert", {}, "s1")),
                ai("", call("transfer_to_math_expert", {}, "s2")),
                ai("Together: 231317 employees."),
            ]
        ),
        prompt=(
            "You are a team supervisor managing a research expert and a math expert. "
            "For current events, use research_agent. For math problems, use math_agent."
        ),
    )
    return workflow.compile()


SUPERVISOR_INPUTS = [
    {"messages": [{"role": "user", "content": "Meta plus Apple headcount in 2024?"}]}
]


def agent() -> Any:
    """LangChain 1.x's create_agent with a tool, a system prompt and a checkpointer."""
    from fakes import ScriptedChatModel, ai, call
    from langchain.agents import create_agent
    from langgraph.checkpoint.memory import InMemorySaver

    def get_weather(city: str) -> str:
        """Get the weather for a city."""
        return f"It's always sunny in {city}!"

    model = ScriptedChatModel(
        replies=[
            ai("", call("get_weather", {"city": "SF"}, "w1")),
            ai("Sunny in SF."),
            ai("You asked about SF."),
        ]
    )
    return create_agent(
        model,
        tools=[get_weather],
        system_prompt="You are a helpful assistant",
        checkpointer=InMemorySaver(),
    )


AGENT_INPUTS = [
    {"messages": [{"role": "user", "content": "what is the weather in sf"}]},
    {"messages": [{"role": "user", "content": "what did I ask?"}]},
]


def run_all() -> dict[str, Any]:
    """Every app's turns and ``updates`` chunks (each run on a fresh app)."""
    config = {"configurable": {"thread_id": "1"}}
    out: dict[str, Any] = {}
    app, workflow = swarm()
    out["swarm"] = _turns(app, SWARM_INPUTS, config)
    out["swarm"]["updates"] = _updates(swarm()[0], SWARM_INPUTS, config)
    out["swarm"]["active_agent_in_schema"] = (
        "active_agent" in workflow.schemas[workflow.state_schema]
    )
    out["supervisor"] = _turns(supervisor(), SUPERVISOR_INPUTS, {})
    out["supervisor"]["updates"] = _updates(supervisor(), SUPERVISOR_INPUTS, {})
    out["agent"] = _turns(agent(), AGENT_INPUTS, config)
    out["agent"]["updates"] = _updates(agent(), AGENT_INPUTS, config)
    return out


def main() -> int:
    if "--alias" in sys.argv:
        from stategraph.compat import install_langgraph_alias

        install_langgraph_alias()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from normalize import Masker

        print(Masker().text(json.dumps(run_all(), indent=1, sort_keys=True)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
