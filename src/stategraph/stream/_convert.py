"""Stream parts (``version="v2"`` chunks) to protocol events."""

from __future__ import annotations

import time
from typing import Any

from stategraph.stream._types import ProtocolEvent

__all__ = ["convert_to_protocol_event"]


def convert_to_protocol_event(part: dict[str, Any]) -> ProtocolEvent:
    """``{"type", "ns", "data"[, "interrupts"]}`` -> a protocol event (no ``seq`` yet)."""
    params: dict[str, Any] = {
        "namespace": list(part.get("ns") or ()),
        "timestamp": int(time.time() * 1000),
        "data": part.get("data"),
    }
    if "interrupts" in part:
        params["interrupts"] = part["interrupts"]
    return {"type": "event", "method": part["type"], "params": params}  # type: ignore[typeddict-item]
