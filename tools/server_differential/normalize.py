"""Making two servers' observations comparable, and diffing them.

Ids (uuids, 32-hex interrupt ids) are relabelled by first appearance within each
scenario, times become ``<ts>``, version/host keys are dropped; what remains must be
equal. :data:`TOLERATED` names the differences we keep on purpose, each with its
reason; they are reported apart from the real ones.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["normalize", "diff", "TOLERATED", "tolerated"]

_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_HEX32 = re.compile(r"^[0-9a-f]{32}$")
_TS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?([+-]\d\d:\d\d|Z)?$")
_EMBEDDED = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")

DROPPED_KEYS = frozenset(
    {
        "langgraph_request_id",
        "__request_start_time_ms__",
        "__after_seconds__",
        "langgraph_version",
        "langgraph_api_version",
        "langgraph_plan",
        "langgraph_host",
        "langgraph_api_url",
        "langgraph_auth_permissions",
        "langgraph_auth_user",
        "__pregel_node_finished",
        "ls_integration",
    }
)
"""Keys whose values say which server or version answered, not what it did."""

TOLERATED: dict[str, str] = {
    "join_stream_replay": (
        "stategraph replays a finished run's events to join_stream (it keeps them an "
        "hour; see docs/server.md); langgraph dev sends nothing once a non-resumable run "
        "ended"
    ),
}
"""Differences kept on purpose: name -> reason."""


class _Labels:
    def __init__(self) -> None:
        self.ids: dict[str, str] = {}

    def label(self, value: str, kind: str) -> str:
        if value not in self.ids:
            self.ids[value] = f"<{kind}{len(self.ids)}>"
        return self.ids[value]


def _norm(value: Any, labels: _Labels) -> Any:
    if isinstance(value, dict):
        # keys in sorted order, so ids are labelled the same whatever the key order
        return {
            str(k if not _UUID.match(str(k)) else labels.label(str(k), "id")): _norm(
                value[k], labels
            )
            for k in sorted(value, key=str)
            if k not in DROPPED_KEYS
        }
    if isinstance(value, list):
        return [_norm(v, labels) for v in value]
    if isinstance(value, str):
        if _UUID.match(value):
            return labels.label(value, "id")
        if _HEX32.match(value):
            return labels.label(value, "hex")
        if _TS.match(value):
            return "<ts>"
        if _EMBEDDED.search(value):
            return _EMBEDDED.sub(lambda m: labels.label(m.group(0), "id"), value)
    return value


def normalize(observations: list[list[Any]]) -> list[list[Any]]:
    """One scenario's observations with ids relabelled and volatile keys dropped."""
    labels = _Labels()
    return [[label, _norm(value, labels)] for label, value in observations]


def diff(left: Any, right: Any, path: str = "") -> list[str]:
    """Where ``left`` (LangGraph) and ``right`` (stategraph) differ, one line each."""
    if isinstance(left, dict) and isinstance(right, dict):
        out: list[str] = []
        for key in sorted(set(left) | set(right)):
            where = f"{path}.{key}"
            if key not in right:
                out.append(f"{where}: only langgraph has it ({_short(left[key])})")
            elif key not in left:
                out.append(f"{where}: only stategraph has it ({_short(right[key])})")
            else:
                out.extend(diff(left[key], right[key], where))
        return out
    if isinstance(left, list) and isinstance(right, list):
        if len(left) != len(right):
            return [
                f"{path}: {len(left)} items vs {len(right)} ({_short(left)} vs {_short(right)})"
            ]
        out = []
        for i, (a, b) in enumerate(zip(left, right, strict=True)):
            out.extend(diff(a, b, f"{path}[{i}]"))
        return out
    if left != right:
        return [f"{path}: {_short(left)} vs {_short(right)}"]
    return []


def _short(value: Any, width: int = 160) -> str:
    import json

    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= width else text[: width - 1] + "…"


def tolerated(scenario: str, line: str) -> str | None:
    """The name of the tolerated difference ``line`` is, or ``None``."""
    if scenario == "runs_join_stream_running" and "events" in line:
        return "join_stream_replay"
    return None
