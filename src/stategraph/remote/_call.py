"""One call of a client, shared by a ``RemoteGraph`` method and its async twin.

A :class:`Call` says which client method to call with which arguments and how to check
and decode the answer; :meth:`Call.run` and :meth:`Call.arun` are the only places that
differ between sync and async. It works with the built-in clients and LangGraph's SDK
clients alike (same method names), and names the endpoint in messages either way.
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from stategraph.remote._client import endpoint_of
from stategraph.remote._errors import RemoteError

__all__ = ["Call", "closing_events", "aclosing_events"]


def _as_is(answer: Any, where: str) -> Any:
    return answer


def _missing(exc: BaseException) -> bool:
    """Whether a client error is a 404 (ours, or the SDK's httpx status errors)."""
    if isinstance(exc, RemoteError):
        return exc.status == 404
    return getattr(getattr(exc, "response", None), "status_code", None) == 404


@dataclasses.dataclass
class Call:
    """``client.<resource>.<method>(**kwargs)``, its answer checked by ``decode``.

    With ``missing_ok``, a 404 answer is None (a thread that does not exist yet).
    """

    resource: str
    method: str
    kwargs: dict[str, Any]
    decode: Callable[[Any, str], Any] = _as_is
    missing_ok: bool = False

    @property
    def where(self) -> str:
        """The endpoint, for messages (``"GET /threads/t1/state"``)."""
        return endpoint_of(self.resource, self.method, self.kwargs)

    def bound(self, client: Any) -> Any:
        """The client's method."""
        return getattr(getattr(client, self.resource), self.method)

    def run(self, client: Any) -> Any:
        """Call a blocking client and decode its answer."""
        try:
            answer = self.bound(client)(**self.kwargs)
        except Exception:
            return self._absent()
        return self.decode(answer, self.where)

    async def arun(self, client: Any) -> Any:
        """Call an async client and decode its answer."""
        try:
            answer = await self.bound(client)(**self.kwargs)
        except Exception:
            return self._absent()
        return self.decode(answer, self.where)

    def _absent(self) -> None:
        """In an ``except`` block: None for a 404 when ``missing_ok``, else re-raise."""
        exc = sys.exc_info()[1]
        if self.missing_ok and exc is not None and _missing(exc):
            return None
        raise


@contextlib.contextmanager
def closing_events(events: Any) -> Iterator[Any]:
    """Close a client's event generator when the stream is left early (or fails)."""
    try:
        yield events
    finally:
        if inspect.isgenerator(events):
            events.close()


@contextlib.asynccontextmanager
async def aclosing_events(events: Any) -> AsyncIterator[Any]:
    """Async twin of :func:`closing_events`."""
    try:
        yield events
    finally:
        if inspect.isasyncgen(events):
            await events.aclose()
