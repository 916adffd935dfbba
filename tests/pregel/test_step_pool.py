"""The sync shell's step thread pools: reused by later runs, never shared by two runs."""

from __future__ import annotations

import os
import threading
import time
from typing import Any

import pytest
from tests.pregel.forked_child import wait_for_child

from stategraph.channels import LastValue, Topic
from stategraph.pregel import NodeBuilder, Pregel
from stategraph.pregel import _step_pool as step_pool
from stategraph.types import StreamWriter


def _fan(funcs: dict[str, Any]) -> Pregel:
    """Every function subscribes to "inp" and appends its output to the topic "out"."""
    return Pregel(
        nodes={
            name: NodeBuilder().subscribe_only("inp").do(f).write_to("out")
            for name, f in funcs.items()
        },
        channels={"inp": LastValue(int), "out": Topic(object)},
        input_channels="inp",
        output_channels="out",
    )


def test_later_runs_reuse_the_worker_threads_of_earlier_runs() -> None:
    seen: list[threading.Thread] = []  # strong references: no object is recycled

    def work(x: int) -> int:
        seen.append(threading.current_thread())
        return x

    app = _fan({"a": work, "b": work})
    for i in range(6):
        assert app.invoke(i) == [i, i]
    assert len(seen) == 12
    # the caller runs one task of each step itself, the pool the other
    pooled = [t for t in seen if t is not threading.main_thread()]
    assert len(pooled) == 6
    # one pool of max(4, 2) threads served all six runs (a pool per run would have
    # started at least one new thread per run)
    assert len({id(t) for t in pooled}) <= 4


def test_nested_runs_on_pool_threads_get_pools_of_their_own() -> None:
    inner_threads: list[threading.Thread] = []

    def leaf(x: int) -> int:
        inner_threads.append(threading.current_thread())
        return x * 10

    inner = _fan({"p": leaf, "q": leaf})

    def outer_node(x: int) -> int:
        # runs on the outer run's pool; the inner run needs two threads of its own
        return sum(inner.invoke(x))

    outer = _fan({"left": outer_node, "right": outer_node})
    for i in range(1, 4):
        assert outer.invoke(i) == [20 * i, 20 * i]
    assert len(inner_threads) == 12


def test_a_run_stopped_during_a_step_waits_for_its_tasks_and_drops_its_pool() -> None:
    done: list[str] = []
    slow_thread: list[threading.Thread] = []

    def talks(x: int, writer: StreamWriter) -> int:
        writer("hello")
        return x

    def slow(x: int) -> int:
        slow_thread.append(threading.current_thread())
        time.sleep(0.3)
        done.append("slow")
        return x

    app = _fan({"talks": talks, "slow": slow})
    stream = app.stream(1, stream_mode="custom")
    assert next(stream) == "hello"
    stream.close()  # the caller stops reading while "slow" still runs
    assert done == ["slow"]  # it finished before the run ended
    # its pool was shut down (threads joined), not kept for later runs
    assert len(slow_thread) == 1 and not slow_thread[0].is_alive()


def test_failed_runs_still_give_correct_results_on_reused_pools() -> None:
    def boom(x: int) -> int:
        raise ValueError(f"bad {x}")

    def fine(x: int) -> int:
        return x

    bad = _fan({"boom": boom, "fine": fine})
    good = _fan({"a": fine, "b": fine})
    for i in range(3):
        with pytest.raises(ValueError, match=f"bad {i}"):
            bad.invoke(i)
        assert good.invoke(i) == [i, i]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_does_not_use_its_parents_idle_pools() -> None:
    app = _fan({"a": lambda x: x, "b": lambda x: x + 1})
    assert app.invoke(1) == [1, 2]
    assert step_pool.idle_pools() >= 1
    read, write = os.pipe()
    import warnings

    with warnings.catch_warnings():
        # Python 3.12+ warns about forking a process that has threads
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 1
        try:
            os.close(read)
            result = app.invoke(5)
            os.write(write, repr((step_pool.idle_pools(), result)).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    code = wait_for_child(pid, "the forked child hung running a parallel step")
    with os.fdopen(read) as f:
        report = f.read()
    assert code == 0
    # the child forgot the parent's pools, ran on a new one and kept only that one
    assert report == repr((1, [5, 6]))
