"""The effects the sans-I/O loop yields to the shells that perform them.

The loop (:meth:`~stategraph.pregel._loop.drive.Loop.drive`) is a generator: it yields
one of these small immutable records whenever it needs I/O, and the shell sends the
result back (``None`` where there is none). A shell dispatches on the record's type:

* :class:`GetTuple` -> ``saver.get_tuple(config)``
* :class:`GetBefore` -> the newest checkpoint of ``config``'s namespace created before
  ``checkpoint_id`` (see :func:`get_before`), or ``None``
* :class:`DeltaHistory` -> ``saver.get_delta_channel_history(config=..., channels=...)``:
  what rebuilds the delta-stored channels of a checkpoint
* :class:`Put` -> ``saver.put(config, checkpoint, metadata, new_versions)``
* :class:`PutWrites` -> ``saver.put_writes(config, writes, task_id, task_path)``
* :class:`Execute` -> run the tasks, calling ``loop.task_finished`` as each ends
* :class:`Flush` -> wait until every background saver call has finished
* :class:`Spawn` -> (returned by ``loop.task_finished``) run ``task`` in the same step,
  like the others, e.g. the error handler of a task that failed

``blocking=False`` (durability ``"async"``) lets the shell run a ``Put`` or
``PutWrites`` in the background, provided calls still reach the saver in the order they
were yielded. The update generators of ``update_state`` yield the saver effects too.

The records are slotted dataclasses with named fields, made once per step (one
``Execute``; with a saver, one ``Put`` and a ``PutWrites`` per task), so they are made
as cheaply as a Python object can be: not ``frozen`` (a frozen dataclass sets each
field through ``object.__setattr__``, which made a ``Put`` cost four times as many
instructions as a plain slotted one: about 8,200 against 1,900 on CPython 3.11) and
without ``__post_init__``. Nothing changes an effect once it is yielded: the loop
makes a new one for every request, and a shell or driver only reads it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from stategraph.pregel._task import Task

__all__ = [
    "Effect",
    "GetTuple",
    "GetBefore",
    "DeltaHistory",
    "Put",
    "PutWrites",
    "Execute",
    "Flush",
    "Spawn",
    "FLUSH",
    "takes_task_path",
    "saver_call",
    "get_before",
    "aget_before",
]


@dataclass(slots=True)
class GetTuple:
    """Load the checkpoint tuple ``config`` names (the latest when it names no id);
    the shell sends back ``saver.get_tuple(config)``."""

    config: dict[str, Any]
    """The config of the checkpoint (``{"configurable": {...}}``)."""


@dataclass(slots=True)
class GetBefore:
    """Load the newest checkpoint of ``config``'s namespace created before
    ``checkpoint_id`` (a subgraph's state when its replayed parent ran); the shell
    sends back the tuple or ``None``."""

    config: dict[str, Any]
    """The namespace to look in (``thread_id``, ``checkpoint_ns``)."""
    checkpoint_id: str
    """The checkpoint the answer must precede."""


@dataclass(slots=True)
class DeltaHistory:
    """Read what rebuilds the delta-stored ``channels`` of the checkpoint ``config``
    names; the shell sends back ``saver.get_delta_channel_history(...)``."""

    config: dict[str, Any]
    """The config of the loaded checkpoint."""
    channels: Sequence[str]
    """The channels whose value the checkpoint does not store."""


@dataclass(slots=True)
class Put:
    """Save a checkpoint: ``saver.put(config, checkpoint, metadata, new_versions)``."""

    config: dict[str, Any]
    """The config of the parent checkpoint (where the new one is saved)."""
    checkpoint: dict[str, Any]
    """The checkpoint to save (the saver may read it later, in the background)."""
    metadata: dict[str, Any]
    """Its metadata (``source``, ``step``, ``parents``...)."""
    new_versions: dict[str, Any]
    """The channel versions that changed since the last save."""
    blocking: bool
    """``False`` lets the shell make the call in the background (durability ``"async"``)."""


@dataclass(slots=True)
class PutWrites:
    """Save a task's writes against a checkpoint:
    ``saver.put_writes(config, writes, task_id, task_path)``."""

    config: dict[str, Any]
    """The config of the checkpoint the writes belong to."""
    writes: list[tuple[str, Any]]
    """``(channel, value)`` pairs, in the order the task wrote them."""
    task_id: str
    """The task that wrote them."""
    task_path: str
    """The task's path as savers store it (``~``-joined), ``""`` for none."""
    blocking: bool
    """``False`` lets the shell make the call in the background (durability ``"async"``)."""


@dataclass(slots=True)
class Execute:
    """Run a step's ``tasks``, calling ``loop.task_finished`` as each one ends and
    performing the effects it returns; the shell sends back ``None``."""

    tasks: list[Task]
    """The step's tasks not done yet, in the loop's order."""


@dataclass(slots=True)
class Flush:
    """Wait until every background saver call has been made (raising its error, if
    one failed); the run's last effect."""


@dataclass(slots=True)
class Spawn:
    """Run ``task`` in the current step, like the step's other tasks (returned by
    ``loop.task_finished``: the error handler of a task that failed)."""

    task: Task
    """The task to start."""


Effect = GetTuple | GetBefore | DeltaHistory | Put | PutWrites | Execute | Flush | Spawn
"""Any effect the loop yields (or ``task_finished`` returns)."""

FLUSH = Flush()
"""The one :class:`Flush` (it has no fields)."""

_TAKES_PATH: dict[tuple[type, str], bool] = {}


def takes_task_path(saver: object, method: str) -> bool:
    """Whether ``saver.<method>`` (``put_writes``/``aput_writes``) accepts ``task_path``.

    Savers written for older versions define ``put_writes(config, writes, task_id)``;
    the shells then call it without the path. Decided once per saver class.
    """
    key = (type(saver), method)
    known = _TAKES_PATH.get(key)
    if known is None:
        import inspect

        try:
            params = inspect.signature(getattr(saver, method)).parameters.values()
        except (TypeError, ValueError):
            known = True
        else:
            known = (
                any(p.kind is p.VAR_POSITIONAL for p in params)
                or len(
                    [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
                )
                >= 4
            )
        _TAKES_PATH[key] = known
    return known


def saver_call(
    effect: Put | PutWrites, config: dict[str, Any], with_path: bool = True
) -> tuple[str, tuple[Any, ...]]:
    """The saver call that performs ``effect``: the sync method's name (``put`` or
    ``put_writes``; an async caller prefixes ``a``) and its arguments, with ``config``
    (the effect's own, or with the run's fencing token) in place of the effect's.
    ``with_path=False`` leaves out the task path, for a saver whose ``put_writes``
    takes none (see :func:`takes_task_path`)."""
    if isinstance(effect, Put):
        return "put", (config, effect.checkpoint, effect.metadata, effect.new_versions)
    if with_path:
        return "put_writes", (config, effect.writes, effect.task_id, effect.task_path)
    return "put_writes", (config, effect.writes, effect.task_id)


def _before(effect: GetBefore) -> dict[str, Any]:
    return {"configurable": {"checkpoint_id": effect.checkpoint_id}}


def get_before(saver: Any, effect: GetBefore) -> Any:
    """Perform a :class:`GetBefore` with the saver's sync ``list``."""
    for item in saver.list(effect.config, before=_before(effect), limit=1):
        return item
    return None


async def aget_before(saver: Any, effect: GetBefore) -> Any:
    """Perform a :class:`GetBefore` with the saver's async ``alist``."""
    async for item in saver.alist(effect.config, before=_before(effect), limit=1):
        return item
    return None
