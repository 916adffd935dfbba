"""Deprecation warnings for spellings kept from older LangGraph versions.

Code written for LangGraph keeps working when it uses a deprecated spelling (``retry=``
for ``retry_policy=``, ``config_schema=`` for ``context_schema=``...): stategraph
accepts it and warns with the same warning class LangGraph uses, so filters written
for LangGraph apply unchanged.
"""

from __future__ import annotations

import warnings

__all__ = [
    "LangGraphDeprecationWarning",
    "LangGraphDeprecatedSinceV05",
    "LangGraphDeprecatedSinceV10",
    "LangGraphDeprecatedSinceV11",
    "renamed_argument",
    "warn_deprecated",
]


class LangGraphDeprecationWarning(DeprecationWarning):
    """A deprecated spelling was used; the message says what to use instead.

    ``since`` is the (major, minor) version that deprecated it and ``expected_removal``
    the version expected to remove it (two majors later by default).
    """

    message: str
    since: tuple[int, int]
    expected_removal: tuple[int, int]

    def __init__(
        self,
        message: str,
        *args: object,
        since: tuple[int, int],
        expected_removal: tuple[int, int] | None = None,
    ) -> None:
        super().__init__(message, *args)
        self.message = message
        self.since = since
        if expected_removal is None:
            expected_removal = (since[0] + 1, 0)
        self.expected_removal = expected_removal

    def __str__(self) -> str:
        return (
            f"{self.message.rstrip('.')}. Deprecated in LangGraph V{self.since[0]}.{self.since[1]} to be "
            f"removed in V{self.expected_removal[0]}.{self.expected_removal[1]}."
        )


class LangGraphDeprecatedSinceV05(LangGraphDeprecationWarning):
    """Deprecated since LangGraph 0.5, to be removed in 2.0."""

    def __init__(self, message: str, *args: object) -> None:
        super().__init__(message, *args, since=(0, 5), expected_removal=(2, 0))


class LangGraphDeprecatedSinceV10(LangGraphDeprecationWarning):
    """Deprecated since LangGraph 1.0, to be removed in 2.0."""

    def __init__(self, message: str, *args: object) -> None:
        super().__init__(message, *args, since=(1, 0), expected_removal=(2, 0))


class LangGraphDeprecatedSinceV11(LangGraphDeprecationWarning):
    """Deprecated since LangGraph 1.1, to be removed in 3.0."""

    def __init__(self, message: str, *args: object) -> None:
        super().__init__(message, *args, since=(1, 1), expected_removal=(3, 0))


def warn_deprecated(
    category: type[
        LangGraphDeprecatedSinceV05 | LangGraphDeprecatedSinceV10 | LangGraphDeprecatedSinceV11
    ],
    message: str,
    *,
    stacklevel: int = 3,
) -> None:
    """Emit ``category(message)`` pointing at the caller's caller."""
    warnings.warn(category(message), stacklevel=stacklevel)


def renamed_argument(old: str, new: str) -> str:
    """The message for an argument renamed from ``old`` to ``new``."""
    return f"`{old}` is deprecated and will be removed. Please use `{new}` instead."
