"""Effect tags yielded by the sans-I/O loop to the shells that perform them.

Each effect is a tuple whose first item is one of these tags:

* ``(GET_TUPLE, config)`` -> the shell returns ``saver.get_tuple(config)``
* ``(GET_BEFORE, config, checkpoint_id)`` -> the newest checkpoint of ``config``'s
  namespace created before ``checkpoint_id`` (see :func:`get_before`), or ``None``
* ``(PUT, config, checkpoint, metadata, new_versions, blocking)`` -> ``saver.put``
* ``(PUT_WRITES, config, writes, task_id, task_path, blocking)`` -> ``saver.put_writes``
* ``(DELTA_HISTORY, config, channels)`` -> ``saver.get_delta_channel_history(config=config,
  channels=channels)``: what rebuilds the delta-stored channels of a checkpoint
* ``(EXECUTE, tasks)`` -> run the tasks, calling ``loop.task_finished`` as each ends
* ``(FLUSH,)`` -> wait until every background saver call has finished
* ``(SPAWN, task)`` -> (returned by ``loop.task_finished``) run ``task`` in the same
  step, like the others, e.g. the error handler of a task that failed

``blocking=False`` (durability ``"async"``) lets the shell run the call in the
background, provided calls still reach the saver in the order they were yielded.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "GET_TUPLE",
    "GET_BEFORE",
    "DELTA_HISTORY",
    "PUT",
    "PUT_WRITES",
    "EXECUTE",
    "FLUSH",
    "SPAWN",
    "takes_task_path",
]

GET_TUPLE = 0
PUT = 1
PUT_WRITES = 2
EXECUTE = 3
FLUSH = 4
SPAWN = 5
GET_BEFORE = 6
DELTA_HISTORY = 7

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


def _before(effect: tuple[Any, ...]) -> dict[str, Any]:
    return {"configurable": {"checkpoint_id": effect[2]}}


def get_before(saver: Any, effect: tuple[Any, ...]) -> Any:
    """Perform a ``GET_BEFORE`` effect with the saver's sync ``list``."""
    for item in saver.list(effect[1], before=_before(effect), limit=1):
        return item
    return None


async def aget_before(saver: Any, effect: tuple[Any, ...]) -> Any:
    """Perform a ``GET_BEFORE`` effect with the saver's async ``alist``."""
    async for item in saver.alist(effect[1], before=_before(effect), limit=1):
        return item
    return None
