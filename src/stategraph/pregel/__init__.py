"""The runtime room: compiled graphs that run in bulk-synchronous super-steps.

:class:`Pregel` is the compiled, runnable graph (``StateGraph.compile()`` returns one);
:class:`PregelNode` and :class:`NodeBuilder` are its nodes. Under it:

* the sans-I/O loop (``loop.py``, parts in ``_loop/``) makes every decision of a run
  and yields effects; the sync and async shells (``sync_shell.py``,
  ``async_shell.py``) perform them;
* the scheduling functions (``algo.py``), tasks and attempts (``task.py``,
  ``attempt.py``), retries (``retry.py``) and cache decisions (``cache_io.py``);
* the ``Pregel`` class, split by concern in ``_pregel/`` (running, run setup,
  schemas, config) and ``state.py`` (reading and editing a thread's state).

Observers (events, callbacks, logging, stream payloads) belong to their own room
(``stategraph.observe``), and
the remote client in :mod:`stategraph.remote`; ``stategraph.pregel.remote`` and
``stategraph.pregel.protocol`` are LangGraph's paths. See ``docs/architecture.md``.
"""

from stategraph.pregel.main import Pregel
from stategraph.pregel.node import NodeBuilder, PregelNode

__all__ = ["Pregel", "NodeBuilder", "PregelNode"]
