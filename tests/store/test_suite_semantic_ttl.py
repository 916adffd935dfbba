"""The shared store suite, part 2: semantic search and TTL.

Embeddings are bag-of-letters vectors (26 dims), so rankings are exact and known.
Time is injected through the store's ``_now`` clock: no test sleeps.
"""

from __future__ import annotations

import math

import pytest

from stategraph.store.base import GetOp, PutOp

from .helpers import Clock, letters, letters_index


def _cos(a: str, b: str) -> float:
    va, vb = letters([a, b])
    dot = sum(x * y for x, y in zip(va, vb, strict=True))
    return dot / (math.sqrt(sum(x * x for x in va)) * math.sqrt(sum(x * x for x in vb)))


async def test_semantic_ranking(make_api):
    api = make_api(index=letters_index(["text"]))
    await api.put(("docs",), "a", {"text": "aaaa"})
    await api.put(("docs",), "ab", {"text": "aabb"})
    await api.put(("docs",), "b", {"text": "bbbb"})
    await api.put(("docs",), "c", {"text": "cccc"})
    results = await api.search(("docs",), query="aaab")
    assert [r.key for r in results] == ["a", "ab", "b", "c"]
    assert [r.score for r in results] == pytest.approx(
        [_cos("aaab", t) for t in ["aaaa", "aabb", "bbbb", "cccc"]]
    )
    assert results[-1].score == 0.0
    top = await api.search(("docs",), query="bbbb", limit=2)
    assert [(r.key, r.score) for r in top] == [("b", pytest.approx(1.0)), ("ab", top[1].score)]
    assert [r.key for r in await api.search(("docs",), query="aaab", offset=1, limit=2)] == [
        "ab",
        "b",
    ]


async def test_semantic_with_filter_and_prefix(make_api):
    api = make_api(index=letters_index(["text"]))
    await api.put(("u", "1"), "x", {"text": "abc", "kind": "note"})
    await api.put(("u", "1"), "y", {"text": "xyz", "kind": "note"})
    await api.put(("u", "1"), "z", {"text": "abd", "kind": "todo"})
    await api.put(("v",), "w", {"text": "abc", "kind": "note"})
    results = await api.search(("u",), query="abc", filter={"kind": "note"})
    assert [r.key for r in results] == ["x", "y"]
    assert results[0].score == pytest.approx(1.0)


async def test_index_false_and_override(make_api):
    api = make_api(index=letters_index(["text"]))
    await api.put(("d",), "plain", {"text": "zzz"})
    await api.put(("d",), "skipped", {"text": "zzz"}, index=False)
    await api.put(("d",), "other", {"text": "qqq", "other": "zzz"}, index=["other"])
    results = await api.search(("d",), query="zzz")
    scores = {r.key: r.score for r in results}
    assert scores["plain"] == pytest.approx(1.0)
    assert scores["other"] == pytest.approx(1.0)
    assert scores["skipped"] is None
    assert results[-1].key == "skipped"  # unindexed items come last
    # re-putting without index=False indexes the item
    await api.put(("d",), "skipped", {"text": "zzz"})
    rescored = {r.key: r.score for r in await api.search(("d",), query="zzz")}
    assert rescored["skipped"] == pytest.approx(1.0)
    # and re-putting with index=False drops its vectors
    await api.put(("d",), "plain", {"text": "zzz"}, index=False)
    dropped = {r.key: r.score for r in await api.search(("d",), query="zzz")}
    assert dropped["plain"] is None


async def test_json_paths(make_api):
    api = make_api(index=letters_index(["items[*].text", "meta.title"]))
    await api.put(("p",), "list", {"items": [{"text": "aaaa"}, {"text": "kkkk"}]})
    await api.put(("p",), "title", {"meta": {"title": "kkkk"}, "items": []})
    await api.put(("p",), "none", {"unrelated": "kkkk"})
    results = await api.search(("p",), query="kkkk")
    assert [r.key for r in results] == ["title", "list", "none"]
    assert [r.score for r in results[:2]] == [pytest.approx(1.0), pytest.approx(1.0)]
    assert results[2].score is None
    # the best matching element of the list decides the score
    assert (await api.search(("p",), query="aaaa"))[0].key == "list"


async def test_json_path_index_and_whole_value(make_api):
    api = make_api(index=letters_index(["items[0].text"]))
    await api.put(("p",), "k", {"items": [{"text": "aaaa"}, {"text": "kkkk"}]})
    only_first = await api.search(("p",), query="kkkk")
    assert only_first[0].score == pytest.approx(0.0)
    whole = make_api(index=letters_index())  # default fields: ["$"]
    await whole.put(("p",), "k", {"t": "ttt"})
    hit = await whole.search(("p",), query='{"t": "ttt"}')
    assert hit[0].score == pytest.approx(1.0)


