"""Local stand-ins for model providers' HTTP APIs, answering from a script.

:class:`FakeOpenAIServer` speaks OpenAI's Chat Completions wire format and
:class:`FakeAnthropicServer` Anthropic's Messages format, JSON and server-sent events
alike, on ``127.0.0.1`` at a free port. Point the vendor's own SDK at ``base_url``
to test an app end to end without network or mocks::

    with FakeOpenAIServer(["Hello!"]) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="test")
        model = ChatOpenAI(client, model="gpt-test")

Replies are scripted like :class:`~stategraph.testing.FakeChatModel` s (text,
``AIMessage`` s with tool calls and usage). ``requests`` records each request body.
Streams send one event per word, and tool-call arguments in pieces.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from stategraph.messages import AIMessage
from stategraph.testing.chat_model import ScriptedReply, _as_message

__all__ = ["FakeOpenAIServer", "FakeAnthropicServer", "HTTPErrorReply"]

_TOKEN = re.compile(r"\s*\S+|\s+")


class HTTPErrorReply:
    """A scripted reply that fails: the server answers ``status`` with an error body."""

    def __init__(self, status: int, message: str) -> None:
        self.status = status
        self.message = message


def _words(text: str) -> list[str]:
    return _TOKEN.findall(text)


def _pieces(text: str, count: int = 3) -> list[str]:
    size = max(1, -(-len(text) // count))
    return [text[i : i + size] for i in range(0, len(text), size)]


def _request_words(body: dict[str, Any]) -> int:
    words = 0
    for message in body.get("messages") or ():
        content = message.get("content")
        if isinstance(content, str):
            words += len(content.split())
        elif isinstance(content, list):
            for block in content:
                if isinstance(block, dict):
                    words += len(str(block.get("text") or block.get("content") or "").split())
    system = body.get("system")
    if isinstance(system, str):
        words += len(system.split())
    return max(words, 1)


class _FakeServer(ABC):
    """An HTTP server on a thread of its own, answering one scripted reply per request."""

    path = "/"

    def __init__(self, replies: Sequence[ScriptedReply | HTTPErrorReply], *, model: str) -> None:
        self.replies = list(replies)
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self._position = 0
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------ lifecycle
    def start(self) -> None:
        """Listen on ``127.0.0.1`` at a free port (see :attr:`base_url`)."""
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                owner._handle(self)

            def log_message(self, format: str, *args: Any) -> None:
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, name=f"{type(self).__name__}", daemon=True
        )
        self._thread.start()

    def close(self) -> None:
        """Stop listening and wait for the server thread."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def __enter__(self) -> _FakeServer:
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def port(self) -> int:
        """The port the server listens on."""
        if self._server is None:
            raise RuntimeError("The fake server is not running: call start() or use `with`.")
        return int(self._server.server_address[1])

    @property
    def root_url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self.port}"

    # ------------------------------------------------------------ requests
    def _next_reply(self, body: dict[str, Any]) -> AIMessage | HTTPErrorReply:
        with self._lock:
            self.requests.append(body)
            if self._position >= len(self.replies):
                return HTTPErrorReply(
                    500,
                    f"{type(self).__name__} has no scripted reply left (it had "
                    f"{len(self.replies)}); script more replies.",
                )
            reply = self.replies[self._position]
            self._position += 1
        if isinstance(reply, HTTPErrorReply):
            return reply
        if callable(reply) and not isinstance(reply, (AIMessage, dict)):
            reply = reply(body.get("messages") or [])
        return _as_message(reply, self._position - 1)

    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        if handler.path.rstrip("/") != self.path:
            self._send_json(handler, 404, {"error": {"message": f"no route {handler.path}"}})
            return
        length = int(handler.headers.get("Content-Length") or 0)
        try:
            body = json.loads(handler.rfile.read(length) or b"{}")
        except ValueError:
            self._send_json(handler, 400, {"error": {"message": "request body is not JSON"}})
            return
        reply = self._next_reply(body)
        if isinstance(reply, HTTPErrorReply):
            self._send_json(handler, reply.status, self._error_body(reply))
            return
        if body.get("stream"):
            handler.send_response(200)
            handler.send_header("Content-Type", "text/event-stream")
            handler.send_header("Cache-Control", "no-cache")
            handler.send_header("Connection", "close")
            handler.end_headers()
            for event in self._events(body, reply):
                handler.wfile.write(event.encode())
                handler.wfile.flush()
            return
        self._send_json(handler, 200, self._complete(body, reply))

    @staticmethod
    def _send_json(handler: BaseHTTPRequestHandler, status: int, payload: Any) -> None:
        data = json.dumps(payload).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.send_header("Connection", "close")
        handler.end_headers()
        handler.wfile.write(data)

    def _usage(self, body: dict[str, Any], reply: AIMessage) -> tuple[int, int]:
        if reply.usage_metadata:
            return reply.usage_metadata["input_tokens"], reply.usage_metadata["output_tokens"]
        output = len(_words(reply.text)) + sum(
            len(json.dumps(c["args"])) // 4 + 1 for c in reply.tool_calls
        )
        return _request_words(body), max(output, 1)

    # ------------------------------------------------------------ per API
    @abstractmethod
    def _error_body(self, reply: HTTPErrorReply) -> Any:
        """The JSON body of an error response."""

    @abstractmethod
    def _complete(self, body: dict[str, Any], reply: AIMessage) -> Any:
        """The JSON body of a non-streamed response."""

    @abstractmethod
    def _events(self, body: dict[str, Any], reply: AIMessage) -> Iterator[str]:
        """The server-sent events of a streamed response."""


