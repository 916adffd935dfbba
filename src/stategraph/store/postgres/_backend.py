"""SQL and the engine backend shared by the PostgreSQL stores.

Tables (in the connection's schema, next to LangGraph's ``store`` tables if any, never
touching them):

* ``sg_store``: one row per item; ``prefix`` is the namespace joined with ``"."``
  (labels cannot contain dots) in the ``"C"`` collation, so a namespace prefix is a
  byte range on the primary key; ``value`` is ``json`` (kept as written, so strings
  with NUL survive, which ``jsonb`` refuses); timestamps are epoch seconds given by the
  store's clock, never the server's.
* ``sg_store_vectors``: one row per embedded field, ``embedding real[]`` and its norm;
  with the ``vector`` extension (pgvector) also ``vec vector(dims)``.

Semantic search ranks in SQL: cosine similarity computed over ``real[]`` by
``unnest``, or pgvector's ``<=>`` operator. Filters are evaluated in Python on the
ranked rows (exact semantics of :mod:`stategraph.store._filters`); without a filter,
``LIMIT``/``OFFSET`` run in SQL. Every value reaches SQL as a bound parameter.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Literal

from stategraph.store._embed import vector_norm
from stategraph.store._engine import (
    Backend,
    Key,
    Record,
    Scan,
    item_json,
    upsert_item,
    upsert_params,
)

__all__ = [
    "MIGRATIONS",
    "VectorMode",
    "PgBackend",
    "Runner",
    "split_index_config",
    "vector_statements",
]

VectorMode = Literal["array", "pgvector"]
Runner = Callable[[str, Sequence[Any], bool], list[tuple[Any, ...]]]
"""``runner(sql, params, fetch)``: execute one statement, return its rows if ``fetch``."""

MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE IF NOT EXISTS sg_store (
            prefix text COLLATE "C" NOT NULL,
            key text NOT NULL,
            value json NOT NULL,
            created_at double precision NOT NULL,
            updated_at double precision NOT NULL,
            expires_at double precision,
            ttl_minutes double precision,
            PRIMARY KEY (prefix, key)
        )""",
        "CREATE INDEX IF NOT EXISTS sg_store_updated_at ON sg_store (updated_at)",
        """CREATE INDEX IF NOT EXISTS sg_store_expires_at ON sg_store (expires_at)
            WHERE expires_at IS NOT NULL""",
        """CREATE TABLE IF NOT EXISTS sg_store_vectors (
            prefix text COLLATE "C" NOT NULL,
            key text NOT NULL,
            seq integer NOT NULL,
            field text NOT NULL,
            embedding real[] NOT NULL,
            norm double precision NOT NULL,
            PRIMARY KEY (prefix, key, seq),
            FOREIGN KEY (prefix, key) REFERENCES sg_store (prefix, key) ON DELETE CASCADE
        )""",
    ),
)
"""Schema migrations; migration ``i`` brings the schema to version ``i + 1``."""

MIGRATIONS_TABLE = """CREATE TABLE IF NOT EXISTS sg_store_migrations (
    v integer PRIMARY KEY,
    applied_at double precision NOT NULL
)"""

_POSTGRES_INDEX_KEYS = ("ann_index_config", "distance_type")


def split_index_config(index: Any) -> tuple[Any, dict[str, Any]]:
    """Separate LangGraph's PostgreSQL-only index keys from the common config.

    Only ``distance_type="cosine"`` (the default) and exact search
    (``ann_index_config`` absent or ``{"kind": "flat"}``) are supported; anything else
    raises ``ValueError`` instead of silently ranking differently.
    """
    if not isinstance(index, dict):
        return index, {}
    extra = {k: index[k] for k in _POSTGRES_INDEX_KEYS if k in index}
    distance = extra.get("distance_type", "cosine")
    if distance != "cosine":
        raise ValueError(
            f"distance_type={distance!r} is not supported by stategraph's PostgresStore: "
            f"search ranks by cosine similarity (distance_type='cosine')."
        )
    ann = extra.get("ann_index_config")
    if ann is not None and (not isinstance(ann, Mapping) or ann.get("kind", "flat") != "flat"):
        raise ValueError(
            f"ann_index_config={ann!r} is not supported: stategraph's PostgresStore runs "
            f"exact search (ann_index_config={{'kind': 'flat'}} or leave it out)."
        )
    return {k: v for k, v in index.items() if k not in _POSTGRES_INDEX_KEYS}, extra


