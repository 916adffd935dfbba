"""The batch engine shared by the local stores (in-memory and SQLite).

A batch runs in three phases so that embedding (slow, maybe async, maybe remote)
never happens while a lock or a database transaction is held:

1. :func:`make_plan` validates every operation and collects the texts to embed
   (documents of puts, queries of searches). Pure, no I/O.
2. :func:`embed_plan` / :func:`aembed_plan` call the embedding function.
3. :func:`execute` applies the operations in order against a :class:`Backend`
   (under the store's lock / inside one transaction) and builds the results.

Operations apply in order: a get after a put in the same batch sees the put.
"""

from __future__ import annotations

import json
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import datetime, timezone
from typing import Any, NamedTuple

from stategraph.store._embed import (
    IndexSpec,
    cosine,
    parse_index_config,
    to_vector,
    vector_norm,
)
from stategraph.store._filters import Predicate, compile_filter
from stategraph.store._ttl import TTLSweeper, normalize_ttl_config
from stategraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
    validate_op,
)

__all__ = ["Record", "Plan", "Vectors", "Scan", "Backend", "LocalStore", "make_plan", "execute"]

Key = tuple[tuple[str, ...], str]


def _dt(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, timezone.utc)


class Record:
    """One stored item as the engine sees it (timestamps are epoch seconds)."""

    __slots__ = (
        "created_at",
        "expires_at",
        "key",
        "namespace",
        "ttl_minutes",
        "updated_at",
        "value",
    )

    def __init__(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: dict[str, Any],
        created_at: float,
        updated_at: float,
        expires_at: float | None,
        ttl_minutes: float | None,
    ) -> None:
        self.namespace = namespace
        self.key = key
        self.value = value
        self.created_at = created_at
        self.updated_at = updated_at
        self.expires_at = expires_at
        self.ttl_minutes = ttl_minutes

    def expired(self, now: float) -> bool:
        """Whether the item's TTL has run out at ``now``."""
        return self.expires_at is not None and self.expires_at <= now

    def to_item(self) -> Item:
        """The public :class:`Item` for this record."""
        return Item(
            value=self.value,
            key=self.key,
            namespace=self.namespace,
            created_at=_dt(self.created_at),
            updated_at=_dt(self.updated_at),
        )

    def to_search_item(self, score: float | None) -> SearchItem:
        """The public :class:`SearchItem` for this record."""
        return SearchItem(
            self.namespace,
            self.key,
            self.value,
            _dt(self.created_at),
            _dt(self.updated_at),
            score,
        )


class Plan:
    """Validated operations plus the texts they need embedded."""

    __slots__ = ("doc_slots", "doc_texts", "has_writes", "ops", "query_slots", "query_texts")

    def __init__(self, ops: list[Op]) -> None:
        self.ops = ops
        self.doc_texts: list[str] = []
        self.doc_slots: dict[int, list[tuple[str, int]]] = {}
        self.query_texts: list[str] = []
        self.query_slots: dict[int, int] = {}
        self.has_writes = False


class Vectors(NamedTuple):
    """Embeddings computed for a :class:`Plan` (float32 arrays)."""

    docs: list[Any]
    queries: list[Any]


NO_VECTORS = Vectors([], [])


class Scan(NamedTuple):
    """What :meth:`Backend.scan` reads: the live records under ``prefix`` (at ``now``)
    whose value satisfies ``predicate`` (the compiled ``filter``, which a SQL backend
    may also narrow its query with); ``limit``/``offset`` only without a predicate."""

    prefix: tuple[str, ...]
    now: float
    filter: Mapping[str, Any] | None
    predicate: Predicate | None
    limit: int | None
    offset: int


def make_plan(ops: Iterable[Op], index: IndexSpec | None) -> Plan:
    """Validate ``ops`` and collect what must be embedded."""
    plan = Plan(list(ops))
    for i, op in enumerate(plan.ops):
        validate_op(op)
        if isinstance(op, PutOp):
            plan.has_writes = True
            if index is None or op.value is None or op.index is False:
                continue
            slots = []
            for field, text in index.texts_for(op.value, op.index):
                slots.append((field, len(plan.doc_texts)))
                plan.doc_texts.append(text)
            plan.doc_slots[i] = slots
        elif isinstance(op, SearchOp) and op.query and index is not None:
            plan.query_slots[i] = len(plan.query_texts)
            plan.query_texts.append(op.query)
    return plan


