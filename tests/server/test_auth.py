"""Custom auth (``Auth`` handlers) with two users who never see each other's threads,
runs, crons or store items; and the shared token of a server without custom auth."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

langgraph_sdk = pytest.importorskip("langgraph_sdk")
from langgraph_sdk import get_client  # noqa: E402
from langgraph_sdk.errors import AuthenticationError, NotFoundError, PermissionDeniedError  # noqa: E402
from tests.server.conftest import BACKENDS, PG, ServerProcess, reset_postgres  # noqa: E402

pytestmark = pytest.mark.server

APP_AUTH = Path(__file__).parent / "app_auth" / "langgraph.json"


@pytest.fixture(scope="module", params=BACKENDS)
def auth_server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    data = tmp_path_factory.mktemp(f"auth-{request.param}")
    postgres = PG if request.param == "postgres" else None
    if postgres:
        postgres = reset_postgres(postgres)
    proc = ServerProcess(data / "data", postgres=postgres, config=APP_AUTH)
    yield proc
    proc.stop()
    shutil.rmtree(data, ignore_errors=True)


def _client(server: ServerProcess, token: str | None) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else None
    return get_client(url=server.url, headers=headers)


async def test_requests_without_a_valid_token_are_refused(auth_server: ServerProcess) -> None:
    with pytest.raises(AuthenticationError):
        await _client(auth_server, None).threads.search()
    with pytest.raises(AuthenticationError):
        await _client(auth_server, "mallory").threads.create()
    async with httpx.AsyncClient() as http:
        assert (await http.get(auth_server.url + "/ok")).status_code == 200


async def test_two_users_never_see_each_others_threads_and_runs(auth_server: ServerProcess) -> None:
    alice, bob = _client(auth_server, "alice-token"), _client(auth_server, "bob-token")
    thread = await alice.threads.create(metadata={"topic": "secret"})
    assert thread["metadata"] == {"topic": "secret", "owner": "alice"}
    run = await alice.runs.create(thread["thread_id"], "steps", input={"n": 0})
    assert (await alice.runs.join(thread["thread_id"], run["run_id"]))["n"] == 5
    tid, rid = thread["thread_id"], run["run_id"]
    for attempt in (
        lambda: bob.threads.get(tid),
        lambda: bob.threads.get_state(tid),
        lambda: bob.threads.get_history(tid),
        lambda: bob.threads.update(tid, metadata={"owner": "bob"}),
        lambda: bob.threads.delete(tid),
        lambda: bob.threads.copy(tid),
        lambda: bob.runs.get(tid, rid),
        lambda: bob.runs.list(tid),
        lambda: bob.runs.join(tid, rid),
        lambda: bob.runs.cancel(tid, rid),
        lambda: bob.runs.create(tid, "steps", input={"n": 0}),
    ):
        with pytest.raises((NotFoundError, httpx.HTTPStatusError)) as refused:
            await attempt()
        status = getattr(getattr(refused.value, "response", None), "status_code", 404)
        assert status == 404
    assert [t["thread_id"] for t in await bob.threads.search()] == []
    assert await bob.threads.count() == 0
    assert [t["thread_id"] for t in await alice.threads.search()] == [tid]
    # bob's own thread is his alone
    mine = await bob.threads.create()
    assert [t["thread_id"] for t in await bob.threads.search()] == [mine["thread_id"]]
    assert (await alice.threads.get(tid))["metadata"]["owner"] == "alice"


async def test_two_users_never_see_each_others_crons(auth_server: ServerProcess) -> None:
    alice, bob = _client(auth_server, "alice-token"), _client(auth_server, "bob-token")
    cron = await alice.crons.create("steps", schedule="0 0 * * *", input={"n": 0})
    assert cron["metadata"] == {"owner": "alice"} and cron["user_id"] == "alice"
    assert [c["cron_id"] for c in await bob.crons.search()] == []
    with pytest.raises(NotFoundError):
        await bob.crons.delete(cron["cron_id"])
    assert [c["cron_id"] for c in await alice.crons.search()] == [cron["cron_id"]]
    await alice.crons.delete(cron["cron_id"])


async def test_two_users_never_see_each_others_store_items(auth_server: ServerProcess) -> None:
    alice, bob = _client(auth_server, "alice-token"), _client(auth_server, "bob-token")
    await alice.store.put_item(["notes"], "plan", {"text": "alice's"})
    await bob.store.put_item(["notes"], "plan", {"text": "bob's"})
    assert (await alice.store.get_item(["notes"], "plan"))["value"] == {"text": "alice's"}
    assert (await bob.store.get_item(["notes"], "plan"))["value"] == {"text": "bob's"}
    found = await bob.store.search_items(["notes"])
    assert [i["value"] for i in found["items"]] == [{"text": "bob's"}]
    await bob.store.delete_item(["notes"], "plan")
    assert (await alice.store.get_item(["notes"], "plan"))["value"] == {"text": "alice's"}


async def test_a_handler_can_refuse_an_action(auth_server: ServerProcess) -> None:
    alice = _client(auth_server, "alice-token")
    made = await alice.assistants.create("steps", name="mine")
    assert made["metadata"] == {"owner": "alice"}
    with pytest.raises(PermissionDeniedError):
        await alice.assistants.delete(made["assistant_id"])


async def test_the_user_reaches_the_graph_config(auth_server: ServerProcess) -> None:
    alice = _client(auth_server, "alice-token")
    thread = await alice.threads.create()
    run = await alice.runs.create(thread["thread_id"], "steps", input={"n": 0})
    conf = run["kwargs"]["config"]["configurable"]
    assert conf["langgraph_auth_user_id"] == "alice"
    assert conf["langgraph_auth_user"]["identity"] == "alice"
    await alice.runs.join(thread["thread_id"], run["run_id"])
    state = await alice.threads.get_state(thread["thread_id"])
    assert state["metadata"]["langgraph_auth_user_id"] == "alice"


def test_token_server_refuses_requests_without_the_token(tmp_path: Path) -> None:
    """Without custom auth, --token guards every route but /ok."""
    proc = ServerProcess(tmp_path / "data", extra=["--token", "s3cret"])
    try:
        assert httpx.get(proc.url + "/ok").status_code == 200
        assert httpx.post(proc.url + "/threads", json={}).status_code == 401
        good = httpx.post(proc.url + "/threads", json={}, headers={"x-api-key": "s3cret"})
        assert good.status_code == 200
        bearer = httpx.post(
            proc.url + "/threads/search", json={}, headers={"Authorization": "Bearer s3cret"}
        )
        assert bearer.status_code == 200 and len(bearer.json()) == 1
    finally:
        proc.stop()


def test_langgraph_sdk_auth_is_refused_with_what_to_change(tmp_path: Path) -> None:
    from stategraph.server._app import load_auth
    from stategraph.server._config import ConfigError, load_config

    (tmp_path / "auth.py").write_text("from langgraph_sdk import Auth\nauth = Auth()\n")
    (tmp_path / "g.py").write_text("x = 1\n")
    (tmp_path / "langgraph.json").write_text(
        '{"graphs": {"g": "./g.py:x"}, "auth": {"path": "./auth.py:auth"}}'
    )
    with pytest.raises(ConfigError, match=r"from stategraph\.server\.auth import Auth"):
        load_auth(load_config(tmp_path / "langgraph.json"))


async def test_stateless_runs_are_stamped_and_private(auth_server: ServerProcess) -> None:
    alice, bob = _client(auth_server, "alice-token"), _client(auth_server, "bob-token")
    run = await alice.runs.create(None, "steps", input={"n": 0})
    assert run["metadata"]["owner"] == "alice"
    assert (await alice.runs.join(run["thread_id"], run["run_id"]))["n"] == 5
    with pytest.raises((NotFoundError, httpx.HTTPStatusError)):
        await bob.runs.get(run["thread_id"], run["run_id"])
