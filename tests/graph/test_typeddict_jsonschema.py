"""JSON schemas of graphs whose state is a ``typing.TypedDict``, on every Python.

pydantic refuses ``typing.TypedDict`` before Python 3.12, so ``get_input_jsonschema``
failed on 3.10/3.11 for most graphs (LangGraph fails the same way). The schema must be
the one the same state declared with ``typing_extensions.TypedDict`` gives.
"""

from __future__ import annotations

import json
import operator
import typing
from typing import Annotated, Any

import typing_extensions

from stategraph.graph import START, StateGraph


class Address(typing.TypedDict):
    """Where to ship."""

    city: str
    zip: typing_extensions.NotRequired[str]


class Order(typing.TypedDict, total=False):
    items: Annotated[list[str], operator.add]
    ship_to: Address | None
    notes: typing_extensions.Required[str]


class AddressTE(typing_extensions.TypedDict):
    """Where to ship."""

    city: str
    zip: typing_extensions.NotRequired[str]


class OrderTE(typing_extensions.TypedDict, total=False):
    items: Annotated[list[str], operator.add]
    ship_to: AddressTE | None
    notes: typing_extensions.Required[str]


def _schema(state: Any, which: str) -> dict[str, Any]:
    g = StateGraph(state)
    g.add_node("n", lambda s: {})
    g.add_edge(START, "n")
    app = g.compile()
    return getattr(app, which)()


def _renamed(schema: dict[str, Any]) -> dict[str, Any]:
    text = json.dumps(schema).replace("AddressTE", "Address").replace("OrderTE", "Order")
    return json.loads(text)


def test_input_and_output_schemas_of_a_typing_typeddict_state() -> None:
    for which in ("get_input_jsonschema", "get_output_jsonschema"):
        got = _schema(Order, which)
        assert got == _renamed(_schema(OrderTE, which))
        assert got["required"] == ["notes"]
        assert got["$defs"]["Address"]["required"] == ["city"]
        assert got["$defs"]["Address"]["description"] == "Where to ship."


def test_a_typing_typeddict_context_schema() -> None:
    g = StateGraph(OrderTE, context_schema=Address)
    g.add_node("n", lambda s: {})
    g.add_edge(START, "n")
    got = g.compile().get_context_jsonschema()
    assert got is not None and got["title"] == "Address" and got["required"] == ["city"]
