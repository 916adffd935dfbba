"""State schemas whose string annotations cannot be resolved."""

from __future__ import annotations
import __future__

import operator
from typing import Annotated

import pytest
from typing_extensions import TypedDict

from stategraph.graph import START, StateGraph

SCHEMA_IN_EXEC = """
import operator
from typing import Annotated
from typing_extensions import TypedDict

class Notes(TypedDict):
    topic: str
    notes: Annotated[list[str], operator.add]
"""


def test_an_unresolvable_reducer_annotation_is_an_error_not_a_silent_last_value():
    # exec'd code with postponed annotations: the class's module is not importable, so
    # "Annotated[list[str], operator.add]" stays a string nobody can evaluate
    namespace: dict[str, object] = {"__name__": "not_a_module"}
    flags = __future__.annotations.compiler_flag
    exec(compile(SCHEMA_IN_EXEC, "<doc>", "exec", flags=flags, dont_inherit=True), namespace)
    with pytest.raises(TypeError) as info:
        StateGraph(namespace["Notes"])
    message = str(info.value)
    assert "Notes" in message and "['notes']" in message and "module level" in message


class Resolved(TypedDict):
    notes: Annotated[list[str], operator.add]


def test_module_level_string_annotations_keep_their_reducer():
    builder = StateGraph(Resolved)
    builder.add_node("a", lambda s: {"notes": ["a"]})
    builder.add_edge(START, "a")
    assert builder.compile().invoke({"notes": ["x"]}) == {"notes": ["x", "a"]}
