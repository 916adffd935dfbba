"""``langgraph._internal._config`` names used by libraries built on LangGraph."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stategraph.config import RunnableConfig

__all__ = ["patch_configurable"]


def patch_configurable(config: RunnableConfig | None, patch: Mapping[str, Any]) -> RunnableConfig:
    """A copy of ``config`` whose ``configurable`` is updated with ``patch``."""
    if config is None:
        return {"configurable": dict(patch)}
    configurable = {**(config.get("configurable") or {}), **patch}
    return {**config, "configurable": configurable}
