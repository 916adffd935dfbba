"""Effect transcripts: the sans-I/O loop driven directly, without a shell.

:meth:`Loop.drive` yields typed effects (:mod:`stategraph.pregel._effects`) and takes
their results back. These tests drive it with :func:`_transcribe`, a small driver
written here, and assert the exact sequence of effects a run asks for: which checkpoint
loads and saves, which writes, in which order, with which ``blocking`` flag. The shells'
tests check what a run returns; these check what the loop decides.
"""

from __future__ import annotations

import contextvars
import dataclasses
import itertools
import operator
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.errors import GraphInterrupt
from stategraph.graph import START, StateGraph
from stategraph.pregel import _effects as fx
from stategraph.pregel._sync_shell import run_task_sync
from stategraph.types import Command, RetryPolicy, interrupt


class Log(TypedDict, total=False):
    log: Annotated[list[str], operator.add]


def _transcribe(
    graph: Any, input: Any, config: dict[str, Any] | None = None, durability: str | None = None
) -> tuple[list[Any], Any]:
    """Drive one run of ``graph`` and return ``(effects, outcome)``.

    The loop is made as ``invoke`` makes it (``graph._make_run``) and driven the way
    the synchronous shell drives a step of one task, minus the I/O machinery: each
    effect is recorded, then performed on the run's real saver, always in place (a
    ``blocking=False`` call is made right away, not on a background thread; the
    thread lease is not taken). ``Execute`` runs each task with the shell's own attempt
    runner (:func:`run_task_sync`, retries included) and records the effects
    ``loop.task_finished`` returns, performing its ``PutWrites`` and running the task
    of a ``Spawn`` in the same step. ``outcome`` is the run's output, or the exception
    the loop raised.
    """
    loop = graph._make_run(
        input,
        config,
        context=None,
        modes=frozenset(),
        sink=None,
        output_keys=None,
        interrupt_before=None,
        interrupt_after=None,
        durability=durability,
        subgraphs=False,
    )
    saver = loop.saver
    effects: list[Any] = []
    gen = loop.drive()
    value: Any = None
    try:
        while True:
            effect = gen.send(value)
            effects.append(effect)
            value = None
            match effect:
                case fx.Execute(tasks=tasks):
                    todo = list(tasks)
                    while todo:
                        task = todo.pop(0)
                        contextvars.copy_context().run(run_task_sync, task, loop)
                        for done in loop.task_finished(task):
                            effects.append(done)
                            if isinstance(done, fx.Spawn):
                                todo.append(done.task)
                            else:
                                _put_writes(saver, done)
                case fx.GetTuple(config=wanted):
                    value = saver.get_tuple(wanted)
                case fx.Put():
                    saver.put(
                        effect.config, effect.checkpoint, effect.metadata, effect.new_versions
                    )
                case fx.PutWrites():
                    _put_writes(saver, effect)
                case fx.Flush():
                    pass
                case _:
                    raise AssertionError(f"unexpected effect {effect!r}")
    except StopIteration as stop:
        return effects, stop.value
    except Exception as exc:
        return effects, exc


def _put_writes(saver: Any, effect: fx.PutWrites) -> None:
    saver.put_writes(effect.config, effect.writes, effect.task_id, effect.task_path)


def _brief(effect: Any) -> tuple[Any, ...]:
    """The key fields of an effect, to compare a transcript at a glance (a task's
    writes are named by its path without the ``__pregel_pull`` marker)."""
    match effect:
        case fx.GetTuple(config=config):
            return ("GetTuple", config["configurable"])
        case fx.Put(metadata=metadata, blocking=blocking):
            return ("Put", metadata["source"], metadata["step"], blocking)
        case fx.PutWrites(writes=writes, task_path=path, blocking=blocking):
            return ("PutWrites", path.removeprefix("__pregel_pull~"), writes, blocking)
        case fx.Execute(tasks=tasks):
            return ("Execute", [t.name for t in tasks])
        case fx.Spawn(task=task):
            return ("Spawn", task.name)
        case fx.Flush():
            return ("Flush",)
    raise AssertionError(f"unexpected effect {effect!r}")


def _node(name: str) -> Any:
    def node(state: Log) -> Log:
        return {"log": [name]}

    return node


def _chain(saver: Any = None, second: Any = None, **second_kw: Any) -> Any:
    """``START -> a -> b``: ``a`` logs ``"a"``, ``b`` is ``second`` (logs ``"b"``)."""
    return (
        StateGraph(Log)
        .add_node("a", _node("a"))
        .add_node("b", second or _node("b"), **second_kw)
        .add_edge(START, "a")
        .add_edge("a", "b")
        .compile(checkpointer=saver)
    )


