"""The errors of the remote client, and how server text gets into them safely.

Everything the server says that ends up in an exception message goes through
:meth:`Secrets.clean`: it is cut to a bounded excerpt (a hostile server cannot put
400 MB into a message) and every secret the client sends (the API key, the values of
the headers it was given) is masked, so an echoing server cannot make a log line carry
them. Messages written here never contain header values or URL credentials.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["RemoteError", "RemoteTimeoutError", "Secrets", "excerpt", "describe_value"]


class RemoteError(Exception):
    """A remote graph call failed: the server answered with an error, broke the
    protocol (a cut stream, a malformed answer), or could not be reached.

    ``status`` is the HTTP status when the server sent one; ``endpoint`` names the
    request (``"GET /threads/{thread_id}/state"``) and ``field`` the part of the answer
    that was wrong, when that is what failed.
    """

    def __init__(
        self,
        message: str,
        status: int | None = None,
        *,
        endpoint: str | None = None,
        field: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.endpoint = endpoint
        self.field = field


class RemoteTimeoutError(RemoteError, TimeoutError):
    """A remote graph call ran past one of its timeouts (``timeout`` names which one:
    ``"connect"``, ``"read"``, ``"idle"`` or ``"total"``)."""

    def __init__(self, message: str, *, timeout: str, endpoint: str | None = None) -> None:
        super().__init__(message, endpoint=endpoint)
        self.timeout = timeout


_MASK = "***"
_MIN_SECRET = 4
"""Shorter values are not masked: they would garble ordinary words of a message."""


class Secrets:
    """The secret strings of one client, masked wherever server text is quoted."""

    __slots__ = ("_values",)

    def __init__(self, values: Iterable[str] = ()) -> None:
        # longest first, so a secret that contains another one is masked whole
        self._values = sorted({v for v in values if len(v) >= _MIN_SECRET}, key=len, reverse=True)

    def plus(self, values: Iterable[str]) -> Secrets:
        """These secrets and ``values`` (a call's own header values)."""
        extra = [v for v in values if isinstance(v, str)]
        return Secrets([*self._values, *extra]) if extra else self

    def mask(self, text: str) -> str:
        """``text`` with every secret replaced by ``***``."""
        for value in self._values:
            if value in text:
                text = text.replace(value, _MASK)
        return text

    def clean(self, text: str, limit: int) -> str:
        """Server text fit for a message: masked, then cut to ``limit`` characters."""
        return excerpt(self.mask(text), limit)


def excerpt(text: str, limit: int) -> str:
    """``text`` cut to about ``limit`` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text) - limit} more characters)"


def describe_value(value: object, limit: int = 60) -> str:
    """A short description of an unexpected value: its JSON type and a bounded repr."""
    kind = {
        str: "a string",
        int: "a number",
        float: "a number",
        bool: "a boolean",
        list: "a list",
        tuple: "a list",
        dict: "an object",
        type(None): "null",
    }.get(type(value), type(value).__name__)
    return f"{kind} {excerpt(repr(value), limit)}"
