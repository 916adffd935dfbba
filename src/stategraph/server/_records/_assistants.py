"""Assistants and their versions (database operations)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from typing_extensions import Unpack

from stategraph.server._db import Op
from stategraph.server._json import dumps, iso, loads
from stategraph.server._records._filters import contains
from stategraph.server._records._listing import Found, Listing, Page

__all__ = [
    "ASSISTANT_COLS",
    "assistant_json",
    "insert",
    "get",
    "update",
    "delete",
    "search",
    "versions",
    "set_latest",
]

ASSISTANT_COLS = (
    "assistant_id, graph_id, name, description, config, context, metadata, version, "
    "created_at, updated_at"
)
_SORTABLE = ("assistant_id", "graph_id", "name", "created_at", "updated_at")


def assistant_json(row: tuple[Any, ...]) -> dict[str, Any]:
    """An ``sg_srv_assistants`` row as LangGraph's Assistant."""
    return {
        "assistant_id": row[0],
        "graph_id": row[1],
        "config": loads(row[4]),
        "context": loads(row[5]),
        "metadata": loads(row[6]),
        "name": row[2],
        "created_at": iso(row[8]),
        "updated_at": iso(row[9]),
        "version": row[7],
        "description": row[3],
    }


_LISTING = Listing("sg_srv_assistants", ASSISTANT_COLS, "assistant_id", _SORTABLE, assistant_json)


def _version_json(row: tuple[Any, ...]) -> dict[str, Any]:
    return {
        "assistant_id": row[0],
        "version": row[1],
        "graph_id": row[2],
        "config": loads(row[5]),
        "context": loads(row[6]),
        "metadata": loads(row[7]),
        "created_at": iso(row[8]),
        "name": row[3],
        "description": row[4],
    }


def get(assistant_id: str) -> Op[dict[str, Any] | None]:
    """The assistant, or ``None``."""
    rows = yield (
        f"SELECT {ASSISTANT_COLS} FROM sg_srv_assistants WHERE assistant_id = ?",
        (assistant_id,),
    )
    return assistant_json(rows[0]) if rows else None


def insert(
    assistant_id: str,
    graph_id: str,
    config: Mapping[str, Any],
    context: Mapping[str, Any],
    metadata: Mapping[str, Any],
    name: str,
    description: str | None,
    if_exists: str = "raise",
) -> Op[tuple[dict[str, Any], bool]]:
    """Create an assistant (version 1); returns ``(assistant, created)``.

    ``if_exists="do_nothing"`` returns the existing one; ``"raise"`` returns it with
    ``created=False`` for the caller to refuse."""
    rows = yield (
        f"SELECT {ASSISTANT_COLS} FROM sg_srv_assistants WHERE assistant_id = ?",
        (assistant_id,),
    )
    if rows:
        return assistant_json(rows[0]), False
    now = time.time()
    values = (dumps(config), dumps(context), dumps(metadata))
    yield (
        "INSERT INTO sg_srv_assistants (assistant_id, graph_id, name, description, config,"
        " context, metadata, version, created_at, updated_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?) ON CONFLICT DO NOTHING",
        (assistant_id, graph_id, name, description, *values, now, now),
    )
    # ON CONFLICT: another process (a server starting beside this one on the same
    # database) may create the same default assistant between the SELECT and here
    yield (
        "INSERT INTO sg_srv_assistant_versions (assistant_id, version, graph_id, name,"
        " description, config, context, metadata, created_at) VALUES (?, 1, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT DO NOTHING",
        (assistant_id, graph_id, name, description, *values, now),
    )
    rows = yield (
        f"SELECT {ASSISTANT_COLS} FROM sg_srv_assistants WHERE assistant_id = ?",
        (assistant_id,),
    )
    return assistant_json(rows[0]), True