class FakeOpenAIServer(_FakeServer):
    """Answers ``POST /v1/chat/completions`` like OpenAI's Chat Completions API."""

    path = "/v1/chat/completions"

    def __init__(
        self, replies: Sequence[ScriptedReply | HTTPErrorReply], *, model: str = "gpt-fake"
    ) -> None:
        super().__init__(replies, model=model)

    @property
    def base_url(self) -> str:
        """What to pass as ``openai.OpenAI(base_url=...)``."""
        return f"{self.root_url}/v1"

    def _error_body(self, reply: HTTPErrorReply) -> Any:
        return {"error": {"message": reply.message, "type": "invalid_request_error"}}

    def _usage_wire(self, body: dict[str, Any], reply: AIMessage) -> dict[str, int]:
        prompt, completion = self._usage(body, reply)
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }

    def _complete(self, body: dict[str, Any], reply: AIMessage) -> Any:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if reply.tool_calls:
            message["tool_calls"] = [
                {
                    "id": c.get("id"),
                    "type": "function",
                    "function": {"name": c["name"], "arguments": json.dumps(c["args"])},
                }
                for c in reply.tool_calls
            ]
        return {
            "id": f"chatcmpl-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", self.model),
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if reply.tool_calls else "stop",
                    "logprobs": None,
                }
            ],
            "usage": self._usage_wire(body, reply),
        }

    def _events(self, body: dict[str, Any], reply: AIMessage) -> Iterator[str]:
        base = {
            "id": f"chatcmpl-{next(self._ids)}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": body.get("model", self.model),
        }

        def event(delta: dict[str, Any], finish: str | None = None) -> str:
            choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
            return f"data: {json.dumps({**base, 'choices': [choice]})}\n\n"

        yield event({"role": "assistant", "content": ""})
        for word in _words(reply.text):
            yield event({"content": word})
        for index, call in enumerate(reply.tool_calls):
            head = {
                "index": index,
                "id": call.get("id"),
                "type": "function",
                "function": {"name": call["name"], "arguments": ""},
            }
            yield event({"tool_calls": [head]})
            for piece in _pieces(json.dumps(call["args"])):
                yield event({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
        yield event({}, "tool_calls" if reply.tool_calls else "stop")
        if (body.get("stream_options") or {}).get("include_usage"):
            usage = {**base, "choices": [], "usage": self._usage_wire(body, reply)}
            yield f"data: {json.dumps(usage)}\n\n"
        yield "data: [DONE]\n\n"


class FakeAnthropicServer(_FakeServer):
    """Answers ``POST /v1/messages`` like Anthropic's Messages API."""

    path = "/v1/messages"

    def __init__(
        self, replies: Sequence[ScriptedReply | HTTPErrorReply], *, model: str = "claude-fake"
    ) -> None:
        super().__init__(replies, model=model)

    @property
    def base_url(self) -> str:
        """What to pass as ``anthropic.Anthropic(base_url=...)``."""
        return self.root_url

    def _error_body(self, reply: HTTPErrorReply) -> Any:
        return {
            "type": "error",
            "error": {"type": "invalid_request_error", "message": reply.message},
        }

    def _blocks(self, reply: AIMessage) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        if reply.text:
            blocks.append({"type": "text", "text": reply.text})
        for call in reply.tool_calls:
            blocks.append(
                {
                    "type": "tool_use",
                    "id": call.get("id"),
                    "name": call["name"],
                    "input": call["args"],
                }
            )
        return blocks

    def _complete(self, body: dict[str, Any], reply: AIMessage) -> Any:
        prompt, completion = self._usage(body, reply)
        return {
            "id": f"msg_{next(self._ids):04d}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", self.model),
            "content": self._blocks(reply),
            "stop_reason": "tool_use" if reply.tool_calls else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": prompt, "output_tokens": completion},
        }

    def _events(self, body: dict[str, Any], reply: AIMessage) -> Iterator[str]:
        def event(kind: str, data: dict[str, Any]) -> str:
            return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n"

        prompt, completion = self._usage(body, reply)
        start = self._complete(body, reply)
        start.update(content=[], stop_reason=None)
        start["usage"] = {"input_tokens": prompt, "output_tokens": 1}
        yield event("message_start", {"message": start})
        index = 0
        if reply.text:
            yield event(
                "content_block_start",
                {"index": index, "content_block": {"type": "text", "text": ""}},
            )
            for word in _words(reply.text):
                yield event(
                    "content_block_delta",
                    {"index": index, "delta": {"type": "text_delta", "text": word}},
                )
            yield event("content_block_stop", {"index": index})
            index += 1
        for call in reply.tool_calls:
            block: dict[str, Any] = {
                "type": "tool_use",
                "id": call.get("id"),
                "name": call["name"],
                "input": {},
            }
            yield event("content_block_start", {"index": index, "content_block": block})
            for piece in _pieces(json.dumps(call["args"])):
                yield event(
                    "content_block_delta",
                    {"index": index, "delta": {"type": "input_json_delta", "partial_json": piece}},
                )
            yield event("content_block_stop", {"index": index})
            index += 1
        yield event(
            "message_delta",
            {
                "delta": {
                    "stop_reason": "tool_use" if reply.tool_calls else "end_turn",
                    "stop_sequence": None,
                },
                "usage": {"output_tokens": completion},
            },
        )
        yield event("message_stop", {})
