"""The Tool dataclass, the @tool decorator, argument schemas and injection markers."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any, Optional

import pytest
from pydantic import BaseModel, Field

from stategraph.prebuilt import (
    InjectedState,
    InjectedStore,
    InjectedToolArg,
    InjectedToolCallId,
    Tool,
    ToolInvocationError,
    tool,
)
from stategraph.prebuilt._injection import Injection, find_injections, injection_of
from stategraph.store.base import BaseStore


def multiply(a: int, b: float = 2.0) -> float:
    """Multiply two numbers.

    Returns the product.
    """
    return a * b


async def fetch(url: str) -> str:
    """Fetch a URL."""
    await asyncio.sleep(0)
    return f"<{url}>"


def with_injections(
    query: str,
    state: Annotated[dict, InjectedState],
    user: Annotated[str, InjectedState("user")],
    store: Annotated[BaseStore, InjectedStore()],
    call_id: Annotated[str, InjectedToolCallId],
    secret: Annotated[Optional[str], InjectedToolArg] = None,
) -> str:
    """Search with context."""
    return query


def test_from_function_uses_name_docstring_and_signature() -> None:
    t = Tool.from_function(multiply)
    assert t.name == "multiply"
    assert t.description == "Multiply two numbers.\n\nReturns the product."
    assert t.func is multiply
    assert t.is_async is False
    assert t.json_schema() == {
        "title": "multiply",
        "description": "Multiply two numbers.\n\nReturns the product.",
        "type": "object",
        "properties": {
            "a": {"title": "A", "type": "integer"},
            "b": {"default": 2.0, "title": "B", "type": "number"},
        },
        "required": ["a"],
    }


def test_function_schema_is_openai_style() -> None:
    assert tool(multiply).function_schema() == {
        "name": "multiply",
        "description": "Multiply two numbers.\n\nReturns the product.",
        "parameters": {
            "type": "object",
            "properties": {
                "a": {"title": "A", "type": "integer"},
                "b": {"default": 2.0, "title": "B", "type": "number"},
            },
            "required": ["a"],
        },
    }


def test_decorator_forms() -> None:
    bare = tool(multiply)
    assert isinstance(bare, Tool) and bare.name == "multiply"

    @tool("search_web")
    def search(q: str) -> str:
        """Look it up."""
        return q

    assert search.name == "search_web" and search.description == "Look it up."

    @tool(description="custom", return_direct=True)
    def done(x: int) -> int:
        return x

    assert (done.name, done.description, done.return_direct) == ("done", "custom", True)
    assert done.invoke({"x": "7"}) == 7


def test_invoke_validates_and_coerces() -> None:
    t = tool(multiply)
    assert t.invoke({"a": "3"}) == 6.0
    assert t.invoke({"a": 3, "b": "0.5"}) == 1.5
    with pytest.raises(ToolInvocationError) as info:
        t.invoke({"a": "three"})
    err = info.value
    assert err.tool_name == "multiply"
    assert err.tool_kwargs == {"a": "three"}
    assert str(err) == (
        "Error invoking tool 'multiply' with kwargs {'a': 'three'} with error:\n"
        " a: Input should be a valid integer, unable to parse string as an integer\n"
        " Please fix the error and try again."
    )


def test_missing_argument_lists_every_error() -> None:
    with pytest.raises(ToolInvocationError) as info:
        tool(multiply).invoke({"b": "x"})
    assert info.value.message == (
        "Error invoking tool 'multiply' with kwargs {'b': 'x'} with error:\n"
        " a: Field required\n"
        "b: Input should be a valid number, unable to parse string as a number\n"
        " Please fix the error and try again."
    )


def test_defaults_of_the_function_apply_when_omitted() -> None:
    seen: list[Any] = []

    def remember(items: list | None = None) -> int:
        """Count."""
        seen.append(items)
        return 0

    tool(remember).invoke({})
    assert seen == [None]


def test_async_tool_invoke_and_ainvoke() -> None:
    t = tool(fetch)
    assert t.is_async is True
    with pytest.raises(TypeError, match="Tool 'fetch' is async"):
        t.invoke({"url": "x"})
    assert asyncio.run(t.ainvoke({"url": "x"})) == "<x>"


async def test_sync_tool_ainvoke_runs_in_a_thread() -> None:
    import threading

    def where() -> str:
        """Thread name."""
        return threading.current_thread().name

    name = await tool(where).ainvoke({})
    assert name != threading.current_thread().name


def test_pydantic_args_schema() -> None:
    class Args(BaseModel):
        city: str = Field(description="City name")
        days: int = 1

    t = Tool(
        name="weather",
        description="Forecast.",
        func=lambda city, days: f"{city}:{days}",
        args_schema=Args,
    )
    assert t.invoke({"city": "Oslo", "days": "3"}) == "Oslo:3"
    assert t.invoke({"city": "Rome"}) == "Rome:1"
    schema = t.json_schema()
    assert schema["properties"]["city"] == {
        "description": "City name",
        "title": "City",
        "type": "string",
    }
    assert schema["required"] == ["city"]
    with pytest.raises(ToolInvocationError):
        t.invoke({"days": 2})


def test_dict_args_schema_is_shown_not_validated() -> None:
    spec = {"type": "object", "properties": {"q": {"type": "string"}}}
    t = Tool(name="raw", func=lambda **kw: sorted(kw), args_schema=spec)
    assert t.json_schema() == spec
    assert t.invoke({"q": 1, "extra": 2}) == ["extra", "q"]


def test_var_keyword_function_accepts_extra_arguments() -> None:
    def anything(base: int, **rest: Any) -> dict:
        """Echo."""
        return {"base": base, **rest}

    assert tool(anything).invoke({"base": "1", "x": 2}) == {"base": 1, "x": 2}


def test_content_and_artifact_requires_valid_format() -> None:
    with pytest.raises(ValueError, match="response_format='bogus'"):
        Tool(name="x", func=multiply, response_format="bogus")  # type: ignore[arg-type]


def test_invalid_tools_are_rejected() -> None:
    with pytest.raises(ValueError, match="non-empty str name"):
        Tool(name="", func=multiply)
    with pytest.raises(TypeError, match="needs a callable func"):
        Tool(name="x", func=None)
    with pytest.raises(ValueError, match="Cannot name the tool"):
        Tool.from_function(lambda x: x)
    with pytest.raises(TypeError, match="args_schema"):
        Tool(name="x", func=multiply, args_schema=int).json_schema()
    with pytest.raises(TypeError, match="takes a dict of arguments"):
        tool(multiply).invoke([1])  # type: ignore[arg-type]


def test_injected_parameters_are_hidden_from_the_schema() -> None:
    t = tool(with_injections)
    assert t.json_schema()["properties"] == {"query": {"title": "Query", "type": "string"}}
    assert t.json_schema()["required"] == ["query"]
    assert t.injected == {
        "state": Injection("state"),
        "user": Injection("state", "user"),
        "store": Injection("store"),
        "call_id": Injection("call_id"),
        "secret": Injection("none"),
    }


def test_injected_values_pass_through_validation_unchanged() -> None:
    marker = object()

    def grab(x: int, state: Annotated[dict, InjectedState]) -> Any:
        """Grab."""
        return x, state

    assert tool(grab).invoke({"x": "5", "state": marker}) == (5, marker)


def test_injection_of_annotations() -> None:
    assert injection_of(int) is None
    assert injection_of(Annotated[int, "doc"]) is None
    assert injection_of(Annotated[dict, InjectedState]) == Injection("state")
    assert injection_of(Annotated[str, InjectedState("k")]) == Injection("state", "k")
    assert injection_of(Optional[Annotated[str, InjectedToolCallId]]) == Injection("call_id")
    assert injection_of(Annotated[Any, InjectedStore]) == Injection("store")
    assert repr(InjectedState("k")) == "InjectedState('k')"
    assert repr(InjectedState()) == "InjectedState()"
    assert repr(InjectedStore()) == "InjectedStore()"


def test_find_injections_resolves_string_annotations() -> None:
    # this module uses ``from __future__ import annotations``: hints are strings
    assert find_injections(with_injections)["user"] == Injection("state", "user")