def _check(raw: list[Any], texts: list[str], dims: int) -> list[Any]:
    if len(raw) != len(texts):
        raise ValueError(
            f"The embedding function returned {len(raw)} vectors for {len(texts)} texts; "
            f"it must return exactly one vector per text."
        )
    return [to_vector(v, dims) for v in raw]


def embed_plan(plan: Plan, index: IndexSpec | None) -> Vectors:
    """Compute the plan's embeddings synchronously."""
    if index is None or not (plan.doc_texts or plan.query_texts):
        return NO_VECTORS
    emb = index.embedder
    docs = emb.embed_documents(plan.doc_texts) if plan.doc_texts else []
    queries = emb.embed_queries(plan.query_texts) if plan.query_texts else []
    return Vectors(
        _check(docs, plan.doc_texts, index.dims), _check(queries, plan.query_texts, index.dims)
    )


async def aembed_plan(plan: Plan, index: IndexSpec | None) -> Vectors:
    """Compute the plan's embeddings without blocking the event loop."""
    if index is None or not (plan.doc_texts or plan.query_texts):
        return NO_VECTORS
    emb = index.embedder
    docs = await emb.aembed_documents(plan.doc_texts) if plan.doc_texts else []
    queries = await emb.aembed_queries(plan.query_texts) if plan.query_texts else []
    return Vectors(
        _check(docs, plan.doc_texts, index.dims), _check(queries, plan.query_texts, index.dims)
    )


class Backend(ABC):
    """Storage primitives the engine needs; called under the store's lock."""

    @abstractmethod
    def fetch(self, namespace: tuple[str, ...], key: str) -> Record | None:
        """The record at ``(namespace, key)``, expired or not, or ``None``."""

    @abstractmethod
    def put(self, record: Record, vectors: list[tuple[str, Any]], now: float) -> None:
        """Insert or replace ``record`` and its vectors.

        If a live (unexpired at ``now``) item exists, its ``created_at`` is kept.
        """

    @abstractmethod
    def remove(self, namespace: tuple[str, ...], key: str) -> None:
        """Delete the item and its vectors, if any."""

    @abstractmethod
    def scan(self, query: Scan) -> Iterator[Record]:
        """The records ``query`` selects, newest ``updated_at`` first.

        ``limit``/``offset`` are given only without a predicate; the backend may
        apply them (the engine does not re-apply them).
        """

    @abstractmethod
    def vectors(self, prefix: tuple[str, ...], keys: set[Key]) -> dict[Key, list[Any]]:
        """Stored vectors of the items ``keys`` (all under ``prefix``)."""

    @abstractmethod
    def namespaces(self, now: float) -> Iterable[tuple[str, ...]]:
        """Distinct namespaces holding at least one live item."""

    @abstractmethod
    def refresh(self, record: Record, now: float) -> None:
        """Restart the TTL of ``record`` (which has ``ttl_minutes``) from ``now``."""

    def rank(self, scan: Scan, query: Any) -> list[tuple[Record, float | None]] | None:
        """Rank the records ``scan`` selects by similarity to ``query`` in storage.

        Returns the page ``[offset, offset + limit)`` of the records satisfying the
        scan's ``predicate`` (its ``limit`` is set here), best first (``None`` scores last, ties newest first), or ``None``
        when the backend cannot rank: the engine then ranks in Python.
        """
        return None


def _matches_condition(ns: tuple[str, ...], cond: MatchCondition) -> bool:
    path = cond.path
    if len(path) > len(ns):
        return False
    part = ns[: len(path)] if cond.match_type == "prefix" else ns[len(ns) - len(path) :]
    return all(p == "*" or p == n for p, n in zip(path, part, strict=True))


