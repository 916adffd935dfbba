"""Reading saved checkpoints without the graph: threads, next nodes, interrupts, changes."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from stategraph.cli._errors import EXIT_NOT_FOUND, CliError
from stategraph.cli._output import is_internal_channel

__all__ = [
    "ThreadSummary",
    "list_threads",
    "thread_checkpoints",
    "find_checkpoint",
    "pending_nodes",
    "pending_interrupts",
    "state_values",
    "changes",
]

_BRANCH = "branch:to:"
_TASKS = "__pregel_tasks"


@dataclass
class ThreadSummary:
    """One thread of a checkpoint database."""

    thread_id: str
    checkpoints: int = 0
    namespaces: set[str] = field(default_factory=set)
    latest: Any = None


def _newer(version: Any, seen: Any) -> bool:
    if seen is None:
        return True
    try:
        return bool(version > seen)
    except TypeError:
        return str(version) > str(seen)


def pending_nodes(checkpoint: Mapping[str, Any]) -> list[str]:
    """Nodes a checkpoint will run next, read from its routing channels.

    A node is next when the channel that triggers it holds a value newer than the
    one the node last saw (``StateGraph`` edges and routes), or a ``Send`` packet
    names it. Barriers and low-level graphs need the graph: ``show --graph``.
    """
    versions = checkpoint.get("channel_versions") or {}
    seen = checkpoint.get("versions_seen") or {}
    values = checkpoint.get("channel_values") or {}
    out: list[str] = []
    for chan, version in versions.items():
        if chan not in values:
            continue  # a trigger without a value (already consumed) triggers nothing
        if chan.startswith(_BRANCH):
            node = chan[len(_BRANCH) :]
        elif chan == "__start__":
            node = "__start__"
        else:
            continue
        if _newer(version, (seen.get(node) or {}).get(chan)) and node not in out:
            out.append(node)
    for packet in (checkpoint.get("channel_values") or {}).get(_TASKS) or ():
        name = getattr(packet, "node", None)
        if isinstance(name, str) and name not in out:
            out.append(name)
    return out


def pending_interrupts(pending_writes: Any) -> list[dict[str, Any]]:
    """The interrupts waiting in a checkpoint's pending writes."""
    found = []
    for task_id, channel, value in pending_writes or ():
        if channel != "__interrupt__":
            continue
        for item in value if isinstance(value, (list, tuple)) else [value]:
            found.append(
                {
                    "task_id": task_id,
                    "id": getattr(item, "id", None),
                    "value": getattr(item, "value", item),
                }
            )
    return found


def state_values(checkpoint: Mapping[str, Any]) -> dict[str, Any]:
    """The state keys of a checkpoint (internal channels left out)."""
    values = checkpoint.get("channel_values") or {}
    return {k: v for k, v in values.items() if not is_internal_channel(k)}


def changes(new: Mapping[str, Any], old: Mapping[str, Any]) -> list[tuple[str, str, Any, Any]]:
    """``(kind, key, old, new)`` for each added (+), changed (~) or removed (-) key."""
    out: list[tuple[str, str, Any, Any]] = []
    for key in new:
        if key not in old:
            out.append(("+", key, None, new[key]))
        elif new[key] != old[key]:
            out.append(("~", key, old[key], new[key]))
    out.extend(("-", key, old[key], None) for key in old if key not in new)
    return out


def list_threads(saver: Any, filter: Mapping[str, Any] | None = None) -> list[ThreadSummary]:
    """Every thread with checkpoints (matching ``filter`` on metadata), newest first."""
    threads: dict[str, ThreadSummary] = {}
    for tup in saver.list(None, filter=dict(filter) if filter else None):
        conf = tup.config["configurable"]
        summary = threads.setdefault(conf["thread_id"], ThreadSummary(conf["thread_id"]))
        summary.checkpoints += 1
        ns = conf.get("checkpoint_ns", "")
        summary.namespaces.add(ns)
        if ns == "" and (
            summary.latest is None
            or tup.config["configurable"]["checkpoint_id"]
            > summary.latest.config["configurable"]["checkpoint_id"]
        ):
            summary.latest = tup
    return sorted(
        threads.values(),
        key=lambda s: s.latest.config["configurable"]["checkpoint_id"] if s.latest else "",
        reverse=True,
    )


def thread_checkpoints(
    saver: Any, thread_id: str, ns: str = "", limit: int | None = None
) -> Iterator[Any]:
    """Checkpoints of one thread and namespace, newest first."""
    config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns}}
    return iter(saver.list(config, limit=limit))


def find_checkpoint(saver: Any, thread_id: str, checkpoint_id: str | None, ns: str = "") -> Any:
    """The checkpoint tuple asked for (the latest when ``checkpoint_id`` is None)."""
    conf: dict[str, Any] = {"thread_id": thread_id, "checkpoint_ns": ns}
    if checkpoint_id:
        conf["checkpoint_id"] = checkpoint_id
    tup = saver.get_tuple({"configurable": conf})
    if tup is None:
        if checkpoint_id:
            raise CliError(
                f"Thread '{thread_id}' has no checkpoint '{checkpoint_id}' "
                f"(list them with: stategraph history {thread_id}).",
                EXIT_NOT_FOUND,
            )
        raise CliError(
            f"No thread '{thread_id}' in this database (list them with: stategraph threads).",
            EXIT_NOT_FOUND,
        )
    return tup
