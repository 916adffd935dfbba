"""``_clock.utc_now_iso``: the checkpoint timestamp text, the same as ``isoformat``."""

from __future__ import annotations

import pytest

from stategraph import _clock


class _Fixed:
    def __init__(self, ns: int) -> None:
        self.ns = ns

    def time_ns(self) -> int:
        return self.ns

    def random_bytes(self, n: int) -> bytes:
        return bytes(n)


@pytest.mark.parametrize(
    "ns",
    [
        0,
        1_000_000_000,
        1_700_000_000_123_456_789,
        1_700_000_000_000_000_000,  # no microseconds: isoformat leaves them out
        1_700_000_000_000_001_000,
        1_700_000_001_999_999_999,
        -1_500_000_000,
    ],
)
def test_matches_datetime_isoformat(ns: int) -> None:
    previous = _clock.set_source(_Fixed(ns))
    try:
        assert _clock.utc_now_iso() == _clock.utc_now().isoformat()
        assert _clock.utc_now_iso() == _clock.utc_now().isoformat()  # cached second
    finally:
        _clock.set_source(previous)


def test_a_new_second_is_not_mixed_with_the_cached_one() -> None:
    source = _Fixed(1_700_000_000_500_000_000)
    previous = _clock.set_source(source)
    try:
        first = _clock.utc_now_iso()
        source.ns += 1_000_000_000
        second = _clock.utc_now_iso()
    finally:
        _clock.set_source(previous)
    assert first == "2023-11-14T22:13:20.500000+00:00"
    assert second == "2023-11-14T22:13:21.500000+00:00"
