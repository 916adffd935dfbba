"""Which observers a run gets: those registered for every run
(:func:`register_observer`), those its parent run passes on, and an adapter for the
handlers of ``config["callbacks"]`` (:func:`observers_for`).

The fan-out they are wrapped in is :class:`~stategraph.observe._fanout.Observers`.
Kept apart from it because building the callback and logging observers imports their
modules, which build on :mod:`stategraph.observe._protocol`, whose ``RunRecord``
names the fan-out: together they would tie the room in a circle (issue 21).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from stategraph.observe._run_logger import debug_logging_enabled

if TYPE_CHECKING:
    from stategraph.observe._fanout import Observers
    from stategraph.observe._protocol import RunObserver, RunRecord

__all__ = ["observers_for", "register_observer", "unregister_observer", "global_observers"]

_GLOBAL: list[RunObserver] = []
_GLOBAL_LOCK = threading.Lock()


def register_observer(observer: RunObserver) -> None:
    """Observe every run started from now on (used by ``stategraph.tracing``)."""
    with _GLOBAL_LOCK:
        if observer not in _GLOBAL:
            _GLOBAL.append(observer)


def unregister_observer(observer: RunObserver) -> None:
    """Stop observing runs with ``observer`` (runs already started keep it)."""
    with _GLOBAL_LOCK:
        if observer in _GLOBAL:
            _GLOBAL.remove(observer)


def global_observers() -> list[RunObserver]:
    """The observers registered with :func:`register_observer`."""
    return list(_GLOBAL)


def observers_for(config: dict[str, Any], parent: RunRecord | None) -> Observers | None:
    """The observers of a new run: inherited from ``parent`` (a nested run) or the
    registered ones (a root run), plus an adapter for the handlers of
    ``config["callbacks"]`` not observed yet. ``None`` when nobody listens."""
    inherited = parent.observers if parent is not None else None
    base: tuple[RunObserver, ...] = (
        inherited.items if inherited is not None else () if parent is not None else tuple(_GLOBAL)
    )
    extra: list[RunObserver] = []
    if parent is None and debug_logging_enabled():
        from stategraph.observe._logging import LoggingObserver

        extra.append(LoggingObserver())
    callbacks = config.get("callbacks")
    if callbacks:
        from stategraph.observe._callbacks import CallbackObserver

        known = [o for o in base if isinstance(o, CallbackObserver)]
        observer = CallbackObserver.for_callbacks(callbacks, known)
        if observer is not None:
            extra.append(observer)
    if not extra:
        if inherited is not None:
            return inherited
        if not base:
            return None  # nobody listens: the fan-out and its protocol stay unloaded
    from stategraph.observe._fanout import Observers

    return Observers((*base, *extra))
