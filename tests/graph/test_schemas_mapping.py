"""``StateGraph.schemas[schema]`` is a mapping of the schema's state keys, as in
LangGraph (issue 22, item 11: langgraph-swarm checks ``"active_agent" in
builder.schemas[builder.state_schema]``)."""

from __future__ import annotations

import operator
from typing import Annotated

from typing_extensions import TypedDict

from stategraph.channels import BinaryOperatorAggregate, LastValue
from stategraph.graph import StateGraph
from stategraph.managed import RemainingSteps


class State(TypedDict):
    messages: Annotated[list, operator.add]
    active_agent: str
    remaining_steps: RemainingSteps


class Input(TypedDict):
    active_agent: str


def test_schemas_map_each_schema_to_its_keys() -> None:
    builder = StateGraph(State, input_schema=Input)
    keys = builder.schemas[builder.state_schema]
    assert "active_agent" in keys and "nope" not in keys
    assert list(keys) == ["messages", "active_agent", "remaining_steps"]
    assert len(keys) == 3
    assert isinstance(keys["messages"], BinaryOperatorAggregate)
    assert isinstance(keys["active_agent"], LastValue)
    assert keys["remaining_steps"] is not None
    assert dict(builder.schemas[Input]).keys() == {"active_agent"}
    assert set(builder.schemas) == {State, Input}
    assert builder.schemas[State].channels["active_agent"] is keys["active_agent"]
