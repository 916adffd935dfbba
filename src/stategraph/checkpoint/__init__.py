"""Persistence for graph runs: the checkpoint model, the saver contract and the savers.

* :mod:`stategraph.checkpoint.base` — ``Checkpoint``, ``CheckpointMetadata``,
  ``CheckpointTuple`` and ``BaseCheckpointSaver``, the contract every saver implements
  (documented for third parties in ``docs/checkpointer.md``).
* :mod:`stategraph.checkpoint.memory` — ``InMemorySaver`` for tests and experiments.
* :mod:`stategraph.checkpoint.sqlite` — ``SqliteSaver``, the embedded durable default,
  and :mod:`stategraph.checkpoint.sqlite.aio` — ``AsyncSqliteSaver``.
* :mod:`stategraph.checkpoint.serde` — the allowlisting serializer savers use.

This package module imports nothing so that ``import stategraph.checkpoint.memory``
pays only for what it uses.
"""
