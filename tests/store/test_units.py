"""Unit tests: items, field paths, filters, embedders, config validation, import cost."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from datetime import datetime, timezone

import pytest

from stategraph.store._embed import extract_texts, tokenize_path
from stategraph.store._filters import MISSING, lookup, matches, validate_filter
from stategraph.store.base import NOT_PROVIDED, GetOp, Item, PutOp, SearchItem, SearchOp
from stategraph.store.memory import InMemoryStore

from .helpers import Clock, letters

NOW = datetime(2025, 1, 2, 3, 4, 5, tzinfo=timezone.utc)


def test_item_dict_repr_equality():
    item = Item(value={"a": 1}, key="k", namespace=("x", "y"), created_at=NOW, updated_at=NOW)
    assert item.dict() == {
        "namespace": ["x", "y"],
        "key": "k",
        "value": {"a": 1},
        "created_at": NOW.isoformat(),
        "updated_at": NOW.isoformat(),
    }
    assert "namespace=('x', 'y')" in repr(item)
    same = Item(
        value={"a": 1},
        key="k",
        namespace=["x", "y"],  # type: ignore[arg-type]
        created_at=NOW.isoformat(),
        updated_at=NOW.isoformat(),
    )
    assert same == item and hash(same) == hash(item)
    assert same.namespace == ("x", "y")
    assert item != Item(
        value={"a": 2}, key="k", namespace=("x", "y"), created_at=NOW, updated_at=NOW
    )
    hit = SearchItem(("x", "y"), "k", {"a": 1}, NOW, NOW, 0.5)
    assert hit.dict()["score"] == 0.5
    assert hit == item and isinstance(hit, Item)
    assert repr(hit).endswith("score=0.5)")


def test_op_defaults_and_not_provided():
    assert GetOp(("a",), "k").refresh_ttl is True
    assert SearchOp(("a",)) == SearchOp(("a",), None, 10, 0, None, True)
    assert PutOp(("a",), "k", None).ttl is None
    assert repr(NOT_PROVIDED) == "NOT_PROVIDED" and not NOT_PROVIDED


@pytest.mark.parametrize(
    ("path", "tokens"),
    [
        ("$", ()),
        ("text", ("text",)),
        ("a.b", ("a", "b")),
        ("$.a.b", ("a", "b")),
        ("items[*].text", ("items", tokenize_path("x[*]")[1], "text")),
        ("items[0].text", ("items", 0, "text")),
        ("items[-1]", ("items", -1)),
        ("m[1][2]", ("m", 1, 2)),
    ],
)
def test_tokenize_path(path, tokens):
    assert tokenize_path(path) == tokens


@pytest.mark.parametrize("path", ["", "a..b", "a[x]", "a[1", "a]", "a.", "a[0]b"])
def test_tokenize_path_rejects_bad_paths(path):
    with pytest.raises(ValueError, match="path"):
        tokenize_path(path)


def test_extract_texts():
    value = {
        "text": "hi",
        "n": 5,
        "flag": True,
        "none": None,
        "items": [{"text": "a"}, {"text": "b"}, {"other": 1}],
        "d": {"z": 1, "a": [2]},
    }
    assert extract_texts(value, "text") == ["hi"]
    assert extract_texts(value, "n") == ["5"]
    assert extract_texts(value, "flag") == ["true"]
    assert extract_texts(value, "none") == []
    assert extract_texts(value, "missing.deep") == []
    assert extract_texts(value, "items[*].text") == ["a", "b"]
    assert extract_texts(value, "items[1].text") == ["b"]
    assert extract_texts(value, "items[-1].text") == []
    assert extract_texts(value, "items[9].text") == []
    assert extract_texts(value, "d") == ['{"a": [2], "z": 1}']
    assert extract_texts(value, "d[*]") == ["1", "[2]"]
    assert extract_texts({"a": 1}, "$") == ['{"a": 1}']


def test_filter_lookup():
    value = {"a": {"b": [10, {"c": 3}]}, "x.y": 7}
    assert lookup(value, "a.b.0") == 10
    assert lookup(value, "a.b.1.c") == 3
    assert lookup(value, "a.b.-1.c") == 3
    assert lookup(value, "x.y") == 7  # literal dotted key wins
    assert lookup(value, "a.b.5") is MISSING
    assert lookup(value, "a.z") is MISSING
    assert matches(value, None) and matches(value, {})
    assert matches(value, {"a.b.1.c": {"$gte": 3, "$lte": 3}})
    assert not matches(value, {"a": {"b": [10]}})


def test_filter_validation():
    validate_filter({"a": 1, "b": {"$gt": 1}, "c": {"d": {"$ne": 2}}})
    with pytest.raises(ValueError, match=r"\$nope"):
        validate_filter({"c": {"d": {"$nope": 2}}})
    with pytest.raises(ValueError, match="non-empty"):
        validate_filter({"": 1})
    with pytest.raises(TypeError, match="dict"):
        validate_filter([("a", 1)])  # type: ignore[arg-type]


class LetterModel:
    """An embedding object with the LangChain shape (sync and async methods)."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def embed_documents(self, texts):
        self.calls.append("docs")
        return letters(texts)

    def embed_query(self, text):
        self.calls.append("query")
        return letters([text])[0]

    async def aembed_documents(self, texts):
        self.calls.append("adocs")
        return letters(texts)

    async def aembed_query(self, text):
        self.calls.append("aquery")
        return letters([text])[0]


