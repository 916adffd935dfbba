"""Tools: the :class:`Tool` dataclass, the :func:`tool` decorator and argument validation.

A tool the prebuilt components accept is one of:

* a plain function, sync or ``async`` (name ``__name__``, description its docstring,
  arguments its parameters, type hints validated and coerced with pydantic);
* a :class:`Tool` (what :func:`tool` builds);
* any object with a ``name`` and ``invoke(args)`` and/or ``ainvoke(args)`` (duck-typed,
  so e.g. langchain-core tools work unchanged).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, overload

from stategraph.prebuilt._injection import Injection, find_injections, resolved_hints

__all__ = ["Tool", "tool", "ToolInvocationError", "is_async_only"]


class ToolInvocationError(Exception):
    """The model called a tool with arguments that fail the tool's argument schema.

    ``tool_name`` and ``tool_kwargs`` name the call; ``source`` is the underlying
    validation error. The default error handling of
    :class:`~stategraph.prebuilt.ToolNode` turns this error (and only this one) into an
    error ``ToolMessage`` so the model can retry with fixed arguments.
    """

    def __init__(self, tool_name: str, tool_kwargs: Mapping[str, Any], source: Exception) -> None:
        self.tool_name = tool_name
        self.tool_kwargs = dict(tool_kwargs)
        self.source = source
        details = _describe_validation_error(source)
        self.message = (
            f"Error invoking tool '{tool_name}' with kwargs {self.tool_kwargs} with error:\n"
            f" {details}\n Please fix the error and try again."
        )
        super().__init__(self.message)


def _describe_validation_error(exc: Exception) -> str:
    errors = getattr(exc, "errors", None)
    if not callable(errors):
        return str(exc)
    try:
        items = errors(include_url=False)
    except TypeError:
        items = errors()
    lines = []
    for item in items:
        loc = ".".join(str(part) for part in item.get("loc", ()))
        lines.append(f"{loc}: {item.get('msg', '')}" if loc else str(item.get("msg", "")))
    return "\n".join(lines) or str(exc)


@dataclass
class Tool:
    """A named function the model can call, with a description and an argument schema.

    ``func`` may be sync or ``async``. ``args_schema`` is optional: a pydantic model
    class (arguments are validated with it), a JSON-schema dict (shown to the model,
    not validated), or ``None`` to derive the schema from ``func``'s signature and type
    hints. Parameters annotated with :class:`~stategraph.prebuilt.InjectedState`,
    :class:`~stategraph.prebuilt.InjectedStore` or
    :class:`~stategraph.prebuilt.InjectedToolCallId` are left out of the schema and
    filled by the :class:`~stategraph.prebuilt.ToolNode`.

    ``return_direct=True`` makes :func:`~stategraph.prebuilt.create_react_agent` stop
    after this tool instead of calling the model again. With
    ``response_format="content_and_artifact"`` the function returns ``(content,
    artifact)``; the artifact goes to ``ToolMessage.artifact`` and not to the model.
    """

    name: str
    description: str = ""
    func: Callable[..., Any] | None = None
    args_schema: Any = None
    return_direct: bool = False
    response_format: Literal["content", "content_and_artifact"] = "content"
    _injections: dict[str, Injection] = field(
        init=False, repr=False, compare=False, default_factory=dict
    )
    _model: Any = field(init=False, repr=False, compare=False, default=None)
    _accepts_extra: bool = field(init=False, repr=False, compare=False, default=False)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"A Tool needs a non-empty str name, got {self.name!r}.")
        if self.func is None or not callable(self.func):
            raise TypeError(f"Tool '{self.name}' needs a callable func, got {self.func!r}.")
        if self.response_format not in ("content", "content_and_artifact"):
            raise ValueError(
                f"Tool '{self.name}' has response_format={self.response_format!r}; use "
                "'content' or 'content_and_artifact'."
            )
        self._injections = find_injections(self.func)
        try:
            params = list(inspect.signature(self.func).parameters.values())
        except (TypeError, ValueError):
            params = []
        self._accepts_extra = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params)

    @classmethod
    def from_function(
        cls,
        func: Callable[..., Any],
        name: str | None = None,
        description: str | None = None,
        *,
        args_schema: Any = None,
        return_direct: bool = False,
        response_format: Literal["content", "content_and_artifact"] = "content",
    ) -> Tool:
        """Build a tool from ``func``: name ``__name__``, description its docstring."""
        tool_name = name or getattr(func, "__name__", None)
        if not tool_name or tool_name == "<lambda>":
            raise ValueError(
                f"Cannot name the tool for {func!r}: pass name=..., e.g. "
                "Tool.from_function(fn, name='search')."
            )
        return cls(
            name=tool_name,
            description=description if description is not None else inspect.getdoc(func) or "",
            func=func,
            args_schema=args_schema,
            return_direct=return_direct,
            response_format=response_format,
        )

    # ------------------------------------------------------------------ schema
    @property
    def is_async(self) -> bool:
        """True when ``func`` is a coroutine function (call :meth:`ainvoke`)."""
        return _is_coroutine_callable(self.func)

    @property
    def injected(self) -> dict[str, Injection]:
        """The parameters the tool node fills, by name."""
        return dict(self._injections)

    def _args_model(self) -> Any:
        """The pydantic model validating the model-facing arguments (built once)."""
        if self._model is not None:
            return self._model
        schema = self.args_schema
        if schema is not None and not isinstance(schema, Mapping):
            if not hasattr(schema, "model_validate"):
                raise TypeError(
                    f"Tool '{self.name}' has args_schema {schema!r}; use a pydantic model "
                    "class, a JSON-schema dict, or None."
                )
            self._model = schema
            return schema
        self._model = _signature_model(self.name, self.func, self._injections)  # type: ignore[arg-type]
        return self._model

    def json_schema(self) -> dict[str, Any]:
        """The JSON schema of the arguments the model must supply (injected ones hidden)."""
        if isinstance(self.args_schema, Mapping):
            return dict(self.args_schema)
        schema = dict(self._args_model().model_json_schema())
        props = schema.get("properties", {})
        hidden = set(self._injections)
        if hidden & set(props):
            schema["properties"] = {k: v for k, v in props.items() if k not in hidden}
            schema["required"] = [r for r in schema.get("required", []) if r not in hidden]
        schema["title"] = self.name
        if self.description:
            schema["description"] = self.description
        else:
            schema.pop("description", None)
        return schema

    def function_schema(self) -> dict[str, Any]:
        """``{"name", "description", "parameters"}``: the OpenAI-style function spec."""
        params = {k: v for k, v in self.json_schema().items() if k not in ("title", "description")}
        return {"name": self.name, "description": self.description, "parameters": params}

    # ------------------------------------------------------------------ calling
    def validate_args(self, args: Mapping[str, Any]) -> dict[str, Any]:
        """Validate and coerce the model-facing ``args``; injected keys pass through as given.

        Raises :class:`ToolInvocationError` when the arguments do not fit the schema.
        """
        if not isinstance(args, Mapping):
            raise TypeError(
                f"Tool '{self.name}' takes a dict of arguments, got {type(args).__name__}."
            )
        injected = {k: v for k, v in args.items() if k in self._injections}
        if isinstance(self.args_schema, Mapping):
            return dict(args)
        model_args = {k: v for k, v in args.items() if k not in self._injections}
        model = self._args_model()
        from pydantic import ValidationError

        try:
            parsed = model.model_validate(model_args)
        except ValidationError as exc:
            raise ToolInvocationError(self.name, model_args, exc) from exc
        # a derived schema mirrors the function's defaults: pass only what was given;
        # an explicit schema's defaults are the schema's, so pass every field
        names = parsed.model_fields_set if self.args_schema is None else type(parsed).model_fields
        values = {k: getattr(parsed, k) for k in names if hasattr(parsed, k)}
        if self._accepts_extra and parsed.model_extra:
            values.update(parsed.model_extra)
        values.update(injected)
        return values

    def invoke(self, args: Mapping[str, Any]) -> Any:
        """Validate ``args`` and call the function (sync tools only)."""
        if self.is_async:
            raise TypeError(
                f"Tool '{self.name}' is async; call `await tool.ainvoke(args)` or run the "
                "graph with ainvoke()/astream()."
            )
        func = self.func
        assert func is not None
        return func(**self.validate_args(args))

    async def ainvoke(self, args: Mapping[str, Any]) -> Any:
        """Validate ``args`` and await the function (sync functions run in a worker thread)."""
        kwargs = self.validate_args(args)
        func = self.func
        assert func is not None
        if self.is_async:
            return await func(**kwargs)
        import asyncio

        return await asyncio.to_thread(func, **kwargs)


def _is_coroutine_callable(func: Any) -> bool:
    if inspect.iscoroutinefunction(func):
        return True
    call = getattr(func, "__call__", None)  # noqa: B004
    return not inspect.isfunction(func) and inspect.iscoroutinefunction(call)


def _signature_model(name: str, func: Callable[..., Any], injections: Mapping[str, Any]) -> Any:
    """A pydantic model of ``func``'s model-facing parameters."""
    import warnings

    from pydantic import ConfigDict, create_model

    hints = resolved_hints(func)
    fields: dict[str, Any] = {}
    extra = "ignore"
    for param in inspect.signature(func).parameters.values():
        if param.name in injections or param.kind is inspect.Parameter.VAR_POSITIONAL:
            continue
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            extra = "allow"
            continue
        hint = hints.get(param.name, Any)
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (hint, default)
    config = ConfigDict(arbitrary_types_allowed=True, protected_namespaces=(), extra=extra)  # type: ignore[typeddict-item]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return create_model(name, __config__=config, **fields)


