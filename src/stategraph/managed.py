"""Managed values: state keys whose value the runtime computes for each task.

Declare them in a state schema, e.g. ``remaining_steps: RemainingSteps``; nodes read them
like any key but never write them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Annotated, Any

__all__ = [
    "ManagedValue",
    "RemainingStepsManager",
    "IsLastStepManager",
    "RemainingSteps",
    "IsLastStep",
    "is_managed_value",
]


class ManagedValue(ABC):
    """Base of managed-value specs: ``get(step, stop)`` computes the value for a task."""

    @staticmethod
    @abstractmethod
    def get(step: int, stop: int) -> Any:
        """Return the managed value for a task running at ``step`` of a run ending at ``stop``."""


class RemainingStepsManager(ManagedValue):
    """How many more super-steps may run before the recursion limit is reached."""

    @staticmethod
    def get(step: int, stop: int) -> int:
        """Steps left, counting the current one."""
        return stop - step


class IsLastStepManager(ManagedValue):
    """True when the current super-step is the last one the recursion limit allows."""

    @staticmethod
    def get(step: int, stop: int) -> bool:
        """Whether this is the last allowed step."""
        return step == stop - 1


RemainingSteps = Annotated[int, RemainingStepsManager]
"""State key type: the number of steps left before ``GraphRecursionError``."""

IsLastStep = Annotated[bool, IsLastStepManager]
"""State key type: ``True`` during the last step the recursion limit allows."""


def is_managed_value(value: Any) -> bool:
    """True if ``value`` is a managed-value spec class."""
    return isinstance(value, type) and issubclass(value, ManagedValue) and value is not ManagedValue
