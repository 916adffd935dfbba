"""Tools for testing graphs built with stategraph.

* :class:`FakeChatModel`: a scripted chat model that streams like a real one;
* :func:`run_node` / :func:`arun_node`: run one node alone and see its update, routes
  and interrupts (``graph.nodes["x"].invoke(state)`` works too, as in LangGraph);
* :func:`trace_path` / :func:`atrace_path` and :func:`assert_path`: check which nodes
  a run went through, step by step;
* :func:`deterministic`: reproducible checkpoint ids, timestamps and message ids;
* a pytest plugin (loaded automatically) with the fixtures ``thread_config``,
  ``checkpointer``, ``async_checkpointer`` and ``deterministic_ids``.

See ``docs/testing.md``.
"""

from __future__ import annotations

from stategraph.testing._clock import DeterministicSource, deterministic
from stategraph.testing._nodes import NodeRun, arun_node, run_node
from stategraph.testing._paths import RunPath, assert_path, atrace_path, trace_path
from stategraph.testing.chat_model import FakeChatModel

__all__ = [
    "FakeChatModel",
    "DeterministicSource",
    "deterministic",
    "NodeRun",
    "run_node",
    "arun_node",
    "RunPath",
    "trace_path",
    "atrace_path",
    "assert_path",
]
