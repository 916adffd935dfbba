"""One calling convention for the three kinds of tools (function, ``Tool``, duck-typed)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stategraph.prebuilt._injection import Injection, find_injections
from stategraph.prebuilt._tools import Tool, ToolInvocationError, is_async_only

__all__ = ["ToolRunner", "as_runner"]


class ToolRunner:
    """Calls one tool with model arguments plus injected values, sync or async.

    ``obj`` is what the user gave (a :class:`Tool` for plain functions). Objects that
    expose a pydantic ``tool_call_schema`` (langchain-core tools) have the model's
    arguments validated before the call and are invoked with the full tool call dict,
    as LangGraph invokes them: they build their ``ToolMessage`` themselves (content,
    artifact, status), fill their injected call id and run config, and their own
    callback run reports that message.
    """

    __slots__ = (
        "async_only",
        "injections",
        "name",
        "obj",
        "public",
        "response_format",
        "return_direct",
        "takes_tool_call",
        "validator",
    )

    def __init__(self, obj: Any) -> None:
        self.obj = obj
        self.public: Any = obj
        """What ``ToolNode.tools_by_name`` shows for this tool (see :func:`as_runner`)."""
        self.name: str = obj.name
        self.async_only = is_async_only(obj)
        self.return_direct = bool(getattr(obj, "return_direct", False))
        self.response_format = getattr(obj, "response_format", "content")
        if isinstance(obj, Tool):
            self.injections: dict[str, Injection] = obj.injected
            self.validator: Any = None
            self.takes_tool_call = False
        else:
            if not type(obj).__module__.startswith("stategraph."):
                _load_langchain_bridge()
            self.injections = _duck_injections(obj)
            schema = getattr(obj, "tool_call_schema", None)
            self.validator = schema if hasattr(schema, "model_validate") else None
            self.takes_tool_call = self.validator is not None

    def __repr__(self) -> str:
        return f"ToolRunner({self.name!r})"

    def _prepare(self, args: dict[str, Any], call: Mapping[str, Any]) -> Any:
        if not self.takes_tool_call:
            return args
        return {"name": self.name, "args": args, "id": call.get("id"), "type": "tool_call"}

    def _invalid(self, args: dict[str, Any], error: Exception) -> Exception:
        """The error to raise for a LangChain tool that rejected ``args``: the model's
        arguments checked against the tool's call schema (a
        :class:`ToolInvocationError` when they are the problem), else ``error``.

        The tool validates its input itself, inside its own run, so its callbacks report
        the failing call as they do under LangGraph."""
        from pydantic import ValidationError

        if self.validator is None or not isinstance(error, ValidationError):
            return error
        try:
            self.validator.model_validate(args)
        except ValidationError as exc:
            model_args = {k: v for k, v in args.items() if k not in self.injections}
            return ToolInvocationError(self.name, model_args, exc)
        return error

    def call(self, args: dict[str, Any], call: Mapping[str, Any]) -> Any:
        """Run the tool synchronously."""
        if self.async_only:
            raise TypeError(
                f"Tool '{self.name}' is async-only and cannot run in a synchronous tool node. "
                "Run the graph with ainvoke()/astream(), or use AsyncToolNode."
            )
        payload = self._prepare(args, call)
        if self.takes_tool_call:
            try:
                return self.obj.invoke(payload, _langchain_config())
            except Exception as exc:
                invalid = self._invalid(args, exc)
                if invalid is exc:
                    raise
                raise invalid from exc
        return self.obj.invoke(payload)

    async def acall(self, args: dict[str, Any], call: Mapping[str, Any]) -> Any:
        """Run the tool on the event loop (sync-only tools run in a worker thread)."""
        payload = self._prepare(args, call)
        if isinstance(self.obj, Tool):
            return await self.obj.ainvoke(payload)
        config = _langchain_config() if self.takes_tool_call else None
        try:
            return await self._aexecute(payload, config)
        except Exception as exc:
            invalid = self._invalid(args, exc) if self.takes_tool_call else exc
            if invalid is exc:
                raise
            raise invalid from exc

    async def _aexecute(self, payload: Any, config: Any) -> Any:
        ainvoke = getattr(self.obj, "ainvoke", None)
        if ainvoke is not None:
            return await (ainvoke(payload, config) if config is not None else ainvoke(payload))
        import asyncio

        if config is not None:
            return await asyncio.to_thread(self.obj.invoke, payload, config)
        return await asyncio.to_thread(self.obj.invoke, payload)


# what a duck-typed tool (a langchain-core tool) cannot fill itself: langchain-core
# injects the tool call id and the run config on its own
_DUCK_KINDS = ("state", "store", "runtime")


def _duck_injections(obj: Any) -> dict[str, Injection]:
    found: dict[str, Injection] = {}
    for attr in ("func", "coroutine"):
        fn = getattr(obj, attr, None)
        if callable(fn):
            found.update(
                (name, spec)
                for name, spec in find_injections(fn).items()
                if spec.kind in _DUCK_KINDS
            )
    return found


def _load_langchain_bridge() -> None:
    """A LangChain tool returns stategraph ``Command`` s only once the bridge made them
    LangChain tool outputs (see :mod:`stategraph.interop.langchain._tool_types`)."""
    from stategraph._bridges import langchain_bridge

    langchain_bridge()


def _langchain_config() -> Any:
    """The run config a LangChain tool receives (its ``config`` parameter, callbacks,
    tags, metadata, configurable), as LangGraph hands it over."""
    from stategraph._bridges import langchain_bridge

    bridge = langchain_bridge()
    return bridge.runnable_config() if bridge is not None else None


def as_runner(obj: Any) -> ToolRunner:
    """Wrap a function, :class:`Tool` or duck-typed tool object in a :class:`ToolRunner`.

    A plain function runs as a :class:`Tool`; when the application uses langchain-core
    its ``public`` face is a LangChain tool of the same function.
    """
    if isinstance(obj, Tool):
        return ToolRunner(obj)
    has_protocol = hasattr(obj, "invoke") or hasattr(obj, "ainvoke")
    if has_protocol and isinstance(getattr(obj, "name", None), str):
        return ToolRunner(obj)
    if callable(obj):
        runner = ToolRunner(Tool.from_function(obj))
        from stategraph._bridges import langchain_bridge

        bridge = langchain_bridge()
        if bridge is not None:
            # langchain-core in use: the node shows the function as a LangChain tool, as
            # LangGraph does (a model can be bound to tools_by_name, as create_agent
            # does); the node still runs it as stategraph's Tool
            runner.public = bridge.as_langchain_tool(obj) or runner.obj
        return runner
    raise TypeError(
        f"Cannot use {obj!r} as a tool: pass a function, a stategraph.prebuilt.Tool, or an "
        "object with a str 'name' and an invoke(args) or ainvoke(args) method."
    )
