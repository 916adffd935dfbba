"""Small helpers shared by the savers: reading run configs and matching metadata."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stategraph.constants import CONF

__all__ = ["thread_ns_id", "checkpoint_config", "metadata_matches"]


def thread_ns_id(config: Mapping[str, Any], what: str) -> tuple[str, str, str | None]:
    """Return ``(thread_id, checkpoint_ns, checkpoint_id)`` from a run config.

    ``thread_id`` is required (converted with ``str``; a UUID works), ``checkpoint_ns``
    defaults to ``""``. ``what`` names the operation for the error message.
    """
    conf = config.get(CONF) or {}
    thread_id = conf.get("thread_id")
    if thread_id is None:
        raise ValueError(
            f"{what} needs config['configurable']['thread_id']: pass a config like "
            "{'configurable': {'thread_id': 'my-thread'}}."
        )
    ns = conf.get("checkpoint_ns")
    checkpoint_id = conf.get("checkpoint_id")
    return str(thread_id), "" if ns is None else str(ns), checkpoint_id or None


def checkpoint_config(thread_id: str, checkpoint_ns: str, checkpoint_id: str) -> dict[str, Any]:
    """Return the config that names one saved checkpoint."""
    return {
        CONF: {
            "thread_id": thread_id,
            "checkpoint_ns": checkpoint_ns,
            "checkpoint_id": checkpoint_id,
        }
    }


_ABSENT = object()


def metadata_matches(metadata: Mapping[str, Any], filter: Mapping[str, Any] | None) -> bool:
    """Whether ``metadata`` has every key of ``filter`` with an equal value."""
    if not filter:
        return True
    for key, expected in filter.items():
        actual = metadata.get(key, _ABSENT)
        if actual is _ABSENT or actual != expected:
            return False
    return True
