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

``get_subgraphs`` is written here, on the class itself: it yields graphs of this class,
and the parts above only know the graph through
:class:`~stategraph.pregel._roles.PregelGraph`, so none of them imports this module
back (issue 21).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Generic

from stategraph.constants import NS_SEP
from stategraph.pregel._pregel.config import DEFAULT_RECURSION_LIMIT
from stategraph.pregel._pregel.config import lift_config_keys as lift_config_keys
from stategraph.pregel._pregel.running import RunMixin
from stategraph.pregel._pregel.schemas import SchemaMixin
from stategraph.pregel._run import strip_task_ids
from stategraph.pregel._state import StateMixin
from stategraph.typing import ContextT, InputT, OutputT, StateT

__all__ = ["Pregel", "DEFAULT_RECURSION_LIMIT"]


class Pregel(RunMixin, SchemaMixin, StateMixin, Generic[StateT, ContextT, InputT, OutputT]):
    """A graph of nodes exchanging values through channels, run in super-steps.

    Build one directly from :class:`PregelNode` s (or :class:`NodeBuilder` s) and
    channels, or get one from ``StateGraph.compile()``.
    """

    def get_subgraphs(
        self, *, namespace: str | None = None, recurse: bool = False
    ) -> Iterator[tuple[str, Pregel]]:
        """Yield ``(namespace, graph)`` for each subgraph of the graph.

        ``namespace`` selects the subgraph at exactly that namespace, compared level by
        level (``"a|b"`` is the subgraph ``b`` inside the subgraph ``a``; task ids are
        ignored). ``recurse`` also yields the subgraphs of subgraphs.
        """
        head = rest = ""
        if namespace is not None:
            head, _, rest = strip_task_ids(namespace).partition(NS_SEP)
        for name, node in self.nodes.items():
            if namespace is not None and name != head:
                continue
            for sub in node.subgraphs:
                if namespace is None or not rest:
                    yield name, sub
                if recurse and (namespace is None or rest):
                    for sub_name, deeper in sub.get_subgraphs(namespace=rest or None, recurse=True):
                        yield f"{name}{NS_SEP}{sub_name}", deeper

    async def aget_subgraphs(
        self, *, namespace: str | None = None, recurse: bool = False
    ) -> AsyncIterator[tuple[str, Pregel]]:
        """Async twin of :meth:`get_subgraphs`."""
        for item in self.get_subgraphs(namespace=namespace, recurse=recurse):
            yield item
