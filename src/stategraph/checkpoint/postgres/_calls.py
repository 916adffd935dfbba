"""The saver calls of ``PostgresSaver`` and ``AsyncPostgresSaver``, written once.

A saver call (``put``, ``put_writes``, ``delete_thread``, ``prune``, ``sweep``...) is
a generator of *calls*: it yields ``(method name, args)`` naming one of the shell's
I/O primitives and receives what that primitive returned (the sync shell calls it,
the async one awaits it, see :data:`Calls`). The primitives are:

* ``_fetch(sql, params)``: one statement on its own (autocommit), its rows;
* ``_execute_fenced(check, sql, params)``: fence statements and a write, one
  transaction;
* ``_put_on_bases(params, check, fenced)``: a checkpoint holding deltas or interned
  items, one transaction (returns the delta entries to commit);
* ``_retain(tid, choose)``: keep the checkpoints ``choose`` picks, one REPEATABLE READ
  transaction holding the retention lock.

Setting up runs plans (:data:`~._base.Plan`): :func:`setup_needed_plan`,
:func:`migrate_plan` (one transaction) and :func:`format_plan`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Coroutine, Generator, Sequence
from typing import Any, Concatenate, ParamSpec, TypeVar

from stategraph.checkpoint._retention import PruneStrategy, check_prune_args
from stategraph.checkpoint._util import check_ids, checkpoint_config
from stategraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    Config,
    Writes,
)
from stategraph.checkpoint.langgraph_import._guard import (
    langgraph_postgres_statement,
    postgres_error,
)
from stategraph.checkpoint.lease import lease_token
from stategraph.checkpoint.lease_sql import Statement, pg_fence_statements
from stategraph.checkpoint.postgres import _sql
from stategraph.checkpoint.postgres._base import (
    Plan,
    PostgresCore,
    check_format,
    choose_latest,
    choose_without_runs,
)
from stategraph.errors import LeaseLostError

__all__ = [
    "Calls",
    "PostgresCalls",
    "format_plan",
    "lease_lost",
    "lease_tables_plan",
    "migrate_plan",
    "setup_needed_plan",
]

T = TypeVar("T")
P = ParamSpec("P")

Calls = Generator[tuple[str, tuple[Any, ...]], Any, T]
"""A sans-I/O saver call: yields ``(primitive name, args)`` (see the module doc),
receives the primitive's result, returns what the call returns."""


def performed(
    calls: Callable[Concatenate[Any, P], Calls[T]],
) -> Callable[Concatenate[Any, P], T]:
    """The sync saver method carrying out the saver call ``calls`` makes (a method of
    :class:`PostgresCalls`) through the saver's ``_perform``."""

    def method(self: Any, *args: P.args, **kwargs: P.kwargs) -> T:
        done: T = self._perform(calls(self, *args, **kwargs))
        return done

    method.__doc__ = f"Carry out :meth:`{calls.__name__}`."
    return method


def aperformed(
    calls: Callable[Concatenate[Any, P], Calls[T]],
) -> Callable[Concatenate[Any, P], Coroutine[Any, Any, T]]:
    """The async twin of :func:`performed` (the saver's ``_perform`` is awaited)."""

    async def method(self: Any, *args: P.args, **kwargs: P.kwargs) -> T:
        done: T = await self._perform(calls(self, *args, **kwargs))
        return done

    method.__doc__ = f"Carry out :meth:`{calls.__name__}`."
    return method


def lease_lost(fence: Sequence[Statement]) -> LeaseLostError:
    """The error for a fenced write whose fence failed (``fence``: the statements
    of :func:`~stategraph.checkpoint.lease_sql.pg_fence_statements`)."""
    return LeaseLostError(
        str(fence[0][1][0]),
        int(fence[0][1][1]),
        "it expired or another run took the thread over",
    )


def _version_plan() -> Plan[int]:
    """The schema version of the checkpoint tables (``-1``: none yet)."""
    rows = yield (_sql.MIGRATIONS_TABLE_EXISTS, None)
    if not rows or not rows[0][0]:
        return -1
    rows = yield (_sql.MAX_VERSION, None)
    return -1 if not rows else int(rows[0][0])


def setup_needed_plan(owner: str) -> Plan[bool]:
    """Whether migrations are missing; refuses a LangGraph database (``owner`` names
    the saver in the error)."""
    rows = yield (langgraph_postgres_statement(), None)
    refused = postgres_error(owner, rows[0] if rows else None)
    if refused is not None:
        raise refused
    return (yield from _version_plan()) < len(_sql.MIGRATIONS) - 1


def migrate_plan() -> Plan[None]:
    """Apply the missing migrations in order, holding the setup advisory lock (run in
    one transaction, so concurrent ``setup()`` calls apply each exactly once)."""
    yield (_sql.LOCK_SETUP, (_sql.SETUP_LOCK_KEY,))
    yield (_sql.CREATE_MIGRATIONS_TABLE, None)
    for v in range((yield from _version_plan()) + 1, len(_sql.MIGRATIONS)):
        for statement in _sql.MIGRATIONS[v]:
            yield (statement, None)
        yield (_sql.INSERT_VERSION, (v,))


def format_plan() -> Plan[None]:
    """Refuse a database whose values are in a newer format than this release reads."""
    rows = yield (_sql.CHECK_FORMAT, None)
    check_format(rows[0] if rows else None)


