"""The studio UI is served by ``stategraph serve`` (read-only by default)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

pytestmark = pytest.mark.server


def test_the_studio_pages_show_the_server_threads(server: Any) -> None:
    made = httpx.post(
        server.url + "/threads/00000000-0000-4000-8000-00000000beef/runs/wait",
        json={
            "assistant_id": "agent",
            "input": {"messages": [{"role": "user", "content": "hi"}]},
            "if_not_exists": "create",
        },
        timeout=60,
    )
    assert made.status_code == 200, made.text
    home = httpx.get(server.url + "/", timeout=60)
    assert home.status_code == 200 and "text/html" in home.headers["content-type"]
    assert "00000000-0000-4000-8000-00000000beef" in home.text
    page = httpx.get(server.url + "/ui/threads/00000000-0000-4000-8000-00000000beef", timeout=60)
    assert page.status_code == 200 and "approve" in page.text
    assert httpx.get(server.url + "/static/studio.css").status_code == 200
    refused = httpx.post(server.url + "/studio/api/answer", json={}, timeout=60)
    assert refused.status_code in (403, 422)  # read-only: nothing is written from the UI