_THREAD = {"configurable": {"thread_id": "t"}}
_LOAD = ("GetTuple", {"thread_id": "t", "checkpoint_ns": ""})


def test_chain_without_saver_only_executes_steps() -> None:
    effects, output = _transcribe(_chain(), {"log": []})

    assert [_brief(e) for e in effects] == [
        ("Execute", ["__start__"]),
        ("Execute", ["a"]),
        ("Execute", ["b"]),
    ]
    assert output == {"log": ["a", "b"]}


@pytest.mark.parametrize(("durability", "blocking"), [("sync", True), ("async", False)])
def test_chain_with_saver_saves_each_step(durability: str, blocking: bool) -> None:
    effects, output = _transcribe(_chain(InMemorySaver()), {"log": []}, _THREAD, durability)

    assert [_brief(e) for e in effects] == [
        _LOAD,
        ("Put", "input", -1, blocking),
        ("Execute", ["__start__"]),
        ("PutWrites", "__start__", [("log", []), ("branch:to:a", None)], blocking),
        ("Put", "loop", 0, blocking),
        ("Execute", ["a"]),
        ("PutWrites", "a", [("log", ["a"]), ("branch:to:b", None)], blocking),
        ("Put", "loop", 1, blocking),
        ("Execute", ["b"]),
        ("PutWrites", "b", [("log", ["b"])], blocking),
        ("Put", "loop", 2, blocking),
        ("Flush",),
    ]
    assert output == {"log": ["a", "b"]}


def test_writes_go_to_the_checkpoint_their_step_ran_from() -> None:
    effects, _ = _transcribe(_chain(InMemorySaver()), {"log": []}, _THREAD, "sync")

    puts = [e for e in effects if isinstance(e, fx.Put)]
    writes = [e for e in effects if isinstance(e, fx.PutWrites)]
    # each checkpoint is saved under the previous one; the first has no parent
    assert "checkpoint_id" not in puts[0].config["configurable"]
    for parent, child in itertools.pairwise(puts):
        assert child.config["configurable"]["checkpoint_id"] == parent.checkpoint["id"]
    # a step's writes belong to the checkpoint saved before the step ran
    for saved, written in zip(puts[:-1], writes, strict=True):
        assert written.config["configurable"]["checkpoint_id"] == saved.checkpoint["id"]
    assert puts[-1].checkpoint["channel_values"]["log"] == ["a", "b"]
    assert puts[-1].new_versions.keys() == {"branch:to:b", "log"}


