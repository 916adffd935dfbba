"""Webhooks: the URL policy (SSRF) and the POST a run's end sends, with retries."""

from __future__ import annotations

import asyncio
import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import pytest

from stategraph.server._config import WebhookPolicy
from stategraph.server._webhooks import WebhookRefused, Webhooks

pytestmark = pytest.mark.server

try:
    import langgraph_sdk  # noqa: F401

    HAVE_SDK = True
except ImportError:
    HAVE_SDK = False
needs_sdk = pytest.mark.skipif(not HAVE_SDK, reason="needs langgraph-sdk (make unit-server)")


def test_default_policy_refuses_plain_http_and_private_targets() -> None:
    hooks = Webhooks(WebhookPolicy(), "http://127.0.0.1:2024")
    assert hooks.check("https://hooks.example.com/x") == "https://hooks.example.com/x"
    for url, rule in (
        ("http://hooks.example.com/x", "require_https"),
        ("https://127.0.0.1/x", "SSRF"),
        ("https://10.1.2.3/x", "SSRF"),
        ("https://[::1]/x", "SSRF"),
        ("https://169.254.169.254/latest", "SSRF"),
        ("https://localhost/x", "SSRF"),
        ("ftp://example.com/x", "http(s)"),
        ("https://user:pw@example.com/x", "credentials"),
    ):
        with pytest.raises(WebhookRefused, match=rule.replace("(", r"\(").replace(")", r"\)")):
            hooks.check(url)
    assert hooks.check("/internal/hook") == "http://127.0.0.1:2024/internal/hook"


def test_policy_keys_allow_what_they_name() -> None:
    hooks = Webhooks(
        WebhookPolicy(require_https=False, allowed_domains=("127.0.0.1", "*.corp.test")),
        "",
    )
    assert hooks.check("http://127.0.0.1:9000/h") == "http://127.0.0.1:9000/h"
    assert hooks.check("https://a.corp.test/h")
    for url in ("https://corp.test/h", "https://example.com/h"):
        with pytest.raises(WebhookRefused, match="allowed_domains"):
            hooks.check(url)
    ports = Webhooks(WebhookPolicy(allowed_ports=(8443,)))
    with pytest.raises(WebhookRefused, match="allowed_ports"):
        ports.check("https://example.com/h")
    assert ports.check("https://example.com:8443/h")
    strict = Webhooks(WebhookPolicy(disable_loopback=True, max_url_length=30))
    with pytest.raises(WebhookRefused, match="disable_loopback"):
        strict.check("/hook")
    with pytest.raises(WebhookRefused, match="max_url_length"):
        strict.check("https://example.com/" + "x" * 40)


class _Sink:
    """A local HTTP server recording POSTs; the first ``fail`` answers are 503."""

    def __init__(self, fail: int = 0) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.fail = fail
        sink = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                if sink.fail > 0:
                    sink.fail -= 1
                    self.send_response(503)
                else:
                    sink.bodies.append(body)
                    self.send_response(200)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_port}/hook"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()


@needs_sdk
async def test_a_finished_run_posts_its_webhook_with_retries(server: Any) -> None:
    from langgraph_sdk import get_client

    sink = _Sink(fail=1)
    try:
        client = get_client(url=server.url)
        thread = await client.threads.create()
        run = await client.runs.create(
            thread["thread_id"], "steps", input={"n": 0}, webhook=sink.url
        )
        await client.runs.join(thread["thread_id"], run["run_id"])
        for _ in range(100):
            if sink.bodies:
                break
            await asyncio.sleep(0.05)
        [body] = sink.bodies
        assert body["run_id"] == run["run_id"] and body["status"] == "success"
        assert body["values"]["n"] == 5 and body["thread_id"] == thread["thread_id"]
    finally:
        sink.close()


@needs_sdk
async def test_a_refused_webhook_is_a_422_before_the_run(server: Any) -> None:
    from langgraph_sdk import get_client
    from langgraph_sdk.errors import UnprocessableEntityError

    client = get_client(url=server.url)
    thread = await client.threads.create()
    with pytest.raises(UnprocessableEntityError, match=r"SSRF|allowed_domains"):
        await client.runs.create(
            thread["thread_id"], "steps", input={}, webhook="http://10.0.0.1/x"
        )
    assert await client.runs.list(thread["thread_id"]) == []
