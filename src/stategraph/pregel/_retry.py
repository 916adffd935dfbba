"""Retry decisions, shared by both shells (the shells only sleep and call again)."""

from __future__ import annotations

import logging
import random
from collections.abc import Sequence

from stategraph.errors import GraphBubbleUp
from stategraph.types import RetryPolicy

__all__ = ["retry_delay", "matches"]

logger = logging.getLogger("stategraph")


def matches(policy: RetryPolicy, exc: BaseException) -> bool:
    """Whether ``policy.retry_on`` accepts ``exc``."""
    retry_on = policy.retry_on
    if isinstance(retry_on, type) and issubclass(retry_on, BaseException):
        return isinstance(exc, retry_on)
    if isinstance(retry_on, Sequence):
        return isinstance(exc, tuple(retry_on))
    if callable(retry_on):
        return bool(retry_on(exc))  # type: ignore[arg-type,call-arg]
    raise TypeError(
        f"RetryPolicy.retry_on must be an exception class, a sequence of them, or a "
        f"callable; got {retry_on!r}."
    )


def retry_delay(
    policies: Sequence[RetryPolicy], exc: BaseException, failures: int, node: str
) -> float | None:
    """Seconds to wait before the next attempt, or ``None`` to give up.

    ``failures`` counts the failed attempts so far, including this one. The first policy
    whose ``retry_on`` matches decides; control-flow exceptions are never retried.
    """
    if not policies or isinstance(exc, GraphBubbleUp) or not isinstance(exc, Exception):
        return None
    policy = next((p for p in policies if matches(p, exc)), None)
    if policy is None or failures >= policy.max_attempts:
        return None
    interval = min(
        policy.max_interval, policy.initial_interval * policy.backoff_factor ** (failures - 1)
    )
    delay = interval + random.uniform(0, 1) if policy.jitter else interval
    logger.info(
        "Retrying node %s after %.2fs (attempt %d) after %s: %s",
        node,
        delay,
        failures,
        type(exc).__name__,
        exc,
    )
    return delay
