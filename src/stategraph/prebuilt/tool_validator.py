"""``ValidationNode``: check the tool calls of the last AI message against schemas.

It does not run tools: each call's arguments are validated, and the node answers with
one ``ToolMessage`` per call — the validated arguments as JSON, or the validation error
(marked ``additional_kwargs={"is_error": True}``) so the model can be asked again. Useful
for extraction with a model that must produce output fitting a schema.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from stategraph.messages import ToolCall, ToolMessage
from stategraph.prebuilt._tool_node_parts import check_list, family_bridge

__all__ = ["ValidationNode", "default_format_error"]


def default_format_error(error: BaseException, call: ToolCall, schema: Any) -> str:
    """The error text sent back to the model: the validation error, then a request to fix it."""
    return f"{error}\n\nRespond after fixing all validation errors."


def _schema_of(item: Any) -> tuple[str, Any]:
    """``(tool name, pydantic model)`` for a model class, a tool object or a function."""
    if isinstance(item, type) and hasattr(item, "model_validate"):
        return item.__name__, item
    name = getattr(item, "name", None)
    schema = getattr(item, "args_schema", None)
    if isinstance(name, str) and schema is not None:
        if isinstance(schema, type) and hasattr(schema, "model_validate"):
            return name, schema
        args_model = getattr(item, "_args_model", None)
        if callable(args_model):
            return name, args_model()
    if hasattr(item, "_args_model") and isinstance(name, str):
        return name, item._args_model()
    if callable(item):
        from stategraph.prebuilt._tools import Tool

        tool = Tool.from_function(item)
        return tool.name, tool._args_model()
    raise TypeError(
        f"ValidationNode cannot validate against {item!r:.100}: pass pydantic model classes, "
        "functions (their signature is the schema) or tools with an args_schema."
    )


class ValidationNode:
    """Validates every tool call of the last ``AIMessage``; answers with ``ToolMessage`` s.

    ``schemas``: pydantic model classes (the tool name is the class name), functions
    (name and signature) or tool objects with a pydantic ``args_schema``. A valid call
    is answered with the validated arguments as JSON (``model_dump_json()``); an invalid
    one with ``format_error(error, call, schema)`` (default: the error text and "Respond
    after fixing all validation errors.") and ``additional_kwargs={"is_error": True}``.

    The input is a state with a ``messages`` list, or a list of messages; the output is
    ``{"messages": [...]}``, or a list for list input. A call naming no known schema
    raises ``KeyError`` naming it and the known names.
    """

    def __init__(
        self,
        schemas: Sequence[Any],
        *,
        format_error: Callable[[BaseException, ToolCall, Any], str] | None = None,
        name: str = "validation",
        tags: Sequence[str] | None = None,
    ) -> None:
        check_list(schemas, "ValidationNode", "schemas", "[MyModel]")
        self.name = name
        self.tags = list(tags or ())
        self.format_error = format_error or default_format_error
        self.schemas_by_name: dict[str, Any] = {}
        for item in schemas:
            tool_name, model = _schema_of(item)
            self.schemas_by_name[tool_name] = model

    def __repr__(self) -> str:
        return f"ValidationNode(schemas={list(self.schemas_by_name)!r}, name={self.name!r})"

    def _last_ai(self, input: Any) -> tuple[Any, bool]:
        if isinstance(input, list):
            messages, list_input = input, True
        elif isinstance(input, Mapping):
            messages, list_input = input.get("messages", []), False
        else:
            messages, list_input = getattr(input, "messages", []), False
        last = messages[-1] if messages else None
        if getattr(last, "type", None) != "ai":
            raise ValueError(
                f"ValidationNode '{self.name}': the last message is not an AIMessage "
                f"(got {type(last).__name__}); route to this node only after the model "
                "answered with tool calls."
            )
        return last, list_input

    def _validate(self, call: ToolCall) -> ToolMessage:
        schema = self.schemas_by_name.get(call["name"])
        if schema is None:
            raise KeyError(
                f"ValidationNode '{self.name}' has no schema for tool call "
                f"{call['name']!r}; known: {sorted(self.schemas_by_name)}."
            )
        call_id = "" if call.get("id") is None else str(call.get("id"))
        try:
            output = schema.model_validate(call.get("args") or {})
        except Exception as exc:
            return ToolMessage(
                self.format_error(exc, call, schema),
                name=call["name"],
                tool_call_id=call_id,
                additional_kwargs={"is_error": True},
            )
        return ToolMessage(output.model_dump_json(), name=call["name"], tool_call_id=call_id)

    def invoke(self, input: Any, config: Any = None) -> Any:
        """Validate the calls; ``{"messages": [ToolMessage, ...]}`` (a list for list input)."""
        last, list_input = self._last_ai(input)
        outputs: list[Any] = [self._validate(c) for c in getattr(last, "tool_calls", None) or []]
        bridge = family_bridge(last)
        if bridge is not None:
            outputs = [bridge.to_langchain(m) for m in outputs]
        return outputs if list_input else {"messages": outputs}

    async def ainvoke(self, input: Any, config: Any = None) -> Any:
        """Async :meth:`invoke` (validation is quick: it runs inline)."""
        return self.invoke(input, config)

    def __call__(self, input: Any) -> Any:
        """Validate the calls (this is what the graph calls)."""
        return self.invoke(input)
