"""``ChatAnthropic``: Anthropic's Messages API as a stategraph chat model.

Talks through the official ``anthropic`` SDK (optional extra ``anthropic``: ``pip
install 'stategraph[anthropic]'``). Build it with langchain-anthropic's arguments, or
hand it a client you configured yourself::

    from stategraph.models.anthropic import ChatAnthropic

    model = ChatAnthropic(model="claude-sonnet-4-5", max_tokens=1024)  # ANTHROPIC_API_KEY
    model = ChatAnthropic(anthropic.Anthropic(), model="claude-sonnet-4-5")  # a ready client

System messages become the ``system`` parameter, tool results become ``tool_result``
blocks of a user turn (consecutive turns of one role are merged, as the API requires),
tool calls ``tool_use`` blocks. Streaming yields text and tool-input deltas as
``AIMessageChunk`` s; usage is reported. Sync and async (``AsyncAnthropic``).
"""

from __future__ import annotations

from typing import Any

from stategraph.messages import AIMessage, AIMessageChunk
from stategraph.messages._utils import content_text
from stategraph.models._clients import SDK_ALIASES, ClientSettings
from stategraph.models._clients import one_of as _one_of
from stategraph.models._sdk import SdkChatModel
from stategraph.models._sdk import sdk_field as _get
from stategraph.models._tools import ToolSpec

__all__ = ["ChatAnthropic", "to_anthropic_messages", "to_anthropic_tools"]

_CHUNK_KINDS = {"AIMessageChunk": "ai", "HumanMessageChunk": "human", "ToolMessageChunk": "tool"}


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    blocks: list[dict[str, Any]] = []
    for block in content:
        if isinstance(block, str):
            blocks.append({"type": "text", "text": block})
        elif isinstance(block, dict) and block.get("type") != "tool_use":
            blocks.append({k: v for k, v in block.items() if k != "index"})
    return blocks


def to_anthropic_messages(messages: list[Any]) -> tuple[str | None, list[dict[str, Any]]]:
    """``(system, messages)`` in Messages API wire format."""
    system: list[str] = []
    turns: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": list(blocks)})

    for message in messages:
        raw_kind = str(getattr(message, "type", ""))
        kind = _CHUNK_KINDS.get(raw_kind, raw_kind)
        content = getattr(message, "content", "")
        if kind == "system":
            system.append(content_text(content))
        elif kind == "human":
            add("user", _blocks(content))
        elif kind == "ai":
            blocks = _blocks(content)
            for call in getattr(message, "tool_calls", None) or ():
                blocks.append(
                    {
                        "type": "tool_use",
                        "id": call.get("id"),
                        "name": call["name"],
                        "input": call.get("args") or {},
                    }
                )
            add("assistant", blocks)
        elif kind == "tool":
            add(
                "user",
                [
                    {
                        "type": "tool_result",
                        "tool_use_id": getattr(message, "tool_call_id", None),
                        "content": content if isinstance(content, str) else _blocks(content),
                        **({"is_error": True} if getattr(message, "status", "") == "error" else {}),
                    }
                ],
            )
        elif kind == "chat":
            role = getattr(message, "role", "user")
            add("assistant" if role == "assistant" else "user", _blocks(content))
        else:
            raise ValueError(
                f"ChatAnthropic cannot send a message of type {kind!r} "
                f"({type(message).__name__}); send system, human, ai, tool or chat messages."
            )
    return ("\n\n".join(system) if system else None), turns


