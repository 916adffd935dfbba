"""Tool descriptions for chat models: whatever ``bind_tools`` gets, as one neutral spec.

The neutral spec is ``{"name", "description", "parameters"}`` (``parameters`` is a JSON
schema object). Adapters turn it into their provider's wire format.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["ToolSpec", "tool_spec", "tool_specs"]

ToolSpec = dict[str, Any]
"""``{"name": str, "description": str, "parameters": dict}``."""

_EMPTY_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}}


def _from_mapping(tool: Mapping[str, Any]) -> ToolSpec:
    if tool.get("type") == "function" and isinstance(tool.get("function"), Mapping):
        tool = tool["function"]  # OpenAI's {"type": "function", "function": {...}}
    name = tool.get("name")
    if not isinstance(name, str) or not name:
        raise ValueError(
            f"bind_tools got the tool dict {dict(tool)!r:.200} without a 'name'; describe a "
            'tool as {"name": ..., "description": ..., "parameters": <JSON schema>}.'
        )
    parameters = tool.get("parameters", tool.get("input_schema", _EMPTY_PARAMETERS))
    return {
        "name": name,
        "description": str(tool.get("description") or ""),
        "parameters": dict(parameters),
    }


def _schema_of(model: Any) -> dict[str, Any]:
    schema = dict(model.model_json_schema())
    schema.pop("title", None)
    schema.pop("description", None)
    return schema


def tool_spec(tool: Any) -> ToolSpec:
    """Describe ``tool`` for a model.

    Accepts a dict (neutral, OpenAI or Anthropic shape), a stategraph
    :class:`~stategraph.prebuilt.Tool`, a plain function (its name, docstring and
    signature), a pydantic model class (a "structured output" tool named after it), or
    any object with ``name``, ``description`` and a pydantic ``tool_call_schema`` /
    ``args_schema`` (langchain-core tools).
    """
    if isinstance(tool, Mapping):
        return _from_mapping(tool)
    function_schema = getattr(tool, "function_schema", None)
    if callable(function_schema) and hasattr(tool, "name"):
        return _from_mapping(function_schema())
    if isinstance(tool, type) and hasattr(tool, "model_json_schema"):
        return {
            "name": tool.__name__,
            "description": (tool.__doc__ or "").strip(),
            "parameters": _schema_of(tool),
        }
    name = getattr(tool, "name", None)
    if (isinstance(name, str) and not callable(tool)) or hasattr(tool, "tool_call_schema"):
        schema = getattr(tool, "tool_call_schema", None) or getattr(tool, "args_schema", None)
        if isinstance(schema, Mapping):
            parameters: dict[str, Any] = dict(schema)
        elif hasattr(schema, "model_json_schema"):
            parameters = _schema_of(schema)
        else:
            parameters = dict(_EMPTY_PARAMETERS)
        return {
            "name": str(name),
            "description": str(getattr(tool, "description", "") or ""),
            "parameters": parameters,
        }
    if callable(tool):
        from stategraph.prebuilt._tools import Tool

        return _from_mapping(Tool.from_function(tool).function_schema())
    raise TypeError(
        f"bind_tools cannot describe {tool!r:.200} as a tool; pass functions, "
        "stategraph Tools, pydantic models, tool dicts or langchain-core tools."
    )


def tool_specs(tools: Any) -> list[ToolSpec]:
    """:func:`tool_spec` of each tool, with duplicate names rejected."""
    specs = [tool_spec(t) for t in tools]
    names = [s["name"] for s in specs]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"bind_tools got several tools named {duplicates}; names must be unique.")
    return specs