def is_async_only(obj: Any) -> bool:
    """True if ``obj`` (a function, :class:`Tool` or duck-typed tool) can only be awaited."""
    if isinstance(obj, Tool):
        return obj.is_async
    if callable(obj) and not hasattr(obj, "invoke") and not hasattr(obj, "ainvoke"):
        return _is_coroutine_callable(obj)
    if getattr(obj, "coroutine", None) is not None and getattr(obj, "func", False) is None:
        return True  # e.g. a langchain-core tool built from an async function only
    return not hasattr(obj, "invoke") and hasattr(obj, "ainvoke")


@overload
def tool(func: Callable[..., Any], /) -> Tool: ...


@overload
def tool(
    name: str | None = None,
    /,
    *,
    description: str | None = None,
    args_schema: Any = None,
    return_direct: bool = False,
    response_format: Literal["content", "content_and_artifact"] = "content",
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    func_or_name: Callable[..., Any] | str | None = None,
    /,
    *,
    description: str | None = None,
    args_schema: Any = None,
    return_direct: bool = False,
    response_format: Literal["content", "content_and_artifact"] = "content",
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Turn a function into a :class:`Tool`.

    Use bare (``@tool``), with a name (``@tool("search")``) or with options
    (``@tool(return_direct=True)``). The decorated name becomes the ``Tool``; call the
    original function as ``my_tool.func(...)``.
    """
    if callable(func_or_name) and not isinstance(func_or_name, str):
        return Tool.from_function(func_or_name)

    def decorate(func: Callable[..., Any]) -> Tool:
        return Tool.from_function(
            func,
            name=func_or_name if isinstance(func_or_name, str) else None,
            description=description,
            args_schema=args_schema,
            return_direct=return_direct,
            response_format=response_format,
        )

    return decorate
