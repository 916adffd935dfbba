"""Modules an ordinary graph does not load: building and running a ``MessagesState``
graph with an in-memory checkpointer imports only what that path uses (peak memory,
issue 23), while the features that need the others still load them when used."""

from __future__ import annotations

import subprocess
import sys

_RUN_A_GRAPH = """
import sys
from stategraph.checkpoint.memory import InMemorySaver
from stategraph.graph import END, START, MessagesState, StateGraph
from stategraph.messages import AIMessage, HumanMessage

def agent(state):
    return {"messages": [AIMessage("hi", id=f"a{len(state['messages'])}")]}

builder = StateGraph(MessagesState)
builder.add_node("agent", agent)
builder.add_edge(START, "agent")
builder.add_edge("agent", END)
graph = builder.compile(checkpointer=InMemorySaver())
config = {"configurable": {"thread_id": "t"}}
out = graph.invoke({"messages": [HumanMessage("hello", id="h")]}, config)
assert [m.content for m in out["messages"]] == ["hello", "hi"], out
assert [m.content for m in graph.get_state(config).values["messages"]] == ["hello", "hi"]
"""


def _loaded_after_a_run(*modules: str) -> list[str]:
    code = _RUN_A_GRAPH + f"print(','.join(m for m in {modules!r} if m in sys.modules))\n"
    done = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    return [m for m in done.stdout.strip().split(",") if m]


def test_running_a_messages_graph_leaves_json_unloaded() -> None:
    assert _loaded_after_a_run("json") == []


def test_running_a_graph_leaves_the_model_call_machinery_unloaded() -> None:
    assert _loaded_after_a_run("stategraph.observe._model_calls") == []


def test_a_run_nobody_observes_leaves_the_observer_machinery_unloaded() -> None:
    observers = (
        "stategraph.observe._protocol",
        "stategraph.observe._fanout",
        "stategraph.observe._logging",
        "stategraph.pregel._watch",
    )
    assert _loaded_after_a_run(*observers) == []


def test_debug_logging_still_observes_a_run() -> None:
    code = (
        "import logging\n"
        "records = []\n"
        "class Keep(logging.Handler):\n"
        "    def emit(self, record): records.append(record.getMessage())\n"
        "log = logging.getLogger('stategraph.run')\n"
        "log.setLevel(logging.DEBUG)\n"
        "log.addHandler(Keep())\n"
        + _RUN_A_GRAPH
        + "assert 'stategraph.observe._logging' in sys.modules\n"
        "assert records, records\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_observe_helpers_keep_their_import_paths() -> None:
    from stategraph import observe
    from stategraph.observe import _logging, _run_logger, _run_metadata

    for name in ("task_run_metadata", "call_run_metadata", "call_namespace"):
        assert getattr(observe, name) is getattr(_run_metadata, name)
    assert _logging.debug_logging_enabled is _run_logger.debug_logging_enabled
    assert _logging.logger is _run_logger.logger
    assert _run_logger.logger.name == "stategraph.run"


def test_task_scopes_keep_their_import_paths() -> None:
    from stategraph import observe
    from stategraph._bridges import langchain_bridge
    from stategraph.observe import _model_calls, _task_scopes

    assert observe.task_scopes is _model_calls.task_scopes is _task_scopes.task_scopes
    assert observe.TaskScope is _model_calls.TaskScope is _task_scopes.TaskScope
    bridge = langchain_bridge()
    expected = [] if bridge is None else [bridge.enter_task]
    assert _task_scopes.task_scopes(object()) == expected  # type: ignore[arg-type]


def test_tool_call_json_still_parses_and_dumps() -> None:
    code = (
        "import sys\n"
        "from stategraph.messages import AIMessageChunk, ToolCallChunk\n"
        "assert 'json' not in sys.modules\n"
        "c = AIMessageChunk('', tool_call_chunks=[ToolCallChunk(name='f', args='{\"a\": 1', "
        "id='c1', index=0)])\n"
        "assert c.tool_calls[0]['args'] == {'a': 1}, c.tool_calls\n"
        "d = AIMessageChunk('', tool_calls=[{'name': 'f', 'args': {'b': 2}, 'id': 'c2'}])\n"
        "assert d.tool_call_chunks[0]['args'] == '{\"b\": 2}', d.tool_call_chunks\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_running_a_messages_graph_leaves_the_message_helpers_unloaded() -> None:
    assert _loaded_after_a_run("stategraph.messages._utils") == []


def test_message_helpers_load_on_first_use_under_their_public_names() -> None:
    code = (
        "import sys, stategraph.messages as m\n"
        "assert 'stategraph.messages._utils' not in sys.modules\n"
        "assert 'trim_messages' in dir(m) and 'trim_messages' in m.__all__\n"
        "from stategraph.messages import get_buffer_string, HumanMessage\n"
        "assert get_buffer_string([HumanMessage('hi')]) == 'Human: hi'\n"
        "from stategraph.messages import _utils\n"
        "assert set(m.__all__) >= set(_utils.__all__) - {'MessagesTransform'}\n"
        "assert m.trim_messages is _utils.trim_messages\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_message_package_lists_its_helpers_as_utils_does() -> None:
    import stategraph.messages as m
    from stategraph.messages import _utils

    assert sorted(m._UTILS) == sorted(set(_utils.__all__) - {"MessagesTransform"})
    assert m.__all__[-len(m._UTILS) - 1 : -1] == list(m._UTILS)
