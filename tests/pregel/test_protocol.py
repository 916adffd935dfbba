"""``stategraph.pregel.protocol``: the graph protocol and the stream sink."""

from __future__ import annotations

from typing import Any

import pytest
from typing_extensions import TypedDict

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.graph import START, StateGraph
from stategraph.pregel.protocol import PregelProtocol, StreamChunk, StreamProtocol


class State(TypedDict):
    topic: str


def _compiled(**kwargs: Any) -> Any:
    builder = StateGraph(State)
    builder.add_node("shout", lambda s: {"topic": s["topic"].upper()})
    builder.add_edge(START, "shout")
    return builder.compile(**kwargs)


def test_a_compiled_graph_is_a_pregel_protocol() -> None:
    graph = _compiled()
    assert isinstance(graph, PregelProtocol)


def test_a_graph_used_through_the_protocol_runs_and_keeps_state() -> None:
    graph: PregelProtocol = _compiled(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    assert graph.invoke({"topic": "hi"}, config) == {"topic": "HI"}
    assert graph.get_state(config).values == {"topic": "HI"}
    new = graph.update_state(config, {"topic": "edited"})
    assert graph.get_state(new).values == {"topic": "edited"}
    history = [s.values for s in graph.get_state_history(config)]
    assert history[0] == {"topic": "edited"}
    assert history[1] == {"topic": "HI"}


def test_an_object_without_the_methods_is_not_a_pregel_protocol() -> None:
    class JustInvoke:
        def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
            return input

    assert not isinstance(JustInvoke(), PregelProtocol)


def test_a_subclass_must_implement_every_method() -> None:
    class Half(PregelProtocol):
        def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
            return input

    with pytest.raises(TypeError, match="abstract") as err:
        Half()  # type: ignore[abstract]
    assert "stream" in str(err.value)


def test_the_stream_sink_forwards_chunks_and_keeps_its_modes() -> None:
    got: list[StreamChunk] = []
    sink = StreamProtocol(got.append, {"values", "updates"})
    sink((("child:1",), "updates", {"shout": {"topic": "HI"}}))
    sink(((), "values", {"topic": "HI"}))
    assert got == [
        (("child:1",), "updates", {"shout": {"topic": "HI"}}),
        ((), "values", {"topic": "HI"}),
    ]
    assert sink.modes == {"values", "updates"}
    assert "updates" in repr(sink)


def test_the_stream_sink_takes_the_chunks_of_a_run() -> None:
    got: list[StreamChunk] = []
    sink = StreamProtocol(got.append, {"updates"})
    graph = _compiled()
    for mode, payload in graph.stream({"topic": "a"}, stream_mode=sorted(sink.modes)):
        sink(((), mode, payload))
    assert got == [((), "updates", {"shout": {"topic": "A"}})]
