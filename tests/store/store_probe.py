"""The same store operations against LangGraph's or stategraph's PostgresStore.

``python store_probe.py langgraph|stategraph CONNINFO`` prints the results as JSON;
``test_postgres_vs_langgraph.py`` runs it with both libraries (LangGraph's in its own
interpreter) and compares. No semantic search: LangGraph's store needs pgvector for
that, which the test server may not have.
"""

from __future__ import annotations

import json
import sys
from typing import Any


def probe(store: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    store.setup()
    store.put(("u", "a"), "k1", {"text": "hello world", "n": 1, "tags": ["x"]})
    store.put(("u", "b"), "k2", {"text": "goodbye", "n": 2, "meta": {"team": "red"}})
    store.put(("u", "a", "x"), "k3", {"text": "hello there", "n": 3})
    store.put(("v",), "k4", {"text": "zzz", "n": 4, "flag": True})
    store.put(("u", "a"), "k5", {"other": 1})
    store.put(("u", "a"), "k1", {"text": "hello again", "n": 10, "tags": ["y"]})  # update
    out["ns"] = store.list_namespaces()
    out["ns_prefix"] = store.list_namespaces(prefix=("u",))
    out["ns_suffix"] = store.list_namespaces(suffix=("a",))
    out["ns_depth"] = store.list_namespaces(max_depth=1)
    out["ns_limit"] = store.list_namespaces(limit=2, offset=1)
    out["ns_wild"] = store.list_namespaces(prefix=("u", "*"))
    out["search"] = [r.key for r in store.search(("u",))]
    out["search_all"] = [r.key for r in store.search(())]
    out["search_page"] = [r.key for r in store.search(("u",), limit=2, offset=1)]
    for name, flt in {
        "eq": {"n": 3},
        "gt": {"n": {"$gt": 2}},
        "lte": {"n": {"$lte": 3}},
        "ne": {"n": {"$ne": 3}},
        "text": {"text": "goodbye"},
        "dotted": {"meta.team": "red"},
        "bool": {"flag": True},
        "missing": {"nope": 1},
    }.items():
        out[f"filter_{name}"] = [r.key for r in store.search((), filter=flt)]
    item = store.get(("u", "a"), "k1")
    out["get"] = [item.value, list(item.namespace), item.key, item.created_at <= item.updated_at]
    out["get_missing"] = store.get(("u", "a"), "nope")
    store.delete(("u", "a"), "k1")
    out["after_delete"] = store.get(("u", "a"), "k1")
    out["ns_after_delete"] = store.list_namespaces(prefix=("u", "a"))
    return json.loads(json.dumps(out, default=list))


def main() -> None:
    lib, conninfo = sys.argv[1], sys.argv[2]
    if lib == "langgraph":
        from langgraph.store.postgres import PostgresStore
    else:
        from stategraph.store.postgres import PostgresStore  # type: ignore[assignment]
    with PostgresStore.from_conn_string(conninfo) as store:
        print(json.dumps(probe(store), sort_keys=True))


if __name__ == "__main__":
    main()
