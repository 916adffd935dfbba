"""Schemas a compiled graph reports: pydantic models and JSON schemas of its input,
output and context, named after the graph. Expected values were checked against
LangGraph 1.2 as a black box."""

from __future__ import annotations

import dataclasses
import operator
import warnings
from typing import Annotated, Any

import pytest
from pydantic import BaseModel
from typing_extensions import TypedDict

from stategraph.channels import EphemeralValue, LastValue, Topic
from stategraph.func import entrypoint
from stategraph.graph import START, StateGraph
from stategraph.pregel import NodeBuilder, Pregel
from stategraph.warnings import LangGraphDeprecatedSinceV10


class Notes(TypedDict):
    title: str
    tags: Annotated[list[str], operator.add]


class Title(TypedDict):
    title: str


class Tags(TypedDict):
    tags: list[str]


@dataclasses.dataclass
class Settings:
    depth: int
    mode: str = "fast"


def _noop(state: Any) -> dict[str, Any]:
    return {}


def _compiled(schema: Any, **kwargs: Any) -> Any:
    builder = StateGraph(schema, **kwargs)
    builder.add_node("noop", _noop)
    builder.add_edge(START, "noop")
    return builder.compile()


def _low_level(**kwargs: Any) -> Pregel:
    node = NodeBuilder().subscribe_only("count").write_to("result")
    return Pregel(
        nodes={"n": node},
        channels={
            "count": LastValue(int),
            "extra": EphemeralValue(Any),
            "result": LastValue(int),
            "items": Topic(str),
        },
        **kwargs,
    )


def test_low_level_single_channel_io_is_a_root_model_of_its_type() -> None:
    graph = _low_level(input_channels="count", output_channels="result")
    assert graph.get_input_jsonschema() == {"title": "LangGraphInput", "type": "integer"}
    assert graph.get_output_jsonschema() == {"title": "LangGraphOutput", "type": "integer"}
    assert graph.input_schema.model_validate(3).root == 3
    assert graph.get_context_jsonschema() is None


def test_low_level_channel_lists_give_one_optional_field_each() -> None:
    graph = _low_level(input_channels=["count", "extra"], output_channels=["result", "items"])
    assert graph.get_input_jsonschema() == {
        "title": "LangGraphInput",
        "type": "object",
        "properties": {
            "count": {"title": "Count", "type": "integer", "default": None},
            "extra": {"title": "Extra", "default": None},
        },
    }
    assert graph.get_output_jsonschema()["properties"]["items"] == {
        "title": "Items",
        "type": "array",
        "items": {"type": "string"},
        "default": None,
    }


def test_model_names_follow_the_graph_name_style() -> None:
    graph = _low_level(input_channels="count", output_channels="result", name="counter_graph")
    assert graph.get_name("Input") == "counter_graph_input"
    assert graph.get_input_jsonschema()["title"] == "counter_graph_input"
    assert _compiled(Notes).get_name("output") == "LangGraphOutput"


def test_context_schema_json() -> None:
    graph = _low_level(input_channels="count", output_channels="result", context_schema=Settings)
    assert graph.get_context_jsonschema() == {
        "title": "Settings",
        "type": "object",
        "properties": {
            "depth": {"title": "Depth", "type": "integer"},
            "mode": {"title": "Mode", "type": "string", "default": "fast"},
        },
        "required": ["depth"],
    }


def test_typed_dict_state_reports_its_own_schema() -> None:
    graph = _compiled(Notes)
    expected = {
        "title": "Notes",
        "type": "object",
        "properties": {
            "title": {"title": "Title", "type": "string"},
            "tags": {"title": "Tags", "type": "array", "items": {"type": "string"}},
        },
        "required": ["title", "tags"],
    }
    assert graph.get_input_jsonschema() == expected
    assert graph.get_output_jsonschema() == expected
    # the model of the input wraps the schema; the output model has optional fields
    assert graph.input_schema.__name__ == "LangGraphInput"
    assert graph.input_schema.model_validate({"title": "t", "tags": []}).root == {
        "title": "t",
        "tags": [],
    }
    assert graph.output_schema.model_json_schema()["properties"]["title"] == {
        "title": "Title",
        "type": "string",
        "default": None,
    }


