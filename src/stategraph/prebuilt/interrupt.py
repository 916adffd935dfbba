"""Shapes of a human-in-the-loop exchange: what an agent asks, what a person answers.

``interrupt(HumanInterrupt(...))`` pauses a graph with a request an inbox UI (Agent
Inbox and the like) knows how to show; the run is resumed with
``Command(resume=HumanResponse(...))`` (or a list of them).
"""

from __future__ import annotations

from typing import Literal, Union

from typing_extensions import TypedDict

__all__ = ["ActionRequest", "HumanInterruptConfig", "HumanInterrupt", "HumanResponse"]


class HumanInterruptConfig(TypedDict):
    """Which answers the person may give to an interrupt."""

    allow_ignore: bool
    """The person may skip the action."""
    allow_respond: bool
    """The person may answer with free text."""
    allow_edit: bool
    """The person may change the action's arguments."""
    allow_accept: bool
    """The person may approve the action as it is."""


class ActionRequest(TypedDict):
    """An action awaiting review: its name and arguments."""

    action: str
    """The action (usually a tool name)."""
    args: dict
    """The action's arguments."""


class HumanInterrupt(TypedDict):
    """The value to pass to ``interrupt()`` to ask a person about an action."""

    action_request: ActionRequest
    """The action under review."""
    config: HumanInterruptConfig
    """The answers allowed."""
    description: Union[str, None]
    """Optional explanation shown to the person (Markdown)."""


class HumanResponse(TypedDict):
    """A person's answer, given back as the resume value.

    ``type``: ``"accept"`` (``args`` is ``None``), ``"ignore"`` (``None``),
    ``"response"`` (``args`` is the text) or ``"edit"`` (``args`` is the edited
    :class:`ActionRequest`).
    """

    type: Literal["accept", "ignore", "response", "edit"]
    args: Union[str, ActionRequest, None]
