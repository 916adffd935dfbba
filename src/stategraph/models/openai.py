"""``ChatOpenAI``: OpenAI's Chat Completions API as a stategraph chat model.

Talks through the official ``openai`` SDK (optional extra ``openai``: ``pip install
'stategraph[openai]'``). Build it with langchain-openai's arguments, or hand it a
client you configured yourself (Azure or compatible endpoints, proxies...)::

    from stategraph.models.openai import ChatOpenAI

    model = ChatOpenAI(model="gpt-4o-mini", temperature=0)  # key from OPENAI_API_KEY
    model = ChatOpenAI(model="local", base_url="http://localhost:8000/v1", api_key="-")
    model = ChatOpenAI(openai.OpenAI(), model="gpt-4o-mini")  # a ready client
    agent = create_react_agent(model, [search])

Messages, tools and tool calls, streaming (text and tool-call deltas), token usage,
sync and async (pass an ``AsyncOpenAI`` as ``async_client``, or as the only client).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from stategraph.messages import AIMessage, AIMessageChunk
from stategraph.models._clients import SDK_ALIASES, ClientSettings
from stategraph.models._clients import one_of as _one_of
from stategraph.models._sdk import SdkChatModel
from stategraph.models._sdk import sdk_field as _get
from stategraph.models._tools import ToolSpec

__all__ = ["ChatOpenAI", "to_openai_messages", "to_openai_tools"]


def _text_blocks(content: Any) -> Any:
    """Content as OpenAI wants it: a string, or a list of typed parts."""
    if isinstance(content, str):
        return content
    parts: list[Any] = []
    for block in content:
        if isinstance(block, str):
            parts.append({"type": "text", "text": block})
        elif isinstance(block, dict) and block.get("type") == "tool_use":
            continue  # tool calls travel in tool_calls
        else:
            parts.append(block)
    return parts


def _tool_call_wire(call: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "id": call.get("id"),
        "type": "function",
        "function": {"name": call["name"], "arguments": json.dumps(call.get("args") or {})},
    }


def _message_wire(message: Any) -> dict[str, Any]:
    raw_kind = str(getattr(message, "type", ""))
    kind = {"AIMessageChunk": "ai", "HumanMessageChunk": "human", "ToolMessageChunk": "tool"}.get(
        raw_kind, raw_kind
    )
    content = getattr(message, "content", "")
    name = getattr(message, "name", None)
    extra = getattr(message, "additional_kwargs", None) or {}
    wire: dict[str, Any]
    if kind == "system":
        role = "developer" if extra.get("__openai_role__") == "developer" else "system"
        wire = {"role": role, "content": _text_blocks(content)}
    elif kind == "human":
        wire = {"role": "user", "content": _text_blocks(content)}
    elif kind == "ai":
        calls = list(getattr(message, "tool_calls", None) or [])
        text = _text_blocks(content)
        wire = {"role": "assistant", "content": text if text else None}
        if calls:
            wire["tool_calls"] = [_tool_call_wire(c) for c in calls]
    elif kind == "tool":
        wire = {
            "role": "tool",
            "tool_call_id": getattr(message, "tool_call_id", None),
            "content": content if isinstance(content, str) else _text_blocks(content),
        }
    elif kind == "chat":
        wire = {"role": getattr(message, "role", "user"), "content": _text_blocks(content)}
    else:
        raise ValueError(
            f"ChatOpenAI cannot send a message of type {kind!r} ({type(message).__name__}); "
            "send system, human, ai, tool or chat messages."
        )
    if name and kind in ("human", "ai", "system"):
        wire["name"] = name
    return wire


def to_openai_messages(messages: list[Any]) -> list[dict[str, Any]]:
    """Messages in Chat Completions wire format (``role``, ``content``, ``tool_calls``...)."""
    return [_message_wire(m) for m in messages]


def to_openai_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    """Neutral tool specs as Chat Completions ``tools``."""
    return [{"type": "function", "function": dict(spec)} for spec in tools]


def _tool_choice(choice: Any) -> Any:
    if choice is None or isinstance(choice, dict):
        return choice
    if choice in ("auto", "none", "required"):
        return choice
    if choice in ("any", True):
        return "required"
    if isinstance(choice, str):
        return {"type": "function", "function": {"name": choice}}
    raise ValueError(
        f"ChatOpenAI got tool_choice={choice!r}; use 'auto', 'none', 'required'/'any' or a "
        "tool name."
    )


def _usage(usage: Any) -> dict[str, Any] | None:
    if usage is None:
        return None
    prompt = _get(usage, "prompt_tokens", 0) or 0
    completion = _get(usage, "completion_tokens", 0) or 0
    result: dict[str, Any] = {
        "input_tokens": prompt,
        "output_tokens": completion,
        "total_tokens": _get(usage, "total_tokens", prompt + completion) or prompt + completion,
    }
    cached = _get(_get(usage, "prompt_tokens_details"), "cached_tokens")
    if cached is not None:
        result["input_token_details"] = {"cache_read": cached}
    reasoning = _get(_get(usage, "completion_tokens_details"), "reasoning_tokens")
    if reasoning is not None:
        result["output_token_details"] = {"reasoning": reasoning}
    return result


def _parse_calls(raw_calls: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    calls: list[dict[str, Any]] = []
    invalid: list[dict[str, Any]] = []
    for raw in raw_calls or ():
        function = _get(raw, "function")
        name = _get(function, "name")
        arguments = _get(function, "arguments") or ""
        error: str | None
        try:
            args = json.loads(arguments) if arguments else {}
        except ValueError as exc:
            args, error = None, f"arguments are not valid JSON: {exc}"
        else:
            error = None if isinstance(args, dict) else "arguments are not a JSON object"
        if error is None:
            calls.append({"name": name, "args": args, "id": _get(raw, "id")})
        else:
            invalid.append({"name": name, "args": arguments, "id": _get(raw, "id"), "error": error})
    return calls, invalid


def _response_message(response: Any) -> AIMessage:
    choices = _get(response, "choices") or []
    if not choices:
        raise ValueError(f"OpenAI returned no choices (response id {_get(response, 'id')!r}).")
    choice = choices[0]
    message = _get(choice, "message")
    calls, invalid = _parse_calls(_get(message, "tool_calls"))
    metadata = {
        "model_name": _get(response, "model"),
        "finish_reason": _get(choice, "finish_reason"),
        "system_fingerprint": _get(response, "system_fingerprint"),
        "model_provider": "openai",
    }
    extra: dict[str, Any] = {}
    refusal = _get(message, "refusal")
    if refusal:
        extra["refusal"] = refusal
    return AIMessage(
        _get(message, "content") or "",
        id=_get(response, "id"),
        tool_calls=calls,  # type: ignore[arg-type]
        invalid_tool_calls=invalid,  # type: ignore[arg-type]
        usage_metadata=_usage(_get(response, "usage")),  # type: ignore[arg-type]
        response_metadata={k: v for k, v in metadata.items() if v is not None},
        additional_kwargs=extra,
    )


def _chunk_message(event: Any) -> AIMessageChunk | None:
    """One streamed ``ChatCompletionChunk`` as an ``AIMessageChunk`` (None if empty)."""
    choices = _get(event, "choices") or []
    usage = _usage(_get(event, "usage"))
    if not choices:
        if usage is None:
            return None
        return AIMessageChunk("", id=_get(event, "id"), usage_metadata=usage)  # type: ignore[arg-type]
    choice = choices[0]
    delta = _get(choice, "delta")
    pieces = [
        {
            "name": _get(_get(raw, "function"), "name"),
            "args": _get(_get(raw, "function"), "arguments"),
            "id": _get(raw, "id"),
            "index": _get(raw, "index"),
        }
        for raw in _get(delta, "tool_calls") or ()
    ]
    metadata: dict[str, Any] = {}
    finish = _get(choice, "finish_reason")
    if finish is not None:
        metadata = {
            "finish_reason": finish,
            "model_name": _get(event, "model"),
            "system_fingerprint": _get(event, "system_fingerprint"),
            "model_provider": "openai",
        }
        metadata = {k: v for k, v in metadata.items() if v is not None}
    return AIMessageChunk(
        _get(delta, "content") or "",
        id=_get(event, "id"),
        tool_call_chunks=pieces,  # type: ignore[arg-type]
        response_metadata=metadata,
        usage_metadata=usage,  # type: ignore[arg-type]
    )


def _is_async_client(client: Any) -> bool:
    """Whether ``client`` is an async SDK client (``AsyncOpenAI``, ``AsyncAzureOpenAI``...)."""
    import inspect

    if type(client).__name__.startswith("Async"):
        return True
    create = getattr(getattr(getattr(client, "chat", None), "completions", None), "create", None)
    return create is not None and inspect.iscoroutinefunction(inspect.unwrap(create))


_SETTINGS = ClientSettings(
    adapter="ChatOpenAI",
    module="openai",
    sync_class="OpenAI",
    async_class="AsyncOpenAI",
    extra="openai",
    aliases={
        "api_key": ("api_key", "openai_api_key"),
        "base_url": ("base_url", "openai_api_base"),
        "organization": ("organization", "openai_organization"),
        "timeout": ("timeout", "request_timeout"),
        "default_query": ("default_query",),
        **SDK_ALIASES,
    },
)


class ChatOpenAI(SdkChatModel):
    """A chat model over OpenAI's Chat Completions endpoint, through the ``openai`` SDK.

    Build it as with langchain-openai: ``ChatOpenAI(model="gpt-4o-mini", api_key=...,
    base_url=..., temperature=0, max_tokens=..., timeout=..., max_retries=...,
    default_headers=...)`` (also ``organization``, ``default_query``, ``http_client``,
    ``http_async_client`` and the aliases ``model_name``, ``openai_api_key``,
    ``openai_api_base``, ``openai_organization``, ``request_timeout``,
    ``max_completion_tokens``); it then builds an ``openai.OpenAI`` and an
    ``openai.AsyncOpenAI`` client itself (settings left out come from the SDK's
    defaults and environment, e.g. ``OPENAI_API_KEY``).

    Or pass a ready client first: ``client`` is an ``openai.OpenAI`` (or
    ``AsyncOpenAI``) instance; ``async_client`` serves ``ainvoke``/``astream`` when given
    (otherwise async calls run the sync client in a worker thread, or use ``client`` if
    it is the async one). ``model`` and the sampling options (``temperature``,
    ``max_tokens``, ``stop``, ``model_kwargs``...) are sent with each request; ``extra``
    holds any other request parameter.
    """

    provider = "openai"
    _settings = _SETTINGS
    _example_model = "gpt-4o-mini"

    def __init__(
        self,
        client: Any = None,
        *,
        model: str | None = None,
        async_client: Any = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        stream_usage: bool = True,
        tags: list[str] | None = None,
        name: str | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(tags=tags, name=name)
        model = _one_of(model, extra, "model_name", "model")
        max_tokens = _one_of(max_tokens, extra, "max_completion_tokens", "max_tokens")
        self._connect(model, client, async_client, extra)
        self.params: dict[str, Any] = dict(extra.pop("model_kwargs", None) or {})
        self.params.update(extra)
        if temperature is not None:
            self.params["temperature"] = temperature
        if max_tokens is not None:
            self.params["max_tokens"] = max_tokens
        self.stream_usage = stream_usage

    def _request(self, messages: list[Any], tools: list[ToolSpec], tool_choice: Any) -> dict:
        request: dict[str, Any] = {
            "model": self.model_name,
            "messages": to_openai_messages(messages),
            **self.params,
        }
        if tools:
            request["tools"] = to_openai_tools(tools)
            choice = _tool_choice(tool_choice)
            if choice is not None:
                request["tool_choice"] = choice
        return request

    def _is_async_client(self, client: Any) -> bool:
        return _is_async_client(client)

    def _create(self, client: Any) -> Any:
        return client.chat.completions.create

    def _reply(self, response: Any) -> AIMessage:
        return _response_message(response)

    def _chunk_reader(self) -> Any:
        return _chunk_message

    def _streaming(self, request: dict[str, Any]) -> None:
        if self.stream_usage:
            request.setdefault("stream_options", {"include_usage": True})