class _Executor:
    __slots__ = ("backend", "now", "plan", "stamp", "vectors")

    def __init__(
        self, backend: Backend, plan: Plan, vectors: Vectors, now: float, stamp: Callable[[], float]
    ) -> None:
        self.backend = backend
        self.plan = plan
        self.vectors = vectors
        self.now = now
        self.stamp = stamp

    def run(self) -> list[Result]:
        results: list[Result] = []
        for i, op in enumerate(self.plan.ops):
            if isinstance(op, GetOp):
                results.append(self.get(op))
            elif isinstance(op, SearchOp):
                results.append(self.search(i, op))
            elif isinstance(op, PutOp):
                self.put(i, op)
                results.append(None)
            else:
                results.append(self.list_namespaces(op))
        return results

    def get(self, op: GetOp) -> Item | None:
        rec = self.backend.fetch(tuple(op.namespace), op.key)
        if rec is None or rec.expired(self.now):
            return None
        if op.refresh_ttl and rec.ttl_minutes is not None:
            self.backend.refresh(rec, self.now)
        return rec.to_item()

    def put(self, i: int, op: PutOp) -> None:
        ns = tuple(op.namespace)
        if op.value is None:
            self.backend.remove(ns, op.key)
            return
        stamp = self.stamp()
        ttl = op.ttl
        rec = Record(
            ns,
            op.key,
            dict(op.value),
            stamp,
            stamp,
            None if ttl is None else self.now + ttl * 60.0,
            None if ttl is None else float(ttl),
        )
        docs = self.vectors.docs
        vecs = [(field, docs[j]) for field, j in self.plan.doc_slots.get(i, ())]
        self.backend.put(rec, vecs, self.now)

    def search(self, i: int, op: SearchOp) -> list[SearchItem]:
        if op.limit == 0:
            return []
        prefix = tuple(op.namespace_prefix)
        slot = self.plan.query_slots.get(i)
        query = None if slot is None else self.vectors.queries[slot]
        predicate = compile_filter(op.filter)
        if query is not None:
            scan = Scan(prefix, self.now, op.filter, predicate, op.limit, op.offset)
            ranked = self.backend.rank(scan, query)
            if ranked is not None:
                return self._found(op, ranked)
        pushdown = query is None and predicate is None
        records = self.backend.scan(
            Scan(
                prefix,
                self.now,
                op.filter,
                predicate,
                op.limit if pushdown else None,
                op.offset if pushdown else 0,
            )
        )
        hits: list[tuple[Record, float | None]] = []
        try:
            if query is None:
                skip = 0 if pushdown else op.offset
                for rec in records:
                    if skip:
                        skip -= 1
                        continue
                    hits.append((rec, None))
                    if len(hits) >= op.limit:
                        break
            else:
                ranked = self._rank(prefix, query, list(records))
                hits = ranked[op.offset : op.offset + op.limit]
        finally:
            close = getattr(records, "close", None)
            if close is not None:
                close()
        return self._found(op, hits)

    def _found(self, op: SearchOp, hits: list[tuple[Record, float | None]]) -> list[SearchItem]:
        if op.refresh_ttl:
            for rec, _ in hits:
                if rec.ttl_minutes is not None:
                    self.backend.refresh(rec, self.now)
        return [rec.to_search_item(score) for rec, score in hits]

    def _rank(
        self, prefix: tuple[str, ...], query: Any, cands: list[Record]
    ) -> list[tuple[Record, float | None]]:
        stored = self.backend.vectors(prefix, {(r.namespace, r.key) for r in cands})
        qnorm = vector_norm(query)
        scored: list[tuple[Record, float | None]] = []
        for rec in cands:
            vecs = stored.get((rec.namespace, rec.key))
            score = max(cosine(query, qnorm, v) for v in vecs) if vecs else None
            scored.append((rec, score))
        # Stable: equal scores keep the newest-first order of the scan.
        scored.sort(key=lambda pair: (pair[1] is None, -(pair[1] or 0.0)))
        return scored

    def list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        conds = op.match_conditions or ()
        depth = op.max_depth
        found: set[tuple[str, ...]] = set()
        for ns in self.backend.namespaces(self.now):
            if all(_matches_condition(ns, c) for c in conds):
                found.add(ns if depth is None else ns[:depth])
        return sorted(found)[op.offset : op.offset + op.limit]


def execute(
    backend: Backend, plan: Plan, vectors: Vectors, now: float, stamp: Callable[[], float]
) -> list[Result]:
    """Apply the plan's operations in order; one result per operation."""
    return _Executor(backend, plan, vectors, now, stamp).run()