def vector_statements(dims: int) -> list[str]:
    """The statements adding the pgvector column (the extension must be installable)."""
    return [
        "CREATE EXTENSION IF NOT EXISTS vector",
        f"ALTER TABLE sg_store_vectors ADD COLUMN IF NOT EXISTS vec vector({int(dims)})",
    ]


_COLUMNS = "prefix, key, value::text, created_at, updated_at, expires_at, ttl_minutes"
_S_COLUMNS = (
    "s.prefix, s.key, s.value::text, s.created_at, s.updated_at, s.expires_at, s.ttl_minutes"
)
_LIVE = "(expires_at IS NULL OR expires_at > %s)"
_UPSERT = upsert_item("%s", "%s::json")
_S_LIVE = "(s.expires_at IS NULL OR s.expires_at > %s)"


def prefix_clause(prefix: tuple[str, ...], column: str = "prefix") -> tuple[str, list[Any]]:
    """SQL condition selecting the namespaces under ``prefix`` (a byte range)."""
    if not prefix:
        return "TRUE", []
    joined = ".".join(prefix)
    return (
        f"({column} = %s OR ({column} >= %s AND {column} < %s))",
        [joined, joined + ".", joined + "/"],
    )


class PgBackend(Backend):
    """The engine's storage primitives over one connection (through ``runner``)."""

    __slots__ = ("loads", "mode", "pending", "run")

    def __init__(self, run: Runner, mode: VectorMode, loads: Callable[[str], Any]) -> None:
        self.run = run
        self.mode = mode
        self.loads = loads
        self.pending: list[tuple[float, str, str]] = []

    def _record(self, row: Sequence[Any]) -> Record:
        return Record(
            tuple(row[0].split(".")), row[1], self.loads(row[2]), row[3], row[4], row[5], row[6]
        )

    def fetch(self, namespace: tuple[str, ...], key: str) -> Record | None:
        rows = self.run(
            f"SELECT {_COLUMNS} FROM sg_store WHERE prefix = %s AND key = %s",
            (".".join(namespace), key),
            True,
        )
        return self._record(rows[0]) if rows else None

    def put(self, record: Record, vectors: list[tuple[str, Any]], now: float) -> None:
        prefix = ".".join(record.namespace)
        text = item_json(record, "PostgresStore")
        self.run(_UPSERT, upsert_params(prefix, record, text, now), False)
        self.run(
            "DELETE FROM sg_store_vectors WHERE prefix = %s AND key = %s",
            (prefix, record.key),
            False,
        )
        for seq, (field, vec) in enumerate(vectors):
            floats = list(vec)
            if self.mode == "pgvector":
                self.run(
                    "INSERT INTO sg_store_vectors (prefix, key, seq, field, embedding, norm, vec) "
                    "VALUES (%s, %s, %s, %s, %s::real[], %s, %s::real[]::vector)",
                    (prefix, record.key, seq, field, floats, vector_norm(vec), floats),
                    False,
                )
            else:
                self.run(
                    "INSERT INTO sg_store_vectors (prefix, key, seq, field, embedding, norm) "
                    "VALUES (%s, %s, %s, %s, %s::real[], %s)",
                    (prefix, record.key, seq, field, floats, vector_norm(vec)),
                    False,
                )

    def remove(self, namespace: tuple[str, ...], key: str) -> None:
        self.run(
            "DELETE FROM sg_store WHERE prefix = %s AND key = %s",
            (".".join(namespace), key),
            False,
        )

    def scan(self, query: Scan) -> Iterator[Record]:
        prefix, now, _, predicate, limit, offset = query
        clause, params = prefix_clause(prefix)
        sql = f"SELECT {_COLUMNS} FROM sg_store WHERE {clause} AND {_LIVE}"
        params.append(now)
        sql += " ORDER BY updated_at DESC, prefix, key"
        if limit is not None:
            sql += " LIMIT %s OFFSET %s"
            params += [limit, offset]
        for row in self.run(sql, params, True):
            record = self._record(row)
            if predicate is None or predicate(record.value):
                yield record

    def vectors(self, prefix: tuple[str, ...], keys: set[Key]) -> dict[Key, list[Any]]:
        from array import array

        if not keys:
            return {}
        clause, params = prefix_clause(prefix)
        found: dict[Key, list[Any]] = {}
        for ns, key, embedding in self.run(
            f"SELECT prefix, key, embedding FROM sg_store_vectors WHERE {clause} "
            f"ORDER BY prefix, key, seq",
            params,
            True,
        ):
            ident = (tuple(ns.split(".")), key)
            if ident in keys:
                found.setdefault(ident, []).append(array("f", embedding))
        return found

    def rank(self, scan: Scan, query: Any) -> list[tuple[Record, float | None]]:
        """The records ``scan`` selects ranked by cosine similarity to ``query`` in SQL.

        An item's score is the best of its fields' similarities (``None`` without
        vectors, ranked last); equal scores keep the newest-first order.
        """
        prefix, now, _, predicate, limit, offset = scan
        assert limit is not None  # a ranked search always pages
        floats = list(query)
        qnorm = vector_norm(query)
        clause, params = prefix_clause(prefix, "s.prefix")
        if self.mode == "pgvector":
            score = (
                "(SELECT max(CASE WHEN v.norm = 0 OR %s = 0 THEN 0 "
                "ELSE 1 - (v.vec <=> %s::real[]::vector) END) "
                "FROM sg_store_vectors v WHERE v.prefix = s.prefix AND v.key = s.key)"
            )
            score_params: list[Any] = [qnorm, floats]
        else:
            score = (
                "(SELECT max(CASE WHEN v.norm = 0 OR %s = 0 THEN 0 ELSE "
                "(SELECT sum(a::float8 * b::float8) "
                "FROM unnest(v.embedding, %s::real[]) AS t(a, b)) / (v.norm * %s) END) "
                "FROM sg_store_vectors v WHERE v.prefix = s.prefix AND v.key = s.key)"
            )
            score_params = [qnorm, floats, qnorm]
        sql = (
            f"SELECT {_S_COLUMNS}, {score} AS score FROM sg_store s "
            f"WHERE {clause} AND {_S_LIVE} "
            f"ORDER BY score DESC NULLS LAST, s.updated_at DESC, s.prefix, s.key"
        )
        args = [*score_params, *params, now]
        if predicate is None:
            sql += " LIMIT %s OFFSET %s"
            args += [limit, offset]
        out: list[tuple[Record, float | None]] = []
        skip = 0 if predicate is None else offset
        for row in self.run(sql, args, True):
            record = self._record(row)
            if predicate is not None and not predicate(record.value):
                continue
            if skip:
                skip -= 1
                continue
            value = row[7]
            out.append((record, None if value is None else float(value)))
            if len(out) >= limit:
                break
        return out

    def namespaces(self, now: float) -> Iterable[tuple[str, ...]]:
        rows = self.run(f"SELECT DISTINCT prefix FROM sg_store WHERE {_LIVE}", (now,), True)
        return [tuple(row[0].split(".")) for row in rows]

    def refresh(self, record: Record, now: float) -> None:
        self.pending.append((now, ".".join(record.namespace), record.key))

    def apply_refreshes(self) -> None:
        """Restart the TTL of the items read with ``refresh_ttl`` (the row's own TTL)."""
        pending, self.pending = self.pending, []
        for entry in pending:
            self.run(
                "UPDATE sg_store SET expires_at = %s + ttl_minutes * 60.0 "
                "WHERE prefix = %s AND key = %s AND ttl_minutes IS NOT NULL",
                entry,
                False,
            )

    def sweep(self, now: float) -> int:
        """Delete expired items (their vectors go with them); return how many."""
        rows = self.run(
            "DELETE FROM sg_store WHERE expires_at IS NOT NULL AND expires_at <= %s RETURNING 1",
            (now,),
            True,
        )
        return len(rows)


def json_loader(deserializer: Callable[[bytes], Any] | None) -> Callable[[str], Any]:
    """How stored JSON text becomes a value (``deserializer`` gets bytes, as LangGraph's)."""
    if deserializer is None:
        return json.loads
    return lambda text: deserializer(text.encode())
