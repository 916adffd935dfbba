"""Stored regexes cost bounded time to load (issue 20 section 3).

Compiling ``IGNORECASE`` over wide character classes folds the case of every code
point: before the compile budget, 809 bytes took seconds. Every payload under 1 MB
must load (or be refused) within 100 ms of CPU, in the serializer and in the
LangGraph importer alike; ordinary patterns still round-trip.
"""

from __future__ import annotations

import gc
import re
import time
from collections.abc import Callable
from typing import Any

import ormsgpack
import pytest

from stategraph.checkpoint.langgraph_import._decode import LangGraphDecoder
from stategraph.checkpoint.serde import _ext as ext
from stategraph.checkpoint.serde.base import DeserializationError
from stategraph.checkpoint.serde.jsonplus import JsonPlusSerializer

LIMIT_S = 0.1


def _ours(patterns: list[tuple[str | bytes, int]]) -> bytes:
    return ormsgpack.packb(
        [ormsgpack.Ext(ext.EXT_PATTERN, ormsgpack.packb([p, f])) for p, f in patterns]
    )


def _langgraph(patterns: list[tuple[str | bytes, int]]) -> bytes:
    # LangGraph writes a pattern as (module, name, [pattern, flags]) with code 1
    return ormsgpack.packb(
        [ormsgpack.Ext(1, ormsgpack.packb(["re", "compile", [p, f]])) for p, f in patterns]
    )


HOSTILE: dict[str, list[tuple[str | bytes, int]]] = {
    "809-bytes-ignorecase-bmp": [("[\u0100-\uffff]" * 100, re.I)],
    "ignorecase-full-unicode": [("[\u0000-\U0010ffff]" * 100, re.I)],
    "inline-ignorecase-flag": [("(?i)" + "[\u0100-\uffff]" * 100, 0)],
    "scoped-ignorecase-group": [("(?i:" + "[\u0100-\uffff]" * 100 + ")", 0)],
    "in-repeat-and-branch": [("(?:[\u0100-\uffff]|x)+" * 60, re.I)],
    "many-small-classes": [("[a-z]" * 13000, re.I)],
    "plain-full-ranges": [("[\u0000-\U0010ffff]" * 400, 0)],
    "long-literal": [("a" * 65536, re.I)],
    "many-distinct-patterns": [(f"[a-z]x{i}", re.I) for i in range(20000)],
}


def _cpu(fn: Callable[[], Any]) -> tuple[float, BaseException | None]:
    """CPU time of ``fn`` (best of three, after a collection: the bound is about the
    work a payload asks for, not about a collector pause on a busy test machine)."""
    best = float("inf")
    err: BaseException | None = None
    for _ in range(3):
        re.purge()
        gc.collect()
        start = time.thread_time()
        try:
            fn()
            err = None
        except DeserializationError as exc:
            err = exc
        best = min(best, time.thread_time() - start)
    return best, err


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_patterns_load_or_fail_within_100ms(name: str) -> None:
    re.purge()
    ours = _ours(HOSTILE[name])
    theirs = _langgraph(HOSTILE[name])
    assert len(ours) < 1_000_000 and len(theirs) < 1_000_000
    spent, err = _cpu(lambda: JsonPlusSerializer().loads_typed(("msgpack", ours)))
    assert spent < LIMIT_S, f"{name}: serde took {spent:.3f}s"
    assert err is not None and "regular expression" in str(err)
    re.purge()
    spent, err = _cpu(lambda: LangGraphDecoder().loads_typed(("msgpack", theirs)))
    assert spent < LIMIT_S, f"{name}: importer took {spent:.3f}s"
    assert err is not None and "regular expression" in str(err)


def test_ordinary_patterns_still_round_trip_in_both_paths() -> None:
    serde = JsonPlusSerializer()
    patterns = [
        re.compile(r"^[A-Za-z_][\w.-]*@[a-z0-9-]+(\.[a-z]{2,})+$", re.I),
        re.compile(r"[\u00c0-\u017f]+", re.I),  # Latin letters with accents
        re.compile(r"[\u0000-\U0010ffff]", re.S),
        re.compile(rb"[\x00-\xff]+", re.I),
        re.compile(r"(?i)hello|world"),
    ]
    for pattern in patterns:
        assert serde.loads_typed(serde.dumps_typed(pattern)) == pattern
    loaded = LangGraphDecoder().loads_typed(
        ("msgpack", _langgraph([(p.pattern, p.flags) for p in patterns]))
    )
    assert loaded == patterns
    many = [re.compile(f"item-{i}-[a-z]+", re.I) for i in range(100)]
    assert serde.loads_typed(serde.dumps_typed(many)) == many


def test_a_malformed_pattern_is_a_deserialization_error() -> None:
    with pytest.raises(DeserializationError, match="Malformed regular expression"):
        JsonPlusSerializer().loads_typed(("msgpack", _ours([("[unclosed", 0)])))
