"""The shared store suite, part 1: CRUD, search filters, namespaces, batches.

Every test runs on every store through the sync and the async API (see conftest).
"""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from stategraph.store.base import (
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchItem,
    SearchOp,
)

from .helpers import Clock


async def test_put_get_roundtrip(make_api):
    api = make_api()
    value = {"text": "héllo", "n": 1.5, "ok": True, "none": None, "nested": {"l": [1, "a"]}}
    await api.put(("users", "alice"), "prefs", value)
    item = await api.get(("users", "alice"), "prefs")
    assert isinstance(item, Item)
    assert item.namespace == ("users", "alice")
    assert item.key == "prefs"
    assert item.value == value
    assert item.created_at.tzinfo is not None
    assert item.created_at == item.updated_at
    assert await api.get(("users", "alice"), "missing") is None
    assert await api.get(("nobody",), "prefs") is None


async def test_update_keeps_created_at(make_api):
    api = make_api()
    clock = api.use_clock(Clock())
    await api.put(("docs",), "k", {"v": 1})
    first = await api.get(("docs",), "k")
    clock.advance(seconds=10)
    await api.put(("docs",), "k", {"v": 2})
    second = await api.get(("docs",), "k")
    assert second.value == {"v": 2}
    assert second.created_at == first.created_at
    assert second.updated_at > first.updated_at
    assert (second.updated_at - first.updated_at).total_seconds() == pytest.approx(10)
    assert first.created_at == datetime.fromtimestamp(clock.t - 10, timezone.utc)


async def test_delete(make_api):
    api = make_api()
    await api.put(("a",), "k1", {"v": 1})
    await api.put(("a",), "k2", {"v": 2})
    await api.put(("b",), "k", {"v": 3})
    await api.delete(("a",), "k1")
    assert await api.get(("a",), "k1") is None
    assert (await api.get(("a",), "k2")).value == {"v": 2}
    assert [i.key for i in await api.search(("a",))] == ["k2"]
    await api.delete(("a",), "missing")  # no error
    await api.delete(("b",), "k")
    assert await api.list_namespaces() == [("a",)]


async def test_search_orders_newest_first_and_scopes_prefix(make_api):
    api = make_api()
    await api.put(("a",), "1", {"v": 1})
    await api.put(("a", "b"), "2", {"v": 2})
    await api.put(("a", "b", "c"), "3", {"v": 3})
    await api.put(("ab",), "4", {"v": 4})
    await api.put(("a%",), "5", {"v": 5})
    await api.put(("a",), "1", {"v": 10})  # update: now the newest
    results = await api.search(("a",))
    assert [r.key for r in results] == ["1", "3", "2"]
    assert all(isinstance(r, SearchItem) and r.score is None for r in results)
    assert [r.key for r in await api.search(("a", "b"))] == ["3", "2"]
    assert [r.key for r in await api.search(("a%",))] == ["5"]
    assert [r.key for r in await api.search(())] == ["1", "5", "4", "3", "2"]
    assert await api.search(("zzz",)) == []


async def test_search_query_without_index_is_ignored(make_api):
    api = make_api()
    await api.put(("a",), "old", {"text": "apple"})
    await api.put(("a",), "new", {"text": "zebra"})
    results = await api.search(("a",), query="apple")
    assert [(r.key, r.score) for r in results] == [("new", None), ("old", None)]


@pytest.fixture
def people():
    return {
        "ann": {"name": "ann", "age": 30, "city": "paris", "meta": {"team": "red", "lvl": 2}},
        "bob": {"name": "bob", "age": 25, "city": "rome", "meta": {"team": "blue", "lvl": 5}},
        "cid": {"name": "cid", "age": 35, "city": "paris", "meta": {"team": "red", "lvl": 9}},
        "dan": {"name": "dan", "age": 40, "active": True, "tags": ["x", "y"]},
    }


async def _filtered(api, flt, **kwargs):
    return sorted(r.key for r in await api.search(("p",), filter=flt, **kwargs))