def update(assistant_id: str, changes: Mapping[str, Any]) -> Op[dict[str, Any] | None]:
    """A new version with ``changes`` (graph_id, config, context, metadata merged,
    name, description); ``None`` if there is no such assistant."""
    rows = yield (
        f"SELECT {ASSISTANT_COLS} FROM sg_srv_assistants WHERE assistant_id = ?",
        (assistant_id,),
    )
    if not rows:
        return None
    current = assistant_json(rows[0])
    top = yield (
        "SELECT MAX(version) FROM sg_srv_assistant_versions WHERE assistant_id = ?",
        (assistant_id,),
    )
    version = int(top[0][0] or 0) + 1
    new = {
        "graph_id": changes.get("graph_id") or current["graph_id"],
        "config": changes["config"] if changes.get("config") is not None else current["config"],
        "context": changes["context"] if changes.get("context") is not None else current["context"],
        "metadata": {**current["metadata"], **(changes.get("metadata") or {})},
        "name": changes.get("name") or current["name"],
        "description": changes["description"]
        if changes.get("description") is not None
        else current["description"],
    }
    now = time.time()
    values = (dumps(new["config"]), dumps(new["context"]), dumps(new["metadata"]))
    yield (
        "INSERT INTO sg_srv_assistant_versions (assistant_id, version, graph_id, name,"
        " description, config, context, metadata, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (assistant_id, version, new["graph_id"], new["name"], new["description"], *values, now),
    )
    yield (
        "UPDATE sg_srv_assistants SET graph_id = ?, name = ?, description = ?, config = ?,"
        " context = ?, metadata = ?, version = ?, updated_at = ? WHERE assistant_id = ?",
        (new["graph_id"], new["name"], new["description"], *values, version, now, assistant_id),
    )
    rows = yield (
        f"SELECT {ASSISTANT_COLS} FROM sg_srv_assistants WHERE assistant_id = ?",
        (assistant_id,),
    )
    return assistant_json(rows[0])


def delete(assistant_id: str) -> Op[bool]:
    """Delete the assistant and its versions; ``False`` if there was none."""
    rows = yield (
        "DELETE FROM sg_srv_assistants WHERE assistant_id = ? RETURNING assistant_id",
        (assistant_id,),
    )
    yield ("DELETE FROM sg_srv_assistant_versions WHERE assistant_id = ?", (assistant_id,))
    return bool(rows)


def search(
    *,
    graph_id: str | None = None,
    name: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    **page: Unpack[Page],
) -> Op[Found]:
    """Assistants matching every filter (``metadata`` by containment); the page and
    the total count."""
    where: list[str] = []
    params: list[Any] = []
    if graph_id:
        where.append("graph_id = ?")
        params.append(graph_id)
    if name:
        where.append("LOWER(name) LIKE ?")
        params.append(f"%{name.lower()}%")
    return (yield from _LISTING.page(where, params, {"metadata": metadata}, **page))


def versions(
    assistant_id: str,
    metadata: Mapping[str, Any] | None = None,
    limit: int = 10,
    offset: int = 0,
) -> Op[list[dict[str, Any]]]:
    """The assistant's versions, newest first."""
    rows = yield (
        "SELECT assistant_id, version, graph_id, name, description, config, context, metadata,"
        " created_at FROM sg_srv_assistant_versions WHERE assistant_id = ? ORDER BY version DESC",
        (assistant_id,),
    )
    found = [_version_json(r) for r in rows]
    if metadata:
        found = [v for v in found if contains(v["metadata"], metadata)]
    return found[offset : offset + limit]


def set_latest(assistant_id: str, version: int) -> Op[dict[str, Any] | None]:
    """Make ``version`` the assistant's current one; ``None`` if either is unknown."""
    rows = yield (
        "SELECT assistant_id, version, graph_id, name, description, config, context, metadata,"
        " created_at FROM sg_srv_assistant_versions WHERE assistant_id = ? AND version = ?",
        (assistant_id, version),
    )
    if not rows:
        return None
    r = rows[0]
    yield (
        "UPDATE sg_srv_assistants SET graph_id = ?, name = ?, description = ?, config = ?,"
        " context = ?, metadata = ?, version = ?, updated_at = ? WHERE assistant_id = ?",
        (r[2], r[3], r[4], r[5], r[6], r[7], version, time.time(), assistant_id),
    )
    out = yield from get(assistant_id)
    return out
