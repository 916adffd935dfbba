"""``examples/server`` serves as documented: its client books a room through an
interrupt, as alice, and bob sees none of it."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

pytest.importorskip("langgraph_sdk")

from tests.server.conftest import ServerProcess

pytestmark = pytest.mark.server

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "server"


async def test_example_server_and_client(tmp_path: Path) -> None:
    from langgraph_sdk import get_client

    proc = ServerProcess(tmp_path / "data", config=EXAMPLE / "langgraph.json")
    try:
        spec = importlib.util.spec_from_file_location(
            "example_server_client", EXAMPLE / "client.py"
        )
        assert spec is not None and spec.loader is not None
        client_module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(client_module)
        report = await client_module.main(proc.url, "alice-secret")
        assert report == {
            "question": "Book room Ada?",
            "answer": "Booked room Ada at 10:00.",
            "bookings": [{"room": "Ada", "hour": 10}],
            "status": "idle",
        }
        bob = get_client(url=proc.url, headers={"Authorization": "Bearer bob-secret"})
        assert await bob.threads.search() == []
        assert (await bob.store.search_items(["bookings"]))["items"] == []
    finally:
        proc.stop()
        shutil.rmtree(tmp_path, ignore_errors=True)