async def test_search_filters(make_api, people):
    api = make_api()
    for key, value in people.items():
        await api.put(("p",), key, value)
    assert await _filtered(api, {"city": "paris"}) == ["ann", "cid"]
    assert await _filtered(api, {"city": "paris", "age": 35}) == ["cid"]
    assert await _filtered(api, {"age": {"$eq": 25}}) == ["bob"]
    assert await _filtered(api, {"city": {"$ne": "paris"}}) == ["bob", "dan"]
    assert await _filtered(api, {"age": {"$gt": 30}}) == ["cid", "dan"]
    assert await _filtered(api, {"age": {"$gte": 30}}) == ["ann", "cid", "dan"]
    assert await _filtered(api, {"age": {"$lt": 30}}) == ["bob"]
    assert await _filtered(api, {"age": {"$lte": 30}}) == ["ann", "bob"]
    assert await _filtered(api, {"age": {"$gt": 26, "$lt": 36}}) == ["ann", "cid"]
    assert await _filtered(api, {"name": {"$gte": "bz"}}) == ["cid", "dan"]
    # nested keys, dotted or as a nested filter
    assert await _filtered(api, {"meta.team": "red"}) == ["ann", "cid"]
    assert await _filtered(api, {"meta.lvl": {"$gte": 5}}) == ["bob", "cid"]
    assert await _filtered(api, {"meta": {"team": "blue"}}) == ["bob"]
    assert await _filtered(api, {"tags.0": "x"}) == ["dan"]
    assert await _filtered(api, {"tags": ["x", "y"]}) == ["dan"]
    # missing fields: never ordered, equal only to None, always "$ne"
    assert await _filtered(api, {"active": True}) == ["dan"]
    assert await _filtered(api, {"active": 1}) == []  # booleans are not numbers
    assert await _filtered(api, {"active": None}) == ["ann", "bob", "cid"]
    assert await _filtered(api, {"meta.lvl": {"$lt": 100}}) == ["ann", "bob", "cid"]
    assert await _filtered(api, {"meta.team": {"$ne": "red"}}) == ["bob", "dan"]
    assert await _filtered(api, {"age": {"$gt": "a"}}) == []  # mixed types: no match


async def test_search_filter_errors(make_api):
    api = make_api()
    with pytest.raises(ValueError, match=r"\$in"):
        await api.search(("p",), filter={"age": {"$in": [1]}})
    with pytest.raises(ValueError, match="mixes operators"):
        await api.search(("p",), filter={"age": {"$gt": 1, "x": 2}})


async def test_search_limit_offset(make_api):
    api = make_api()
    for i in range(7):
        await api.put(("n",), f"k{i}", {"i": i, "even": i % 2 == 0})
    newest_first = [f"k{i}" for i in range(6, -1, -1)]
    assert [r.key for r in await api.search(("n",))] == newest_first
    assert [r.key for r in await api.search(("n",), limit=3)] == newest_first[:3]
    assert [r.key for r in await api.search(("n",), limit=3, offset=2)] == newest_first[2:5]
    assert [r.key for r in await api.search(("n",), offset=6)] == newest_first[6:]
    assert await api.search(("n",), offset=10) == []
    assert await api.search(("n",), limit=0) == []
    evens = await api.search(("n",), filter={"even": True}, limit=2, offset=1)
    assert [r.key for r in evens] == ["k4", "k2"]
    with pytest.raises(ValueError, match="limit"):
        await api.search(("n",), limit=-1)


async def test_list_namespaces(make_api):
    api = make_api()
    for ns in [("a", "b", "c"), ("a", "b", "d"), ("a", "x"), ("b", "b"), ("c",), ("d", "e", "c")]:
        await api.put(ns, "k", {"v": 1})
    all_ns = [("a", "b", "c"), ("a", "b", "d"), ("a", "x"), ("b", "b"), ("c",), ("d", "e", "c")]
    assert await api.list_namespaces() == all_ns
    assert await api.list_namespaces(prefix=("a",)) == all_ns[:3]
    assert await api.list_namespaces(prefix=("a", "b")) == all_ns[:2]
    assert await api.list_namespaces(suffix=("c",)) == [("a", "b", "c"), ("c",), ("d", "e", "c")]
    assert await api.list_namespaces(prefix=("*", "b")) == [
        ("a", "b", "c"),
        ("a", "b", "d"),
        ("b", "b"),
    ]
    assert await api.list_namespaces(suffix=("*", "c")) == [("a", "b", "c"), ("d", "e", "c")]
    assert await api.list_namespaces(prefix=("a",), suffix=("d",)) == [("a", "b", "d")]
    assert await api.list_namespaces(max_depth=1) == [("a",), ("b",), ("c",), ("d",)]
    assert await api.list_namespaces(max_depth=2) == [
        ("a", "b"),
        ("a", "x"),
        ("b", "b"),
        ("c",),
        ("d", "e"),
    ]
    assert await api.list_namespaces(prefix=("a",), max_depth=2) == [("a", "b"), ("a", "x")]
    assert await api.list_namespaces(limit=2, offset=1) == all_ns[1:3]
    assert await api.list_namespaces(prefix=("zz",)) == []


