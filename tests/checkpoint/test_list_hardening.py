"""``list()`` answers the same on every saver (issue 10): metadata filters with NUL in
strings, Decimal/bool/int values, and argument normalisation or rejection."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from saver_harness import Api

from stategraph.checkpoint.base import empty_checkpoint


def cfg(thread: str, ns: Any = "") -> dict[str, Any]:
    return {"configurable": {"thread_id": thread, "checkpoint_ns": ns}}


async def put_metas(api: Api, metas: list[dict[str, Any]]) -> list[dict[str, Any]]:
    configs = []
    for i, meta in enumerate(metas):
        configs.append(await api.put(cfg(f"t{i}"), empty_checkpoint(), meta, {}))  # type: ignore[arg-type]
    return configs


async def matching(api: Api, configs: list[dict[str, Any]], **filter: Any) -> list[int]:
    found = await api.list(None, filter=filter)
    return sorted(configs.index(t.config) for t in found)


async def test_nul_in_metadata_strings_never_matches_the_prefix(api: Api) -> None:
    configs = await put_metas(
        api,
        [{"user_id": "alice\x00mallory"}, {"user_id": "alice"}, {"user_id": "\x00"}],
    )
    assert await matching(api, configs, user_id="alice") == [1]
    assert await matching(api, configs, user_id="alice\x00mallory") == [0]
    assert await matching(api, configs, user_id="alice\x00") == []
    assert await matching(api, configs, user_id="") == []
    assert await matching(api, configs, user_id="\x00") == [2]
    found = await api.list(None, filter={"user_id": "alice"}, limit=1)
    assert [t.config for t in found] == [configs[1]]


async def test_decimal_bool_and_int_filter_values_follow_python_equality(api: Api) -> None:
    configs = await put_metas(
        api,
        [{"n": 1}, {"n": True}, {"n": 1.0}, {"n": 2}, {"n": False}, {"n": 0}, {"n": "1"}],
    )
    assert await matching(api, configs, n=Decimal("1")) == [0, 1, 2]
    assert await matching(api, configs, n=Decimal("1.00")) == [0, 1, 2]
    assert await matching(api, configs, n=Decimal("2")) == [3]
    assert await matching(api, configs, n=Decimal("0.5")) == []
    assert await matching(api, configs, n=True) == [0, 1, 2]
    assert await matching(api, configs, n=False) == [4, 5]
    assert await matching(api, configs, n=0) == [4, 5]
    assert await matching(api, configs, n=2**70) == []


async def test_decimal_metadata_values_filter_like_memory(api: Api) -> None:
    configs = await put_metas(api, [{"price": Decimal("9.99")}, {"price": Decimal("1")}])
    assert await matching(api, configs, price=Decimal("9.99")) == [0]
    assert await matching(api, configs, price=1) == [1]
    assert await matching(api, configs, price=True) == [1]


async def test_checkpoint_ns_and_thread_id_are_normalised_like_put(api: Api) -> None:
    saved = await api.put(cfg("7", ns=5), empty_checkpoint(), {"source": "input"}, {})  # type: ignore[typeddict-item]
    assert saved["configurable"]["checkpoint_ns"] == "5"
    for config in (cfg("7", ns=5), cfg(7, ns="5"), {"configurable": {"thread_id": 7}}):  # type: ignore[arg-type]
        assert [t.config for t in await api.list(config)] == [saved]
    assert await api.list(cfg("7", ns=6)) == []


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"limit": "5"}, "limit must be an int"),
        ({"limit": 1.5}, "limit must be an int"),
        ({"limit": True}, "limit must be an int"),
        ({"filter": {("user", "id"): 1}}, "filter keys must be strings"),
        ({"filter": [("user", 1)]}, "filter must be a mapping"),
        ({"before": "checkpoint-id"}, "before must be a config"),
    ],
    ids=["limit-str", "limit-float", "limit-bool", "tuple-key", "filter-list", "before-str"],
)
async def test_bad_list_arguments_are_rejected_with_a_clear_error(
    api: Api, kwargs: dict[str, Any], message: str
) -> None:
    await api.put(cfg("t"), empty_checkpoint(), {"source": "input"}, {})  # type: ignore[typeddict-item]
    with pytest.raises(TypeError, match=message):
        await api.list(None, **kwargs)


async def test_integer_like_limits_are_accepted(api: Api) -> None:
    for i in range(3):
        await api.put(cfg(f"t{i}"), empty_checkpoint(), {"source": "input"}, {})  # type: ignore[typeddict-item]

    class Index:
        def __index__(self) -> int:
            return 2

    assert len(await api.list(None, limit=Index())) == 2
    assert await api.list(None, limit=-1) == []