def test_input_and_output_schemas_may_declare_a_reducer_key_plainly() -> None:
    graph = _compiled(Notes, input_schema=Title, output_schema=Tags)
    assert graph.get_input_jsonschema()["title"] == "Title"
    assert graph.get_output_jsonschema()["required"] == ["tags"]
    # the state's reducer still applies to the key
    builder = StateGraph(Notes, output_schema=Tags)
    builder.add_node("tag", lambda state: {"tags": ["b"]})
    builder.add_edge(START, "tag")
    assert builder.compile().invoke({"title": "x", "tags": ["a"]}) == {"tags": ["a", "b"]}


def test_a_reducer_on_a_plain_state_key_is_still_rejected() -> None:
    class Other(TypedDict):
        title: Annotated[str, operator.add]

    with pytest.raises(ValueError, match="title"):
        StateGraph(Notes, output_schema=Other)


def test_pydantic_state_is_its_own_model() -> None:
    class Form(BaseModel):
        name: str
        size: int = 1

    graph = _compiled(Form)
    assert graph.input_schema is Form
    assert graph.get_input_jsonschema() == Form.model_json_schema()


def test_dataclass_state_gets_a_model_with_its_defaults() -> None:
    graph = _compiled(Settings)
    assert graph.get_input_jsonschema() == {
        "title": "LangGraphInput",
        "type": "object",
        "properties": {
            "depth": {"title": "Depth", "type": "integer"},
            "mode": {"title": "Mode", "type": "string", "default": "fast"},
        },
        "required": ["depth"],
    }


def test_entrypoint_schemas_come_from_the_function_annotations() -> None:
    @entrypoint()
    def summarize(numbers: list[int]) -> list[str]:
        return [str(n) for n in numbers]

    assert summarize.get_input_jsonschema() == {
        "title": "LangGraphInput",
        "type": "array",
        "items": {"type": "integer"},
    }
    assert summarize.get_output_jsonschema() == {
        "title": "LangGraphOutput",
        "type": "array",
        "items": {"type": "string"},
    }

    @entrypoint()
    def keep(data: dict[str, Any], *, previous: Any = None) -> entrypoint.final[int, str]:
        return entrypoint.final(value=1, save="s")

    assert keep.get_output_jsonschema() == {"title": "LangGraphOutput", "type": "integer"}

    @entrypoint()
    def untyped(data):  # type: ignore[no-untyped-def]
        return data

    assert untyped.get_input_jsonschema() == {"title": "LangGraphInput"}
    assert untyped.invoke({"a": 1}) == {"a": 1}


def test_config_schema_is_deprecated_in_favour_of_the_context_schema() -> None:
    graph = _compiled(Notes, context_schema=Settings)
    with pytest.warns(LangGraphDeprecatedSinceV10, match="get_context_jsonschema"):
        model = graph.config_schema()
    assert model.model_json_schema()["properties"]["configurable"]["$ref"].endswith("Settings")
    with pytest.warns(LangGraphDeprecatedSinceV10, match="get_context_jsonschema"):
        assert "configurable" in graph.get_config_jsonschema()["properties"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert graph.get_context_jsonschema() is not None


@dataclasses.dataclass
class Form:
    name: str
    nickname: str | None
    score: Annotated[float | None, "note"]
    tags: list[str] = dataclasses.field(default_factory=list)
    must: str = dataclasses.field(default=...)  # type: ignore[assignment]


def test_dataclass_fields_that_admit_none_are_optional_and_ellipsis_is_required() -> None:
    schema = _compiled(Form).get_input_jsonschema()
    assert sorted(schema["required"]) == ["must", "name"]
    assert schema["properties"]["nickname"]["default"] is None
    assert sorted(schema["properties"]) == ["must", "name", "nickname", "score", "tags"]