def test_embedding_object_sync_and_async():
    model = LetterModel()
    store = InMemoryStore(index={"dims": 26, "embed": model, "fields": ["t"]})
    store.put(("a",), "k", {"t": "abc"})
    assert store.search(("a",), query="abc")[0].score == pytest.approx(1.0)
    assert model.calls == ["docs", "query"]

    async def run():
        await store.aput(("a",), "k2", {"t": "xyz"})
        return await store.asearch(("a",), query="xyz")

    assert asyncio.run(run())[0].key == "k2"
    assert model.calls[2:] == ["adocs", "aquery"]


def test_async_embedding_function():
    async def aembed(texts):
        await asyncio.sleep(0)
        return letters(texts)

    store = InMemoryStore(index={"dims": 26, "embed": aembed, "fields": ["t"]})
    store.put(("a",), "k", {"t": "abc"})  # sync call: runs the coroutine on a fresh loop

    async def run():
        await store.aput(("a",), "k2", {"t": "xyz"})
        with pytest.raises(RuntimeError, match="async methods"):
            store.put(("a",), "k3", {"t": "q"})
        return await store.asearch(("a",), query="abc")

    assert [r.key for r in asyncio.run(run())] == ["k", "k2"]


def test_embedding_output_is_checked():
    store = InMemoryStore(index={"dims": 26, "embed": lambda texts: [[1.0] * 26], "fields": ["t"]})
    with pytest.raises(ValueError, match="one vector per text"):
        store.put(("a",), "k", {"t": ["x", "y"]}, index=["t[*]"])


@pytest.mark.parametrize(
    ("index", "error", "fragment"),
    [
        ({"dims": 26}, ValueError, "embed"),
        ({"dims": 0, "embed": letters}, ValueError, "dims"),
        ({"dims": 26, "embed": "openai:text-embedding-3-small"}, ValueError, "provider"),
        ({"dims": 26, "embed": 42}, TypeError, "embed"),
        ({"dims": 26, "embed": letters, "fields": ["a[x]"]}, ValueError, "a\\[x\\]"),
        ({"dims": 26, "embed": letters, "bogus": 1}, ValueError, "bogus"),
    ],
)
def test_index_config_validation(index, error, fragment):
    with pytest.raises(error, match=fragment):
        InMemoryStore(index=index)


def test_ttl_sweeper_thread():
    store = InMemoryStore(ttl={"sweep_interval_minutes": 0.0005})
    clock = Clock()
    store._now = clock
    store.put(("a",), "k", {"v": 1}, ttl=1)
    clock.advance(minutes=2)
    deadline = time.monotonic() + 5
    while store._backend.data and time.monotonic() < deadline:
        time.sleep(0.01)
    assert store._backend.data == {}
    assert store.stop_ttl_sweeper(timeout=5) is True
    assert store.stop_ttl_sweeper() is True


def test_store_base_import_is_light():
    code = (
        "import sys, stategraph.store.base, stategraph.store.memory;"
        "heavy = {'asyncio', 'sqlite3', 'concurrent.futures', 'pydantic', 'ormsgpack'};"
        "print(sorted(heavy & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