def test_durability_exit_saves_once_when_the_run_ends() -> None:
    effects, output = _transcribe(_chain(InMemorySaver()), {"log": []}, _THREAD, "exit")

    assert [_brief(e) for e in effects] == [
        _LOAD,
        ("Execute", ["__start__"]),
        ("Execute", ["a"]),
        ("Execute", ["b"]),
        ("Put", "loop", 2, True),
        ("Flush",),
    ]
    # the one checkpoint hangs from the thread's root and holds every step's result
    put = effects[4]
    assert put.config == {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    assert put.checkpoint["channel_values"]["log"] == ["a", "b"]
    assert output == {"log": ["a", "b"]}


def _asks(state: Log) -> Log:
    return {"log": [interrupt("name?")]}


def test_interrupt_saves_the_question_and_stops() -> None:
    effects, outcome = _transcribe(_chain(InMemorySaver(), _asks), {"log": []}, _THREAD, "sync")

    assert isinstance(outcome, GraphInterrupt)
    (asked,) = outcome.args[0]
    assert [_brief(e) for e in effects] == [
        _LOAD,
        ("Put", "input", -1, True),
        ("Execute", ["__start__"]),
        ("PutWrites", "__start__", [("log", []), ("branch:to:a", None)], True),
        ("Put", "loop", 0, True),
        ("Execute", ["a"]),
        ("PutWrites", "a", [("log", ["a"]), ("branch:to:b", None)], True),
        ("Put", "loop", 1, True),
        ("Execute", ["b"]),
        ("PutWrites", "b", [("__interrupt__", (asked,))], True),
        ("Flush",),
    ]
    assert asked.value == "name?"


def test_interrupt_with_durability_exit_saves_checkpoint_then_pending_writes() -> None:
    effects, outcome = _transcribe(_chain(InMemorySaver(), _asks), {"log": []}, _THREAD, "exit")

    assert isinstance(outcome, GraphInterrupt)
    (asked,) = outcome.args[0]
    assert [_brief(e) for e in effects] == [
        _LOAD,
        ("Execute", ["__start__"]),
        ("Execute", ["a"]),
        ("Execute", ["b"]),
        # the last checkpoint reached (after "a"), then the interrupted task's writes
        ("Put", "loop", 1, True),
        ("PutWrites", "b", [("__interrupt__", (asked,))], True),
        ("Flush",),
    ]
    assert effects[5].config["configurable"]["checkpoint_id"] == effects[4].checkpoint["id"]


def test_resume_loads_runs_the_interrupted_task_and_saves() -> None:
    graph = _chain(InMemorySaver(), _asks)
    first, _ = _transcribe(graph, {"log": []}, _THREAD, "sync")
    asked = first[-2]
    assert isinstance(asked, fx.PutWrites)

    effects, output = _transcribe(graph, Command(resume="Ada"), _THREAD, "sync")

    assert [_brief(e) for e in effects] == [
        _LOAD,
        ("Execute", ["b"]),
        (
            "PutWrites",
            "b",
            [("__resume__", ["Ada"]), ("__resume_asked__", ["name?"]), ("log", ["Ada"])],
            True,
        ),
        ("Put", "loop", 2, True),
        ("Flush",),
    ]
    # the same task runs again, against the checkpoint it was interrupted at
    assert effects[2].task_id == asked.task_id
    assert effects[2].config == asked.config
    assert output == {"log": ["a", "Ada"]}


def test_retried_task_saves_only_its_successful_writes() -> None:
    calls: list[int] = []

    def flaky(state: Log) -> Log:
        calls.append(1)
        if len(calls) == 1:
            raise ValueError("not yet")
        return {"log": ["b"]}

    policy = RetryPolicy(initial_interval=0.0, jitter=False, max_attempts=3, retry_on=ValueError)
    graph = _chain(InMemorySaver(), flaky, retry_policy=policy)
    effects, output = _transcribe(graph, {"log": []}, _THREAD, "sync")

    assert len(calls) == 2
    assert [_brief(e) for e in effects][-5:] == [
        ("Put", "loop", 1, True),
        ("Execute", ["b"]),
        ("PutWrites", "b", [("log", ["b"])], True),
        ("Put", "loop", 2, True),
        ("Flush",),
    ]
    assert output == {"log": ["a", "b"]}


def test_task_failing_after_its_retries_saves_the_error_and_stops() -> None:
    calls: list[int] = []

    def broken(state: Log) -> Log:
        calls.append(1)
        raise ValueError("down")

    policy = RetryPolicy(initial_interval=0.0, jitter=False, max_attempts=2, retry_on=ValueError)
    graph = _chain(InMemorySaver(), broken, retry_policy=policy)
    effects, outcome = _transcribe(graph, {"log": []}, _THREAD, "sync")

    assert len(calls) == 2
    assert isinstance(outcome, ValueError)
    assert str(outcome) == "down"
    assert [_brief(e) for e in effects][-4:] == [
        ("Put", "loop", 1, True),
        ("Execute", ["b"]),
        ("PutWrites", "b", [("__error__", "ValueError('down')")], True),
        ("Flush",),
    ]


def test_failed_task_with_error_handler_spawns_it_in_the_same_step() -> None:
    def broken(state: Log) -> Log:
        raise KeyError("offline")

    def fallback(state: Log, error: Any) -> Log:
        return {"log": ["fallback"]}

    graph = _chain(InMemorySaver(), broken, error_handler=fallback)
    effects, output = _transcribe(graph, {"log": []}, _THREAD, "sync")

    assert [_brief(e) for e in effects][-6:] == [
        ("Execute", ["b"]),
        (
            "PutWrites",
            "b",
            [("__error__", "KeyError('offline')"), ("__error_source_node__", "b")],
            True,
        ),
        ("Spawn", "__error_handler__b"),
        ("PutWrites", "b~node_error_handler~0", [("log", ["fallback"])], True),
        ("Put", "loop", 2, True),
        ("Flush",),
    ]
    assert output == {"log": ["a", "fallback"]}


def test_effects_are_slotted_records_with_named_fields() -> None:
    effects, _ = _transcribe(_chain(InMemorySaver()), {"log": []}, _THREAD, "sync")

    put = next(e for e in effects if isinstance(e, fx.Put))
    assert not hasattr(put, "__dict__")
    assert [f.name for f in dataclasses.fields(put)] == [
        "config",
        "checkpoint",
        "metadata",
        "new_versions",
        "blocking",
    ]
    assert not isinstance(put, tuple)
    assert fx.Flush() == fx.FLUSH
