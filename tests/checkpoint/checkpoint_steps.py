"""Saving a checkpoint by hand, as one step of a run would, for saver tests."""

from __future__ import annotations

from typing import Any

from stategraph.checkpoint.base import (
    BaseCheckpointSaver,
    CheckpointMetadata,
    create_checkpoint,
)


def put_step(
    saver: BaseCheckpointSaver[Any], config: dict[str, Any], parent: Any, step: int, value: Any
) -> tuple[dict[str, Any], Any]:
    """Save step ``step`` after ``parent`` with channel ``x`` set to ``value`` (under a
    new version); return the saved config and the checkpoint."""
    checkpoint = create_checkpoint(parent, None, step)
    version = saver.get_next_version(checkpoint["channel_versions"].get("x"), None)
    checkpoint["channel_values"]["x"] = value
    checkpoint["channel_versions"]["x"] = version
    metadata: CheckpointMetadata = {"source": "loop", "step": step}
    return saver.put(config, checkpoint, metadata, {"x": version}), checkpoint
