"""Parts written once for sync and async callers: the observers' fan-out, built from
:class:`RunObserver`'s own list of reports, and the saver call of a write effect."""

from __future__ import annotations

import inspect
from typing import Any

from stategraph.observe import Observers, RunObserver, resolve
from stategraph.pregel import _effects as fx


def test_observers_fan_out_every_report_with_its_arguments() -> None:
    reports = [
        name
        for name, value in vars(RunObserver).items()
        if callable(value) and not name.startswith("_")
    ]
    seen: list[tuple[str, tuple[Any, ...]]] = []

    class Everything(RunObserver):
        pass

    for name in reports:
        setattr(Everything, name, lambda self, *args, _n=name: seen.append((_n, args)))
    fan = Observers([Everything()])
    expected = []
    for name in reports:
        method = getattr(fan, name)
        assert method.__name__ == name
        args = tuple(range(len(inspect.signature(getattr(RunObserver, name)).parameters) - 1))
        assert method(*args) is None
        expected.append((name, args))
    assert seen == expected
    assert len(reports) == 26 and {"run_started", "model_failed"} <= set(reports)


def test_fan_out_returns_an_awaitable_only_when_an_observer_does() -> None:
    class Async(RunObserver):
        async def step_finished(self, run: Any, step: int) -> None:
            finished.append(step)

    finished: list[int] = []

    pending = Observers([Async()]).step_finished("run", 3)
    assert inspect.isawaitable(pending)
    resolve(pending)
    assert finished == [3]
    assert Observers([Async()]).step_started("run", 3, []) is None


def test_saver_call_of_each_write_effect() -> None:
    put = fx.Put({"c": 1}, {"id": "x"}, {"m": 1}, {"a": 1}, blocking=True)
    writes = fx.PutWrites({"c": 1}, [("a", 1)], "t", "p", blocking=False)
    fenced = {"c": 1, "token": 7}
    assert fx.saver_call(put, fenced) == ("put", (fenced, {"id": "x"}, {"m": 1}, {"a": 1}))
    assert fx.saver_call(writes, fenced) == ("put_writes", (fenced, [("a", 1)], "t", "p"))
    assert fx.saver_call(writes, fenced, False) == ("put_writes", (fenced, [("a", 1)], "t"))
