"""The ``tasks`` stream's result of an entrypoint (issue 22 item 6): its return value
under the output channel's name, whatever its shape, as LangGraph shows it."""

from __future__ import annotations

from typing import Any

from stategraph.func import entrypoint


def _results(wf: Any, value: Any) -> list[Any]:
    chunks = list(wf.stream(value, stream_mode="tasks"))
    return [c["result"] for c in chunks if "result" in c and c["name"] == "wf"]


def test_a_dict_result_is_not_taken_apart() -> None:
    @entrypoint()
    def wf(x: int) -> dict[str, int]:
        return {"double": x * 2}

    assert _results(wf, 4) == [{"__end__": {"double": 8}}]


def test_a_list_result_is_not_merged() -> None:
    @entrypoint()
    def wf(x: int) -> list[dict[str, int]]:
        return [{"a": x}, {"b": x + 1}]

    assert _results(wf, 1) == [{"__end__": [{"a": 1}, {"b": 2}]}]


def test_a_plain_result_is_under_the_end_channel() -> None:
    @entrypoint()
    def wf(x: int) -> int:
        return x + 1

    assert _results(wf, 1) == [{"__end__": 2}]
