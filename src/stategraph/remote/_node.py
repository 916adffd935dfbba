"""``RemoteGraph`` as a node of a local graph: what the node sends to the remote run.

A node run reads the remote thread first. When the remote thread waits on
interrupts, the node asks the same questions locally with
:func:`~stategraph.types.interrupt`: the local graph pauses until each has an answer,
then the answers go to the remote run as one ``Command(resume=...)``. When the remote
thread waits on nothing, the node sends its input as a fresh run, unless the local
graph is resuming this very node: its answer was meant for a remote question that is
gone (the thread was changed or deleted on the server), and sending the input instead
would silently lose it, so that is a :class:`~stategraph.remote.RemoteError`.
"""

from __future__ import annotations

from typing import Any

from stategraph._context import task_paused_before
from stategraph.remote._errors import RemoteError
from stategraph.types import Command, StateSnapshot, interrupt

__all__ = ["node_input"]

_PLACEHOLDER_ID = "placeholder-id"


def node_input(name: str, input: Any, state: StateSnapshot | None, where: str) -> Any:
    """What a node run sends: its input, or the answers to the remote's interrupts.

    ``state`` is the remote thread's state (None when the thread does not exist yet);
    ``where`` names the request that read it, for messages.
    """
    pending = state.interrupts if state is not None else ()
    if not pending:
        if task_paused_before():
            if state is None:
                found = "does not exist"
            else:
                found = f"waits on no interrupt (next={list(state.next)!r})"
            raise RemoteError(
                f"RemoteGraph node '{name}' is being resumed, but the remote thread "
                f"{found} ({where}). The resume answer was meant for a remote interrupt that "
                "is gone; it was not sent as a new input. Check the remote thread (was it "
                "changed or deleted on the server?), then run the local graph again.",
                endpoint=where,
                field="interrupts",
            )
        return input
    answers = [interrupt(item.value) for item in pending]
    if len(pending) == 1:
        return Command(resume=answers[0])
    ids = [item.id for item in pending]
    if _PLACEHOLDER_ID in ids or len(set(ids)) != len(ids):
        raise RemoteError(
            f"RemoteGraph node '{name}': the remote thread waits on {len(pending)} interrupts "
            f"but they do not all have distinct ids ({where}), so the answers cannot be "
            "matched to them.",
            endpoint=where,
            field="tasks.interrupts.id",
        )
    return Command(resume=dict(zip(ids, answers, strict=True)))
