"""Time-to-live helpers: config validation and the background sweeper thread."""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Any

from stategraph.store._arguments import check_config_keys
from stategraph.store.base import TTLConfig

__all__ = ["normalize_ttl_config", "TTLSweeper"]

_TTL_KEYS = frozenset({"refresh_on_read", "default_ttl", "sweep_interval_minutes"})
_TTL_EXAMPLE = "{'default_ttl': 60, 'refresh_on_read': True}"


def _positive_or_none(name: str, value: Any) -> None:
    if value is None:
        return
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
        raise ValueError(
            f"TTL config {name!r} must be a positive number of minutes or None, got {value!r}."
        )


def normalize_ttl_config(ttl: TTLConfig | None) -> TTLConfig | None:
    """Validate a store's ``ttl`` argument and return a copy (``None`` stays ``None``)."""
    if ttl is None:
        return None
    check_config_keys(ttl, "TTL", _TTL_KEYS, _TTL_EXAMPLE)
    refresh = ttl.get("refresh_on_read", True)
    if not isinstance(refresh, bool):
        raise TypeError(f"TTL config 'refresh_on_read' must be a bool, got {refresh!r}.")
    _positive_or_none("default_ttl", ttl.get("default_ttl"))
    _positive_or_none("sweep_interval_minutes", ttl.get("sweep_interval_minutes"))
    return TTLConfig(**ttl)


class TTLSweeper:
    """A daemon thread calling a store's ``sweep_ttl`` every ``interval_minutes``.

    It holds only a weak reference to the store, so a forgotten store can still be
    garbage-collected (the thread then ends at its next wake-up).
    """

    def __init__(self, sweep: Callable[[], int], interval_minutes: float) -> None:
        self._sweep = weakref.WeakMethod(sweep)
        self._interval = interval_minutes * 60.0
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._run, name="stategraph-store-ttl-sweeper", daemon=True
        )
        self.sweeps = 0
        """Number of completed sweeps (for monitoring and tests)."""

    def start(self) -> None:
        """Start the thread."""
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            sweep = self._sweep()
            if sweep is None:
                return
            try:
                sweep()
            except Exception:  # a failed sweep is logged and retried next interval
                import logging

                logging.getLogger(__name__).exception("TTL sweep failed; retrying later")
            finally:
                del sweep
            self.sweeps += 1

    def stop(self, timeout: float | None = None) -> bool:
        """Ask the thread to stop and wait up to ``timeout`` seconds; True if it ended."""
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout)
        return not self._thread.is_alive()
