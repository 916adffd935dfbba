"""One behaviour suite run against every node cache, sync and async."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from stategraph.cache.base import BaseCache, FullKey, Namespace
from stategraph.cache.memory import InMemoryCache
from stategraph.cache.sqlite import SqliteCache
from stategraph.checkpoint.serde.jsonplus import JsonPlusSerializer

NS: Namespace = ("node",)


class FakeClock:
    """A controllable time source (seconds)."""

    def __init__(self, now: float = 1_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


class CountingSerde:
    """A JSON serializer that counts its calls (stands in for any custom serde)."""

    def __init__(self) -> None:
        self.dumps = 0
        self.loads = 0

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        self.dumps += 1
        return "json", json.dumps(obj).encode()

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        self.loads += 1
        tag, payload = data
        assert tag == "json"
        return json.loads(payload)


def _make(kind: str, clock: FakeClock, serde: Any = None, path: str = ":memory:") -> BaseCache[Any]:
    if kind == "memory":
        return InMemoryCache(serde=serde, clock=clock)
    return SqliteCache(path=path, serde=serde, clock=clock)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def make() -> Iterator[Callable[..., BaseCache[Any]]]:
    """Builds caches like ``_make`` and closes the SQLite ones after the test."""
    made: list[BaseCache[Any]] = []

    def factory(*args: Any, **kwargs: Any) -> BaseCache[Any]:
        made.append(_make(*args, **kwargs))
        return made[-1]

    yield factory
    for cache in made:
        if isinstance(cache, SqliteCache):
            cache.close()


@pytest.fixture(params=["memory", "sqlite"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def cache(kind: str, clock: FakeClock, make: Callable[..., BaseCache[Any]]) -> BaseCache[Any]:
    return make(kind, clock)


class Ops:
    """Runs the cache API either synchronously or through the async methods."""

    def __init__(self, cache: BaseCache[Any], use_async: bool) -> None:
        self.cache = cache
        self.use_async = use_async

    def get(self, keys: Sequence[FullKey]) -> dict[FullKey, Any]:
        if self.use_async:
            return asyncio.run(self.cache.aget(keys))
        return self.cache.get(keys)

    def set(self, pairs: Mapping[FullKey, tuple[Any, int | None]]) -> None:
        if self.use_async:
            asyncio.run(self.cache.aset(pairs))
        else:
            self.cache.set(pairs)

    def clear(self, namespaces: Sequence[Namespace] | None = None) -> None:
        if self.use_async:
            asyncio.run(self.cache.aclear(namespaces))
        else:
            self.cache.clear(namespaces)


@pytest.fixture(params=["sync", "async"])
def ops(request: pytest.FixtureRequest, cache: BaseCache[Any]) -> Ops:
    return Ops(cache, request.param == "async")


VALUES: list[Any] = [
    {"messages": ["a", "b"], "count": 3},
    [1, 2.5, "x", None, True],
    "text",
    42,
    None,
    {"nested": {"deep": [{"k": "v"}]}},
]


def test_missing_keys_are_absent(ops: Ops) -> None:
    assert ops.get([]) == {}
    assert ops.get([(NS, "nope"), (("other",), "nope")]) == {}


@pytest.mark.parametrize("value", VALUES)
def test_round_trip(ops: Ops, value: Any) -> None:
    ops.set({(NS, "k"): (value, None)})
    assert ops.get([(NS, "k")]) == {(NS, "k"): value}


def test_many_keys_and_namespaces(ops: Ops) -> None:
    pairs: dict[FullKey, tuple[Any, int | None]] = {
        ((f"ns{i % 3}", "sub"), f"key{i}"): ({"i": i}, None) for i in range(1000)
    }
    ops.set(pairs)
    keys = [*pairs, (("ns0", "sub"), "missing")]
    got = ops.get(keys)
    assert len(got) == 1000
    assert got[(("ns2", "sub"), "key5")] == {"i": 5}
    assert all(got[k] == v for k, (v, _) in pairs.items())


def test_only_requested_keys_are_returned(ops: Ops) -> None:
    ops.set({(NS, "a"): (1, None), (NS, "b"): (2, None), (("x",), "a"): (3, None)})
    assert ops.get([(NS, "a")]) == {(NS, "a"): 1}
    assert ops.get([(("x",), "a"), (NS, "b")]) == {(("x",), "a"): 3, (NS, "b"): 2}


def test_overwrite(ops: Ops) -> None:
    ops.set({(NS, "k"): ("old", None)})
    ops.set({(NS, "k"): ("new", None)})
    assert ops.get([(NS, "k")]) == {(NS, "k"): "new"}


def test_namespaces_are_exact_and_unambiguous(ops: Ops) -> None:
    tricky: list[Namespace] = [(), ("",), ("a",), ("a", "b"), ("a,b",), ('a"', "]"), ("ünï", "ç")]
    ops.set({(ns, "k"): (i, None) for i, ns in enumerate(tricky)})
    assert ops.get([(ns, "k") for ns in tricky]) == {(ns, "k"): i for i, ns in enumerate(tricky)}


def test_values_are_never_shared_mutable_state(ops: Ops) -> None:
    value = {"items": [1, 2]}
    ops.set({(NS, "k"): (value, None)})
    value["items"].append(3)  # mutating the original after set
    first = ops.get([(NS, "k")])[(NS, "k")]
    assert first == {"items": [1, 2]}
    first["items"].append(99)  # mutating what get returned
    assert ops.get([(NS, "k")])[(NS, "k")] == {"items": [1, 2]}


def test_ttl_expiry(ops: Ops, clock: FakeClock) -> None:
    ops.set({(NS, "short"): ("s", 10), (NS, "forever"): ("f", None), (NS, "long"): ("l", 100)})
    clock.advance(9.9)
    assert ops.get([(NS, "short"), (NS, "forever"), (NS, "long")]) == {
        (NS, "short"): "s",
        (NS, "forever"): "f",
        (NS, "long"): "l",
    }
    clock.advance(0.1)  # exactly at expiry: gone
    assert ops.get([(NS, "short"), (NS, "forever"), (NS, "long")]) == {
        (NS, "forever"): "f",
        (NS, "long"): "l",
    }
    clock.advance(10_000)
    assert ops.get([(NS, "short"), (NS, "forever"), (NS, "long")]) == {(NS, "forever"): "f"}


def test_resetting_renews_ttl(ops: Ops, clock: FakeClock) -> None:
    ops.set({(NS, "k"): ("v1", 10)})
    clock.advance(8)
    ops.set({(NS, "k"): ("v2", 10)})
    clock.advance(8)
    assert ops.get([(NS, "k")]) == {(NS, "k"): "v2"}
    ops.set({(NS, "k"): ("v3", None)})
    clock.advance(1e9)
    assert ops.get([(NS, "k")]) == {(NS, "k"): "v3"}


def test_zero_or_negative_ttl_stores_nothing(ops: Ops) -> None:
    ops.set({(NS, "k"): ("old", None)})
    ops.set({(NS, "k"): ("new", 0), (NS, "neg"): ("x", -5)})
    assert ops.get([(NS, "k"), (NS, "neg")]) == {}


def test_bad_ttl_is_rejected_before_any_write(ops: Ops) -> None:
    with pytest.raises(TypeError, match="TTL must be a number of seconds or None, got '10'"):
        ops.set({(NS, "ok"): ("v", None), (NS, "bad"): ("v", "10")})  # type: ignore[dict-item]
    assert ops.get([(NS, "ok")]) == {}


def test_clear_everything(ops: Ops) -> None:
    ops.set({(NS, "a"): (1, None), (("b",), "b"): (2, 60)})
    ops.clear()
    assert ops.get([(NS, "a"), (("b",), "b")]) == {}
    ops.set({(NS, "a"): (3, None)})  # usable after clearing
    assert ops.get([(NS, "a")]) == {(NS, "a"): 3}


def test_clear_namespaces_exactly(ops: Ops) -> None:
    ops.set(
        {
            (("a",), "k"): (1, None),
            (("a", "b"), "k"): (2, None),
            (("c",), "k"): (3, None),
            (("d",), "k"): (4, None),
        }
    )
    ops.clear([("a",), ("c",), ("missing",)])
    assert ops.get([(("a",), "k"), (("a", "b"), "k"), (("c",), "k"), (("d",), "k")]) == {
        (("a", "b"), "k"): 2,
        (("d",), "k"): 4,
    }
    ops.clear([])
    assert len(ops.get([(("a", "b"), "k"), (("d",), "k")])) == 2


def test_custom_serde_is_used(
    kind: str, clock: FakeClock, make: Callable[..., BaseCache[Any]]
) -> None:
    serde = CountingSerde()
    cache = make(kind, clock, serde=serde)
    cache.set({(NS, "a"): ([1], None), (NS, "b"): ([2], None)})
    assert serde.dumps == 2
    assert cache.get([(NS, "a"), (NS, "b"), (NS, "c")]) == {(NS, "a"): [1], (NS, "b"): [2]}
    assert serde.loads == 2
    assert cache.serde is serde


def test_default_serde_is_json_plus(kind: str) -> None:
    cache = InMemoryCache() if kind == "memory" else SqliteCache()
    assert isinstance(cache.serde, JsonPlusSerializer)
    cache.set({(NS, "k"): ({"t": (1, 2)}, None)})
    assert cache.get([(NS, "k")]) == {(NS, "k"): {"t": (1, 2)}}
    if isinstance(cache, SqliteCache):
        cache.close()


def test_default_clock_is_wall_time(kind: str, make: Callable[..., BaseCache[Any]]) -> None:
    import time

    cache = make(kind, FakeClock())
    cache.clock = time.time
    cache.set({(NS, "k"): ("v", 3600)})
    assert cache.get([(NS, "k")]) == {(NS, "k"): "v"}


def test_expired_entries_are_deleted_lazily_from_memory(
    clock: FakeClock, make: Callable[..., BaseCache[Any]]
) -> None:
    cache = make("memory", clock)
    assert isinstance(cache, InMemoryCache)
    cache.set({(NS, "k"): ("v", 5), (NS, "keep"): ("v", None)})
    clock.advance(5)
    assert (NS, "k") not in cache.get([(NS, "k")])
    assert cache._data == {NS: {"keep": cache._data[NS]["keep"]}}
    cache.set({(("solo",), "k"): ("v", 1)})
    clock.advance(1)
    cache.get([(("solo",), "k")])
    assert ("solo",) not in cache._data


def _rows(cache: SqliteCache[Any]) -> list[tuple[str, str]]:
    return list(cache._conn.execute("SELECT ns, key FROM cache ORDER BY ns, key"))


def test_expired_entries_are_deleted_from_sqlite(clock: FakeClock) -> None:
    with SqliteCache(path=":memory:", serde=CountingSerde(), clock=clock) as cache:
        cache.set({(NS, "a"): ("v", 5), (NS, "b"): ("v", 50), (NS, "keep"): ("v", None)})
        clock.advance(5)
        assert cache.get([(NS, "a")]) == {}
        assert _rows(cache) == [('["node"]', "b"), ('["node"]', "keep")]
        clock.advance(50)
        cache.set({(("other",), "x"): ("v", None)})  # a write sweeps expired rows
        assert _rows(cache) == [('["node"]', "keep"), ('["other"]', "x")]


def test_sqlite_file_is_shared_and_durable(tmp_path: Path, clock: FakeClock) -> None:
    path = str(tmp_path / "cache.db")
    first = SqliteCache(path=path, serde=CountingSerde(), clock=clock)
    second = SqliteCache(path=path, serde=CountingSerde(), clock=clock)
    first.set({(NS, "k"): ({"v": 1}, None)})
    assert second.get([(NS, "k")]) == {(NS, "k"): {"v": 1}}
    second.clear([NS])
    assert first.get([(NS, "k")]) == {}
    first.set({(NS, "durable"): ("yes", None)})
    first.close()
    second.close()
    with SqliteCache(path=path, serde=CountingSerde()) as reopened:
        assert reopened.get([(NS, "durable")]) == {(NS, "durable"): "yes"}
        mode = reopened._conn.execute("PRAGMA journal_mode").fetchone()[0]
        timeout = reopened._conn.execute("PRAGMA busy_timeout").fetchone()[0]
    assert (mode, timeout) == ("wal", 5000)


def test_sqlite_concurrent_processes(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.db")
    script = (
        "import json, sys\n"
        "from stategraph.cache.sqlite import SqliteCache\n"
        "class S:\n"
        "    def dumps_typed(self, o): return 'json', json.dumps(o).encode()\n"
        "    def loads_typed(self, d): return json.loads(d[1])\n"
        "c = SqliteCache(path=sys.argv[1], serde=S())\n"
        "for i in range(50):\n"
        "    c.set({((sys.argv[2],), str(i)): (i, None)})\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", script, path, f"p{n}"]) for n in range(3)]
    assert [p.wait(timeout=60) for p in procs] == [0, 0, 0]
    with SqliteCache(path=path, serde=CountingSerde()) as cache:
        got = cache.get([((f"p{n}",), str(i)) for n in range(3) for i in range(50)])
    assert len(got) == 150 and got[(("p2",), "49")] == 49


def test_thread_safety(kind: str, clock: FakeClock, make: Callable[..., BaseCache[Any]]) -> None:
    cache = make(kind, clock)
    errors: list[BaseException] = []

    def worker(n: int) -> None:
        try:
            for i in range(100):
                cache.set({((f"t{n}",), str(i)): ({"n": n, "i": i}, None)})
                got = cache.get([((f"t{n}",), str(i))])
                assert got == {((f"t{n}",), str(i)): {"n": n, "i": i}}
                if i % 25 == 0:
                    cache.clear([(f"gone{n}",)])
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    keys = [((f"t{n}",), str(i)) for n in range(6) for i in range(100)]
    assert len(cache.get(keys)) == 600


async def test_async_methods_run_concurrently(
    kind: str, clock: FakeClock, make: Callable[..., BaseCache[Any]]
) -> None:
    cache = make(kind, clock)
    await asyncio.gather(*(cache.aset({(NS, str(i)): (i, None)}) for i in range(20)))
    results = await asyncio.gather(*(cache.aget([(NS, str(i))]) for i in range(20)))
    assert [r[(NS, str(i))] for i, r in enumerate(results)] == list(range(20))
    await cache.aclear([NS])
    assert await cache.aget([(NS, "0")]) == {}


async def test_sqlite_async_runs_off_the_event_loop(clock: FakeClock) -> None:
    seen: list[str] = []
    cache = SqliteCache(path=":memory:", serde=CountingSerde(), clock=clock)
    original: Callable[..., Any] = cache.get

    def recording_get(keys: Sequence[FullKey]) -> dict[FullKey, Any]:
        seen.append(threading.current_thread().name)
        return original(keys)

    cache.get = recording_get  # type: ignore[method-assign]
    await cache.aget([(NS, "k")])
    assert seen and seen[0] != threading.current_thread().name
    cache.close()


class _DictCache(BaseCache[Any]):
    """A minimal third-party cache: only the sync methods are written."""

    def __init__(self) -> None:
        super().__init__(serde=CountingSerde())
        self.data: dict[FullKey, Any] = {}

    def get(self, keys: Sequence[FullKey]) -> dict[FullKey, Any]:
        return {k: self.data[k] for k in keys if k in self.data}

    def set(self, pairs: Mapping[FullKey, tuple[Any, int | None]]) -> None:
        self.data.update({k: v for k, (v, _) in pairs.items()})

    def clear(self, namespaces: Sequence[Namespace] | None = None) -> None:
        self.data.clear()


async def test_base_cache_async_defaults_use_sync_methods() -> None:
    cache = _DictCache()
    await cache.aset({(NS, "k"): ("v", None)})
    assert await cache.aget([(NS, "k")]) == {(NS, "k"): "v"}
    await cache.aclear()
    assert cache.data == {}


def test_base_cache_is_abstract() -> None:
    with pytest.raises(TypeError):
        BaseCache()  # type: ignore[abstract]


def test_package_exports_are_lazy() -> None:
    code = (
        "import sys, stategraph.cache\n"
        "assert 'sqlite3' not in sys.modules and 'asyncio' not in sys.modules\n"
        "from stategraph.cache import InMemoryCache, BaseCache\n"
        "import stategraph.cache.memory, stategraph.cache.base\n"
        "bad = [m for m in ('sqlite3', 'asyncio', 'pydantic', 'ormsgpack') if m in sys.modules]\n"
        "assert not bad, bad\n"
        "from stategraph.cache import SqliteCache\n"
        "assert SqliteCache.__module__ == 'stategraph.cache.sqlite'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    import stategraph.cache as pkg

    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        pkg.Nope