@pytest.mark.parametrize(
    ("namespace", "fragment"),
    [
        ((), "cannot be empty"),
        (("a", ""), "''"),
        (("a.b",), "'a.b'"),
        (("a", 1), "1"),
        (("langgraph", "x"), "reserved"),
        ("users", "tuple of strings"),
    ],
)
async def test_invalid_namespaces(make_api, namespace, fragment):
    api = make_api()
    with pytest.raises(InvalidNamespaceError, match=fragment) as info:
        await api.put(namespace, "k", {"v": 1})
    assert isinstance(info.value, ValueError)
    if isinstance(namespace, tuple) and namespace:
        assert repr(namespace) in str(info.value)
    assert await api.list_namespaces() == []


async def test_bare_string_namespaces_are_rejected_everywhere(make_api):
    api = make_api()
    await api.put(("u",), "k", {"v": 1})
    for call in (
        api.get("u", "k"),
        api.delete("u", "k"),
        api.search("u"),
        api.list_namespaces(prefix="u"),
        api.list_namespaces(suffix="u"),
    ):
        with pytest.raises(InvalidNamespaceError, match="tuple of strings"):
            await call
    assert (await api.get(("u",), "k")).value == {"v": 1}


async def test_dotted_labels_cannot_reach_nested_namespaces(make_api):
    api = make_api()
    await api.put(("a", "b"), "k", {"v": 1})
    for call in (
        api.get(("a.b",), "k"),
        api.search(("a.b",)),
        api.delete(("a.b",), "k"),
        api.get(("a", ""), "k"),
        api.list_namespaces(prefix=("a.b",)),
    ):
        with pytest.raises(InvalidNamespaceError, match=r"'a\.b'|''"):
            await call
    assert (await api.get(("a", "b"), "k")).value == {"v": 1}


async def test_invalid_values_and_keys(make_api):
    api = make_api()
    with pytest.raises(TypeError, match="must be a dict"):
        await api.put(("a",), "k", ["not", "a", "dict"])
    with pytest.raises(TypeError, match="Key must be a string"):
        await api.put(("a",), 1, {"v": 1})
    with pytest.raises(TypeError, match="index"):
        await api.put(("a",), "k", {"v": 1}, index="text")


async def test_batch_mixed_ops_in_order(make_api):
    api = make_api()
    await api.put(("a",), "old", {"v": 0})
    results = await api.batch(
        [
            PutOp(("a",), "k", {"v": 1}),
            GetOp(("a",), "k"),
            SearchOp(("a",), filter={"v": 1}),
            ListNamespacesOp(match_conditions=(MatchCondition("prefix", ("a",)),)),
            GetOp(("a",), "missing"),
            PutOp(("a",), "k", None),
            GetOp(("a",), "k"),
            SearchOp(("a",)),
        ]
    )
    assert len(results) == 8
    assert results[0] is None
    assert results[1].value == {"v": 1}
    assert [r.key for r in results[2]] == ["k"]
    assert results[3] == [("a",)]
    assert results[4] is None
    assert results[5] is None
    assert results[6] is None
    assert [r.key for r in results[7]] == ["old"]
    assert await api.batch([]) == []


async def test_batch_rejects_unknown_ops(make_api):
    api = make_api()
    with pytest.raises(TypeError, match="Unknown store operation"):
        await api.batch([("a", "k")])


async def test_values_are_not_shared_with_caller(make_api):
    api = make_api()
    value = {"v": 1}
    await api.put(("a",), "k", value)
    value["v"] = 2
    assert (await api.get(("a",), "k")).value == {"v": 1}


async def test_injection_like_strings_are_plain_data(make_api):
    api = make_api()
    evil = "x') OR 1=1 --"
    await api.put(("a",), "k1", {"v": 1})
    await api.put(("a",), evil, {evil: evil, "v": 2})
    assert await api.search(("a",), filter={evil + "'": 1}) == []
    ne = await api.search(("a",), filter={"x') OR 1=1 --": {"$ne": evil}})
    assert [r.key for r in ne] == ["k1"]
    assert [r.key for r in await api.search(("a",), filter={evil: evil})] == [evil]
    assert (await api.get(("a",), evil)).value[evil] == evil
    assert len(await api.search(("a",))) == 2
