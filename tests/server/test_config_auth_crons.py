"""Units of the server: langgraph.json reading, Auth handler dispatch, cron schedules."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from stategraph.server._config import ConfigError, config_from_specs, load_config
from stategraph.server.auth import Auth, BaseUser, HTTPException, matches_filter

pytestmark = pytest.mark.server


def _write(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "langgraph.json"
    path.write_text(json.dumps(data))
    return path


def test_langgraph_json_keys_are_read(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("export A=1\nB='two'\n# comment\n")
    config = load_config(
        _write(
            tmp_path,
            {
                "graphs": {
                    "agent": "./agent.py:graph",
                    "other": {"path": "pkg.mod:g", "description": "d"},
                },
                "env": ".env",
                "dependencies": ["."],
                "python_version": "3.11",
                "store": {"ttl": {"default_ttl": 10, "sweep_interval_minutes": 2}},
                "checkpointer": {"ttl": {"strategy": "delete", "default_ttl": 60}},
                "auth": {"path": "./auth.py:auth"},
                "http": {"disable_store": True, "cors": {"allow_origins": ["*"]}},
                "webhooks": {
                    "url": {"require_https": False, "allowed_domains": ["Hooks.Example.com"]}
                },
            },
        )
    )
    assert list(config.graphs) == ["agent", "other"]
    assert config.graphs["other"].description == "d"
    assert config.env == {"A": "1", "B": "two"}
    assert config.store_ttl is not None and config.store_ttl.default_ttl == 10
    assert config.thread_ttl is not None and config.thread_ttl.default_ttl == 60
    assert config.auth_path == "./auth.py:auth" and config.disabled == {"store"}
    assert config.webhooks.require_https is False
    assert config.webhooks.allowed_domains == ("hooks.example.com",)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({}, "graphs must name at least one graph"),
        ({"graphs": {"a": "./a.py"}}, "graphs.a"),
        ({"graphs": {"a": "./a.ts:graph"}}, "JavaScript"),
        ({"graphs": {"a": "a:g"}, "nonsense": 1}, "nonsense"),
        ({"graphs": {"a": "a:g"}, "store": {"index": {"dims": 3}}}, "store.index"),
        ({"graphs": {"a": "a:g"}, "checkpointer": {"ttl": {"default_ttl": -1}}}, "default_ttl"),
        ({"graphs": {"a": "a:g"}, "webhooks": {"url": {"nope": 1}}}, "webhooks.url"),
        ({"graphs": {"a": "a:g"}, "http": {"app": "./app.py:app"}}, "http.app"),
        ({"graphs": {"a": "a:g"}, "env": "missing.env"}, "missing.env"),
    ],
)
def test_bad_config_names_the_key(tmp_path: Path, data: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace(".", r"\.")):
        load_config(_write(tmp_path, data))


def test_missing_config_says_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"stategraph serve app\.py:graph"):
        load_config(tmp_path / "langgraph.json")


def test_command_line_graphs() -> None:
    config = config_from_specs(["app.py:graph", "second=pkg.mod:builder"])
    assert {k: v.path for k, v in config.graphs.items()} == {
        "graph": "app.py:graph",
        "second": "pkg.mod:builder",
    }
    with pytest.raises(ConfigError, match="Two graphs"):
        config_from_specs(["a.py:graph", "b.py:graph"])
    with pytest.raises(ConfigError, match="does not name a graph"):
        config_from_specs(["justamodule"])


# -------------------------------------------------------------------------------- auth
async def test_most_specific_auth_handler_wins() -> None:
    auth = Auth()
    calls: list[str] = []

    @auth.on
    async def everything(ctx: Any, value: Any) -> None:
        calls.append("global")

    @auth.on.threads
    async def threads(ctx: Any, value: Any) -> dict[str, str]:
        calls.append("threads")
        return {"owner": ctx.user.identity}

    @auth.on.threads.create
    async def create(ctx: Any, value: Any) -> bool:
        calls.append("threads.create")
        return False

    user = BaseUser("ann")
    assert await auth.authorize(user, [], "threads", "read", {}) == {"owner": "ann"}
    with pytest.raises(HTTPException) as refused:
        await auth.authorize(user, [], "threads", "create", {})
    assert refused.value.status_code == 403
    assert await auth.authorize(user, [], "crons", "read", {}) is None
    assert calls == ["threads", "threads.create", "global"]
    with pytest.raises(AttributeError, match="no action 'fly'"):
        auth.on.threads.fly
    with pytest.raises(AttributeError, match="no resource"):
        auth.on.rockets


async def test_authenticate_gets_the_arguments_it_names() -> None:
    auth = Auth()

    @auth.authenticate
    def who(authorization: str | None, path: str) -> dict[str, Any]:
        return {"identity": f"{authorization}@{path}", "permissions": ["x"], "team": "red"}

    user = await auth.authenticate_request(
        {"authorization": "tok", "path": "/threads", "method": "GET"}
    )
    assert user.identity == "tok@/threads" and user.permissions == ["x"] and user.team == "red"
    assert user.to_json()["team"] == "red"
    with pytest.raises(ValueError, match="one authenticate handler"):
        auth.authenticate(who)


def test_filters() -> None:
    assert matches_filter({"owner": "a", "tags": ["x", "y"]}, {"owner": "a"})
    assert not matches_filter({"owner": "b"}, {"owner": "a"})
    assert matches_filter({"owner": "a"}, {"owner": {"$eq": "a"}})
    assert matches_filter({"tags": ["x", "y"]}, {"tags": {"$contains": "y"}})
    assert not matches_filter({"tags": ["x"]}, {"tags": {"$contains": ["x", "z"]}})
    assert not matches_filter({}, {"owner": "a"})
    assert matches_filter(None, None)


# ------------------------------------------------------------------------------- crons
def test_next_run_dates() -> None:
    pytest.importorskip("croniter")
    from stategraph.server._context import ApiError
    from stategraph.server._crons import check_schedule, next_run, run_body

    base = 1_700_000_000.0  # 2023-11-14T22:13:20Z
    assert next_run("0 * * * *", base) == 1_700_002_800.0  # 23:00Z
    assert next_run("0 * * * *", base, "Asia/Kolkata") == 1_700_001_000.0  # :30 UTC offset
    with pytest.raises(ApiError, match="Invalid cron schedule"):
        check_schedule("every minute")
    with pytest.raises(ApiError, match="Unknown timezone"):
        check_schedule("* * * * *", "Mars/Olympus")
    body = run_body(
        {
            "cron_id": "c1",
            "assistant_id": "a1",
            "thread_id": None,
            "on_run_completed": None,
            "payload": {"schedule": "* * * * *", "input": {"n": 1}, "config": {"tags": ["t"]}},
        }
    )
    assert body == {
        "input": {"n": 1},
        "config": {"tags": ["t"], "configurable": {"cron_id": "c1"}},
        "assistant_id": "a1",
        "on_completion": "delete",
        "multitask_strategy": "enqueue",
    }
