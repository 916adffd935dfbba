"""Generative UI messages: a node pushes UI components to the client as it runs.

``push_ui_message`` emits a ``UIMessage`` on the ``custom`` stream at once and writes it
to the state key ``state_key`` (``"ui"`` by default), where :func:`ui_message_reducer`
keeps the list of components: a message with a known id replaces the old one (or, with
``merge=True``, updates its props) and ``delete_ui_message`` removes one.
"""

from __future__ import annotations

from typing import Any, Literal, Union
from uuid import uuid4

from typing_extensions import TypedDict

from stategraph._context import current_task

__all__ = [
    "AnyUIMessage",
    "RemoveUIMessage",
    "UIMessage",
    "delete_ui_message",
    "push_ui_message",
    "ui_message_reducer",
]


class UIMessage(TypedDict):
    """A UI component to render: its ``name``, ``props`` and ``metadata``."""

    type: Literal["ui"]
    id: str
    name: str
    props: dict[str, Any]
    metadata: dict[str, Any]


class RemoveUIMessage(TypedDict):
    """Removes the UI message with ``id`` from the state's list."""

    type: Literal["remove-ui"]
    id: str


AnyUIMessage = Union[UIMessage, RemoveUIMessage]


def push_ui_message(
    name: str,
    props: dict[str, Any],
    *,
    id: str | None = None,
    metadata: dict[str, Any] | None = None,
    message: Any = None,
    state_key: str | None = "ui",
    merge: bool = False,
) -> UIMessage:
    """Send a UI component from the running node; returns the message sent.

    ``message`` ties the component to a chat message (its id goes in the metadata);
    ``merge=True`` merges ``props`` into the component with the same ``id`` instead of
    replacing it. ``state_key=None`` only streams the message.
    """
    task = current_task("push_ui_message()")
    config = task.config
    meta: dict[str, Any] = {
        "merge": merge,
        "run_id": config.get("run_id"),
        "tags": config.get("tags") or None,
        "name": config.get("run_name"),
        **(metadata or {}),
    }
    if message is not None:
        message_id = message.get("id") if isinstance(message, dict) else message.id
        meta["message_id"] = message_id
    ui: UIMessage = {
        "type": "ui",
        "id": id or str(uuid4()),
        "name": name,
        "props": props,
        "metadata": meta,
    }
    task.stream_writer(ui)
    if state_key:
        task.send([(state_key, ui)])
    return ui


def delete_ui_message(id: str, *, state_key: str = "ui") -> RemoveUIMessage:
    """Remove the UI component ``id`` (streamed, and applied to ``state_key``)."""
    task = current_task("delete_ui_message()")
    remove: RemoveUIMessage = {"type": "remove-ui", "id": id}
    task.stream_writer(remove)
    if state_key:
        task.send([(state_key, remove)])
    return remove


def ui_message_reducer(
    left: list[AnyUIMessage] | AnyUIMessage, right: list[AnyUIMessage] | AnyUIMessage
) -> list[AnyUIMessage]:
    """Merge UI messages into the list: same id replaces (or merges props with
    ``metadata["merge"]``), ``remove-ui`` deletes; raises ``ValueError`` when the id to
    delete is not in the list."""
    merged = list(left) if isinstance(left, list) else [left]
    updates = list(right) if isinstance(right, list) else [right]
    index = {m["id"]: i for i, m in enumerate(merged)}
    removed: set[int] = set()
    for msg in updates:
        pos = index.get(msg["id"])
        if msg["type"] == "remove-ui":
            if pos is None or pos in removed:
                raise ValueError(
                    f"Cannot delete UI message '{msg['id']}': no UI message with that id is "
                    "in the state."
                )
            removed.add(pos)
            continue
        ui = msg
        if pos is None or pos in removed:
            index[ui["id"]] = len(merged)
            merged.append(ui)
            continue
        old = merged[pos]
        if ui.get("metadata", {}).get("merge") and old["type"] == "ui":
            ui = {**ui, "props": {**old["props"], **ui["props"]}}
        merged[pos] = ui
    return [m for i, m in enumerate(merged) if i not in removed]
