"""``Pregel``: the compiled, runnable graph (``invoke``, ``stream`` and friends).

The class is assembled from one part per concern, in ``pregel/_pregel/``:

* ``base.py``: the graph's structure (nodes, channels, triggers, validation, copies)
  and the hooks the loop calls;
* ``running.py``: ``invoke``, ``stream``, ``batch``, their async twins, ``stream_events``;
* ``setup.py``: the run of one call (``RunContext`` and ``Loop``) and its return value;
* ``schemas.py``: input, output, context and config schemas, and ``get_graph``;
* ``config.py``: reading and checking the run settings of a config;

and :class:`~stategraph.pregel._state.StateMixin` (``pregel/_state.py``, its work in
``_pregel/state_read.py`` and ``_pregel/state_edit.py``): reading and editing a
thread's state (``get_state``, history, ``update_state``, bulk updates).
"""

from __future__ import annotations

from typing import Generic

from stategraph.pregel._pregel.config import DEFAULT_RECURSION_LIMIT
from stategraph.pregel._pregel.config import lift_config_keys as lift_config_keys
from stategraph.pregel._pregel.running import RunMixin
from stategraph.pregel._pregel.schemas import SchemaMixin
from stategraph.pregel._state import StateMixin
from stategraph.typing import ContextT, InputT, OutputT, StateT

__all__ = ["Pregel", "DEFAULT_RECURSION_LIMIT"]


class Pregel(RunMixin, SchemaMixin, StateMixin, Generic[StateT, ContextT, InputT, OutputT]):
    """A graph of nodes exchanging values through channels, run in super-steps.

    Build one directly from :class:`PregelNode` s (or :class:`NodeBuilder` s) and
    channels, or get one from ``StateGraph.compile()``.
    """