def to_anthropic_tools(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    """Neutral tool specs as Messages API ``tools``."""
    return [
        {"name": t["name"], "description": t["description"], "input_schema": t["parameters"]}
        for t in tools
    ]


def _tool_choice(choice: Any) -> Any:
    if choice is None or isinstance(choice, dict):
        return choice
    if choice == "auto":
        return {"type": "auto"}
    if choice in ("any", "required", True):
        return {"type": "any"}
    if choice == "none":
        return {"type": "none"}
    if isinstance(choice, str):
        return {"type": "tool", "name": choice}
    raise ValueError(
        f"ChatAnthropic got tool_choice={choice!r}; use 'auto', 'any'/'required', 'none' or "
        "a tool name."
    )


def _usage(usage: Any, *, output_only: bool = False) -> dict[str, Any] | None:
    if usage is None:
        return None
    output = _get(usage, "output_tokens") or 0
    if output_only:
        return {"input_tokens": 0, "output_tokens": output, "total_tokens": output}
    read = _get(usage, "cache_read_input_tokens") or 0
    created = _get(usage, "cache_creation_input_tokens") or 0
    prompt = (_get(usage, "input_tokens") or 0) + read + created
    result: dict[str, Any] = {
        "input_tokens": prompt,
        "output_tokens": output,
        "total_tokens": prompt + output,
    }
    if read or created:
        result["input_token_details"] = {"cache_read": read, "cache_creation": created}
    return result


def _response_message(response: Any) -> AIMessage:
    text: list[str] = []
    calls: list[dict[str, Any]] = []
    for block in _get(response, "content") or ():
        kind = _get(block, "type")
        if kind == "text":
            text.append(_get(block, "text") or "")
        elif kind == "tool_use":
            calls.append(
                {
                    "name": _get(block, "name"),
                    "args": dict(_get(block, "input") or {}),
                    "id": _get(block, "id"),
                }
            )
    metadata = {
        "model_name": _get(response, "model"),
        "stop_reason": _get(response, "stop_reason"),
        "stop_sequence": _get(response, "stop_sequence"),
        "model_provider": "anthropic",
    }
    return AIMessage(
        "".join(text),
        id=_get(response, "id"),
        tool_calls=calls,  # type: ignore[arg-type]
        usage_metadata=_usage(_get(response, "usage")),  # type: ignore[arg-type]
        response_metadata={k: v for k, v in metadata.items() if v is not None},
    )


class _StreamReader:
    """Turns Messages API stream events into ``AIMessageChunk`` s."""

    def __init__(self) -> None:
        self.message_id: str | None = None
        self.model: str | None = None

    def chunk(self, event: Any) -> AIMessageChunk | None:
        kind = _get(event, "type")
        if kind == "message_start":
            message = _get(event, "message")
            self.message_id = _get(message, "id")
            self.model = _get(message, "model")
            usage = _usage(_get(message, "usage"))
            if usage is not None:
                usage["output_tokens"] = 0
                usage["total_tokens"] = usage["input_tokens"]
            return AIMessageChunk("", id=self.message_id, usage_metadata=usage)  # type: ignore[arg-type]
        if kind == "content_block_start":
            block = _get(event, "content_block")
            if _get(block, "type") == "tool_use":
                piece = {
                    "name": _get(block, "name"),
                    "args": "",
                    "id": _get(block, "id"),
                    "index": _get(event, "index"),
                }
                return AIMessageChunk("", id=self.message_id, tool_call_chunks=[piece])  # type: ignore[list-item]
            return None
        if kind == "content_block_delta":
            delta = _get(event, "delta")
            delta_kind = _get(delta, "type")
            if delta_kind == "text_delta":
                return AIMessageChunk(_get(delta, "text") or "", id=self.message_id)
            if delta_kind == "input_json_delta":
                piece = {
                    "name": None,
                    "args": _get(delta, "partial_json") or "",
                    "id": None,
                    "index": _get(event, "index"),
                }
                return AIMessageChunk("", id=self.message_id, tool_call_chunks=[piece])  # type: ignore[list-item]
            return None
        if kind == "message_delta":
            delta = _get(event, "delta")
            metadata = {
                "stop_reason": _get(delta, "stop_reason"),
                "stop_sequence": _get(delta, "stop_sequence"),
                "model_name": self.model,
                "model_provider": "anthropic",
            }
            return AIMessageChunk(
                "",
                id=self.message_id,
                usage_metadata=_usage(_get(event, "usage"), output_only=True),  # type: ignore[arg-type]
                response_metadata={k: v for k, v in metadata.items() if v is not None},
            )
        return None


_SETTINGS = ClientSettings(
    adapter="ChatAnthropic",
    module="anthropic",
    sync_class="Anthropic",
    async_class="AsyncAnthropic",
    extra="anthropic",
    aliases={
        "api_key": ("api_key", "anthropic_api_key"),
        "base_url": ("base_url", "anthropic_api_url"),
        "timeout": ("timeout", "default_request_timeout"),
        **SDK_ALIASES,
    },
)


class ChatAnthropic(SdkChatModel):
    """A chat model over Anthropic's Messages API, through the ``anthropic`` SDK.

    Build it as with langchain-anthropic: ``ChatAnthropic(model="claude-sonnet-4-5",
    api_key=..., base_url=..., temperature=..., max_tokens=1024, timeout=...,
    max_retries=..., default_headers=...)`` (also ``http_client``, ``http_async_client``
    and the aliases ``model_name``, ``anthropic_api_key``, ``anthropic_api_url``,
    ``default_request_timeout``, ``max_tokens_to_sample``); it then builds an
    ``anthropic.Anthropic`` and an ``anthropic.AsyncAnthropic`` client itself (settings
    left out come from the SDK's defaults and environment, e.g. ``ANTHROPIC_API_KEY``).

    Or pass a ready client first: ``client`` is an ``anthropic.Anthropic`` (or
    ``AsyncAnthropic``) instance; ``async_client`` serves ``ainvoke``/``astream`` when
    given. ``model`` and ``max_tokens`` (required by the API) are sent with each request,
    with the sampling options, ``model_kwargs`` and any other request parameter in
    ``extra``.
    """

    provider = "anthropic"
    _settings = _SETTINGS
    _example_model = "claude-sonnet-4-5"

    def __init__(
        self,
        client: Any = None,
        *,
        model: str | None = None,
        max_tokens: int | None = None,
        async_client: Any = None,
        temperature: float | None = None,
        tags: list[str] | None = None,
        name: str | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(tags=tags, name=name)
        model = _one_of(model, extra, "model_name", "model")
        max_tokens = _one_of(max_tokens, extra, "max_tokens_to_sample", "max_tokens")
        self._connect(model, client, async_client, extra)
        self.params: dict[str, Any] = {"max_tokens": 1024 if max_tokens is None else max_tokens}
        self.params.update(extra.pop("model_kwargs", None) or {})
        self.params.update(extra)
        if temperature is not None:
            self.params["temperature"] = temperature

    def _request(self, messages: list[Any], tools: list[ToolSpec], tool_choice: Any) -> dict:
        system, turns = to_anthropic_messages(messages)
        request: dict[str, Any] = {"model": self.model_name, "messages": turns, **self.params}
        if system is not None:
            request["system"] = system
        if tools:
            request["tools"] = to_anthropic_tools(tools)
            choice = _tool_choice(tool_choice)
            if choice is not None:
                request["tool_choice"] = choice
        return request

    def _create(self, client: Any) -> Any:
        return client.messages.create

    def _reply(self, response: Any) -> AIMessage:
        return _response_message(response)

    def _chunk_reader(self) -> Any:
        return _StreamReader().chunk