async def test_semantic_refuses_wrong_dims(make_api):
    api = make_api(index={"dims": 3, "embed": letters, "fields": ["text"]})
    with pytest.raises(ValueError, match="dims=3"):
        await api.put(("d",), "k", {"text": "abc"})
    assert await api.get(("d",), "k") is None


async def test_ttl_expiry_and_sweep(make_api):
    api = make_api()
    clock = api.use_clock(Clock())
    await api.put(("t",), "short", {"v": 1}, ttl=1)
    await api.put(("t",), "long", {"v": 2}, ttl=10)
    await api.put(("t",), "forever", {"v": 3})
    await api.put(("gone",), "k", {"v": 4}, ttl=0.5)
    clock.advance(seconds=59)
    assert (await api.get(("t",), "short", refresh_ttl=False)).value == {"v": 1}
    clock.advance(seconds=2)
    assert await api.get(("t",), "short") is None
    assert sorted(r.key for r in await api.search(("t",))) == ["forever", "long"]
    assert await api.list_namespaces() == [("t",)]
    assert await api.sweep_ttl() == 2
    assert await api.sweep_ttl() == 0
    clock.advance(minutes=20)
    assert await api.sweep_ttl() == 1
    assert [r.key for r in await api.search(())] == ["forever"]


async def test_ttl_refresh_on_read(make_api):
    api = make_api()
    clock = api.use_clock(Clock())
    await api.put(("t",), "g", {"v": 1}, ttl=1)
    await api.put(("t",), "s", {"v": 2}, ttl=1)
    await api.put(("t",), "n", {"v": 3}, ttl=1)
    clock.advance(seconds=50)
    assert await api.get(("t",), "g") is not None  # refreshes: expires at +110 s
    assert len(await api.search(("t",), filter={"v": 2})) == 1  # refreshes "s"
    assert await api.get(("t",), "n", refresh_ttl=False) is not None
    clock.advance(seconds=50)  # t = 100 s
    assert await api.get(("t",), "g", refresh_ttl=False) is not None
    assert await api.get(("t",), "s", refresh_ttl=False) is not None
    assert await api.get(("t",), "n") is None
    clock.advance(seconds=15)  # t = 115 s
    assert await api.get(("t",), "g") is None
    assert await api.search(("t",), refresh_ttl=False) == []


async def test_ttl_refresh_inside_a_write_batch(make_api):
    api = make_api()
    clock = api.use_clock(Clock())
    await api.put(("t",), "g", {"v": 1}, ttl=1)
    clock.advance(seconds=50)
    results = await api.batch([PutOp(("t",), "other", {"v": 2}), GetOp(("t",), "g")])
    assert results[1].value == {"v": 1}
    clock.advance(seconds=50)
    assert await api.get(("t",), "g", refresh_ttl=False) is not None


async def test_ttl_config_defaults(make_api):
    api = make_api(ttl={"default_ttl": 2, "refresh_on_read": False})
    clock = api.use_clock(Clock())
    await api.put(("t",), "default", {"v": 1})
    await api.put(("t",), "explicit_none", {"v": 2}, ttl=None)
    await api.put(("t",), "explicit", {"v": 3}, ttl=5)
    clock.advance(minutes=1.5)
    assert await api.get(("t",), "default") is not None  # no refresh by config
    clock.advance(minutes=1)
    assert await api.get(("t",), "default") is None
    assert await api.get(("t",), "explicit_none") is not None
    assert await api.get(("t",), "explicit", refresh_ttl=True) is not None  # refreshed to +7.5
    clock.advance(minutes=4)
    assert await api.get(("t",), "explicit") is not None


async def test_put_over_expired_item_is_new(make_api):
    api = make_api()
    clock = api.use_clock(Clock())
    await api.put(("t",), "k", {"v": 1}, ttl=1)
    old = await api.get(("t",), "k")
    clock.advance(minutes=2)
    await api.put(("t",), "k", {"v": 2})
    new = await api.get(("t",), "k")
    assert new.value == {"v": 2}
    assert new.created_at > old.created_at
    clock.advance(minutes=1000)
    assert await api.get(("t",), "k") is not None  # the new put has no TTL


async def test_ttl_validation(make_api):
    api = make_api()
    with pytest.raises(ValueError, match="ttl"):
        await api.put(("t",), "k", {"v": 1}, ttl=-1)
    with pytest.raises(ValueError, match="Unknown TTL config"):
        make_api(ttl={"default": 1})