def lease_tables_plan() -> Plan[None]:
    """Create the lease tables (run in one transaction holding the setup lock)."""
    from stategraph.checkpoint.lease_sql import POSTGRES

    yield (_sql.LOCK_SETUP, (_sql.SETUP_LOCK_KEY,))
    for statement in POSTGRES.ddl:
        yield (statement, None)


class PostgresCalls(PostgresCore):
    """The saver calls of the full PostgreSQL savers, as :data:`Calls`."""

    def put_calls(
        self, config: Config, checkpoint: Checkpoint, meta: CheckpointMetadata, new: ChannelVersions
    ) -> Calls[dict[str, Any]]:
        """``put`` (``meta``, ``new``: its ``metadata``, ``new_versions``): one statement (fenced in one transaction for a leased run; with
        the delta bases checked first when values are deltas or interned items)."""
        params = self.put_params(config, checkpoint, meta, new)
        check = self.base_check_params(params)
        token = lease_token(config)
        fenced = (
            pg_fence_statements(params["thread_id"], token, params["ns"], checkpoint["id"])
            if token is not None
            else []
        )
        if check is not None or params["item_hashes"]:
            done = yield ("_put_on_bases", (params, check, fenced))
        else:
            params, done = self.finish_put_params(params, None)
            if not fenced:
                yield ("_fetch", (_sql.PUT, params))
            else:
                yield ("_execute_fenced", (fenced, _sql.PUT, params))
        yield from self._touch_calls(params["thread_id"])
        if self.delta is not None:
            for entry in done:
                self.delta.commit(entry)
        return checkpoint_config(params["thread_id"], params["ns"], checkpoint["id"])

    def put_writes_calls(
        self,
        config: Config,
        writes: Writes,
        task_id: str,
        task_path: str = "",
    ) -> Calls[None]:
        """``put_writes``: one statement (fenced, or holding the retention lock shared
        when the writes refer to new interned items, in one transaction)."""
        params = self.put_writes_params(config, writes, task_id, task_path)
        if params is None:
            return
        token = lease_token(config)
        check = (
            pg_fence_statements(params["thread_id"], token, params["ns"], None)
            if token is not None
            else []
        )
        if params["item_hashes"]:
            # new references to items: hold the retention lock (shared) while saving
            check = [*check, (_sql.LOCK_BASES_SHARED_POS, (params["thread_id"],))]
            yield ("_execute_fenced", (check, _sql.PUT_WRITES, params))
        elif token is None:
            yield ("_fetch", (_sql.PUT_WRITES, params))
        else:
            yield ("_execute_fenced", (check, _sql.PUT_WRITES, params))
        yield from self._touch_calls(params["thread_id"])

    def _touch_calls(self, thread_id: str) -> Calls[None]:
        if self.ttl is not None:
            yield ("_fetch", (_sql.TOUCH, {"thread_id": thread_id, "at": time.time()}))

    def delete_thread_calls(self, thread_id: str, name: str) -> Calls[None]:
        """``delete_thread`` (``name``: the method called, for the error)."""
        check_ids(name, thread_id=thread_id)
        yield ("_fetch", (_sql.DELETE_THREAD, {"thread_id": str(thread_id)}))
        yield ("_fetch", (_sql.DELETE_TTL, {"thread_id": str(thread_id)}))
        if self.delta is not None:
            self.delta.forget(str(thread_id))

    def prune_calls(
        self,
        thread_ids: Sequence[str],
        strategy: PruneStrategy,
        keep_last: int | None,
        name: str,
    ) -> Calls[None]:
        """``prune``: each thread in one REPEATABLE READ transaction (or deleted)."""
        check_ids(name, thread_ids=thread_ids)
        ids, n = check_prune_args(thread_ids, strategy, keep_last, type(self).__name__)
        for tid in ids:
            if strategy == "delete":
                yield from self.delete_thread_calls(tid, "delete_thread")
                continue
            yield ("_retain", (tid, choose_latest(n)))

    def delete_for_runs_calls(self, run_ids: Sequence[str], name: str) -> Calls[None]:
        """``delete_for_runs``: the threads of those runs, one transaction each."""
        check_ids(name, run_ids=run_ids)
        wanted = [str(r) for r in run_ids]
        if not wanted:
            return
        rows = yield ("_fetch", (_sql.THREADS_OF_RUNS, {"runs": wanted}))
        for (tid,) in rows:
            yield ("_retain", (tid, choose_without_runs(set(wanted))))

    def sweep_calls(self) -> Calls[int]:
        """``sweep``: delete the threads whose time to live ran out; how many."""
        if self.ttl is None:
            return 0
        cutoff = time.time() - self.ttl["default_ttl"] * 60.0
        count = 0
        for (tid,) in (yield ("_fetch", (_sql.EXPIRED, {"cutoff": cutoff}))):
            # one statement: a thread written since the scan is not expired any more
            yield ("_fetch", (_sql.DELETE_EXPIRED, {"thread_id": tid, "cutoff": cutoff}))
            if self.delta is not None:
                self.delta.forget(tid)
            count += 1
        return count

    def task_paths_calls(self, saved: CheckpointTuple) -> Calls[dict[str, str]]:
        """Task id -> saved task path of the pending writes of ``saved``."""
        conf = saved.config["configurable"]
        rows = yield (
            "_fetch",
            (
                _sql.TASK_PATHS,
                {
                    "thread_id": conf["thread_id"],
                    "ns": conf.get("checkpoint_ns", ""),
                    "checkpoint_id": conf["checkpoint_id"],
                },
            ),
        )
        return {task_id: path for task_id, path in rows}