class LocalStore(BaseStore):
    """Base of the stores that run the engine in this process.

    Subclasses implement :meth:`_execute` (lock + transaction around
    :func:`execute`) and :meth:`sweep_ttl`.
    """

    supports_ttl = True

    def __init__(self, *, index: IndexConfig | None = None, ttl: TTLConfig | None = None) -> None:
        self.index_config = index
        """The index configuration given to the constructor (``None``: no semantic search)."""
        self._index = parse_index_config(index)
        self.ttl_config = normalize_ttl_config(ttl)
        self._now: Callable[[], float] = time.time
        """Clock in epoch seconds; tests replace it to move time without sleeping."""
        self._last_stamp = 0.0
        self._sweeper: TTLSweeper | None = None
        interval = (self.ttl_config or {}).get("sweep_interval_minutes")
        if interval:
            self.start_ttl_sweeper(interval)

    def _stamp(self) -> float:
        """A strictly increasing write timestamp (call under the store's lock)."""
        now = self._now()
        stamp = now if now > self._last_stamp else self._last_stamp + 1e-6
        self._last_stamp = stamp
        return stamp

    @abstractmethod
    def _execute(self, plan: Plan, vectors: Vectors) -> list[Result]:
        """Run :func:`execute` with this store's backend, lock and transaction."""

    async def _aexecute(self, plan: Plan, vectors: Vectors) -> list[Result]:
        return self._execute(plan, vectors)

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Execute ``ops`` in order; one result per operation."""
        plan = make_plan(ops, self._index)
        if not plan.ops:
            return []
        return self._execute(plan, embed_plan(plan, self._index))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Async twin of :meth:`batch` (async embedding functions are awaited)."""
        plan = make_plan(ops, self._index)
        if not plan.ops:
            return []
        return await self._aexecute(plan, await aembed_plan(plan, self._index))

    @abstractmethod
    def sweep_ttl(self) -> int:
        """Delete expired items now; return how many were deleted."""

    async def asweep_ttl(self) -> int:
        """Async twin of :meth:`sweep_ttl`."""
        return self.sweep_ttl()

    def start_ttl_sweeper(self, sweep_interval_minutes: float | None = None) -> None:
        """Start a daemon thread sweeping expired items periodically.

        The interval defaults to the TTL config's ``sweep_interval_minutes`` (or 60).
        Started automatically when the config sets an interval. No-op if running.
        """
        if self._sweeper is not None:
            return
        interval = sweep_interval_minutes or (self.ttl_config or {}).get("sweep_interval_minutes")
        self._sweeper = TTLSweeper(self.sweep_ttl, float(interval or 60))
        self._sweeper.start()

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stop the sweeper thread (if any); True once it has ended."""
        sweeper, self._sweeper = self._sweeper, None
        return True if sweeper is None else sweeper.stop(timeout)


def item_json(record: Record, owner: str) -> str:
    """``record``'s value as standard JSON text (no NaN or Infinity), as the SQL stores
    keep it; a ``TypeError`` naming the key, the namespace and the store ``owner`` when
    it is not JSON-serializable."""
    try:
        return json.dumps(record.value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"Value for key {record.key!r} in namespace {record.namespace!r} is not "
            f"JSON-serializable ({exc}); {owner} stores values as standard JSON "
            f"(no NaN or Infinity)."
        ) from exc


def upsert_item(mark: str, json_mark: str) -> str:
    """The statement saving one item in ``sg_store`` (the SQLite and PostgreSQL stores
    share it), with ``mark`` as the parameter mark and ``json_mark`` for the value; its
    parameters are :func:`upsert_params`. An expired item that is written again starts
    a new life (a new ``created_at``)."""
    m = mark
    return f"""INSERT INTO sg_store (prefix, key, value, created_at, updated_at, expires_at,
        ttl_minutes) VALUES ({m}, {m}, {json_mark}, {m}, {m}, {m}, {m})
    ON CONFLICT (prefix, key) DO UPDATE SET
        value = excluded.value,
        created_at = CASE
            WHEN sg_store.expires_at IS NOT NULL AND sg_store.expires_at <= {m}
            THEN excluded.created_at ELSE sg_store.created_at END,
        updated_at = excluded.updated_at,
        expires_at = excluded.expires_at,
        ttl_minutes = excluded.ttl_minutes"""


def upsert_params(prefix: str, record: Record, text: str, now: float) -> tuple[Any, ...]:
    """The parameters of :func:`upsert_item` for ``record`` (``text``: its JSON)."""
    return (
        prefix,
        record.key,
        text,
        record.created_at,
        record.updated_at,
        record.expires_at,
        record.ttl_minutes,
        now,
    )
