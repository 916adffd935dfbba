"""HTTP requests and answers of the remote client, without I/O.

What the sync and async transports share: the server's address (:class:`Origin`,
checked once), the headers (checked once; a value with a line break is refused without
quoting it), one request (:class:`Request`: method, path, query, JSON body, what kind
of answer it expects) turned into bytes, and the verdict on an answer's head: a status
other than 2xx is an error (a redirect is never followed into a success), and the
content type must be the one the request expects (JSON, or an event stream).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any, Literal
from urllib.parse import quote, urlencode, urlsplit

from stategraph.remote._errors import RemoteError, Secrets
from stategraph.remote._json import decode_json, encode_json

__all__ = ["Origin", "Request", "Head", "client_headers", "check_headers", "error_of", "q"]

Expect = Literal["json", "events"]

_TOKEN = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
_BAD_VALUE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def q(segment: Any) -> str:
    """One path segment, escaped."""
    return quote(str(segment), safe="")


@dataclasses.dataclass(frozen=True)
class Origin:
    """The server's base address: ``http(s)://host[:port][/prefix]``."""

    scheme: str
    host: str
    port: int | None
    prefix: str

    @classmethod
    def parse(cls, url: object) -> Origin:
        """Check ``url`` (never quoting credentials it may hold) and split it."""
        if not isinstance(url, str):
            raise TypeError(f"RemoteGraph url must be a string, got {type(url).__name__}.")
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError:
            raise ValueError(
                "RemoteGraph url is not a valid http(s)://host[:port] address."
            ) from None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            shown = f"{parts.scheme}://{parts.hostname or ''}" if parts.scheme else "it"
            raise ValueError(
                f"RemoteGraph url must be http(s)://host[:port][/path], got {shown}..."
            )
        if parts.username is not None or parts.password is not None:
            raise ValueError(
                "RemoteGraph url must not carry credentials (user:password@): pass "
                "api_key= or headers= instead."
            )
        if parts.query or parts.fragment:
            raise ValueError(
                "RemoteGraph url must not have a query or fragment: give the server's base "
                "address, http(s)://host[:port][/path]."
            )
        if _BAD_VALUE.search(url) or " " in url:
            raise ValueError("RemoteGraph url contains spaces or control characters.")
        return cls(parts.scheme, parts.hostname, port, parts.path.rstrip("/"))

    def __str__(self) -> str:
        port = f":{self.port}" if self.port else ""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}{port}{self.prefix}"


def check_headers(headers: Mapping[str, Any] | None, what: str) -> dict[str, str]:
    """``headers`` as a dict of str, refusing names and values HTTP cannot carry.

    The error names the header but never quotes its value: values are often secrets.
    """
    out: dict[str, str] = {}
    for name, value in (headers or {}).items():
        if not isinstance(name, str) or not _TOKEN.match(name):
            raise ValueError(f"{what}: {excerpt_name(name)} is not a valid header name.")
        if not isinstance(value, str):
            raise TypeError(
                f"{what}: header '{name}' must be a string, got {type(value).__name__}."
            )
        if _BAD_VALUE.search(value):
            raise ValueError(
                f"{what}: the value of header '{name}' contains a line break or a control "
                "character (the value is not shown: it may be a secret)."
            )
        out[name] = value
    return out


def excerpt_name(name: object) -> str:
    text = repr(name)
    return text if len(text) <= 40 else text[:40] + "..."


def client_headers(
    api_key: object, headers: Mapping[str, Any] | None
) -> tuple[dict[str, str], Secrets]:
    """The headers every request carries, and the secrets to mask in messages."""
    base = {"Accept": "application/json", **check_headers(headers, "RemoteGraph headers")}
    if api_key is not None:
        if not isinstance(api_key, str):
            raise TypeError(f"RemoteGraph api_key must be a string, got {type(api_key).__name__}.")
        if _BAD_VALUE.search(api_key):
            raise ValueError(
                "RemoteGraph api_key contains a line break or a control character (the key "
                "is not shown)."
            )
        if api_key:
            base["x-api-key"] = api_key
    secrets = [v for k, v in base.items() if k != "Accept"]
    return base, Secrets(secrets)


@dataclasses.dataclass(frozen=True)
class Request:
    """One request: ``path`` below the origin's prefix, ``expect`` the kind of answer."""

    method: str
    path: str
    body: Any = None
    params: Mapping[str, Any] | None = None
    headers: Mapping[str, str] | None = None
    expect: Expect = "json"

    @property
    def endpoint(self) -> str:
        """``METHOD /path`` of this request, for messages."""
        return f"{self.method} {self.path}"

    def target(self, origin: Origin) -> str:
        """The request target: prefix, path and query."""
        target = origin.prefix + self.path
        if self.params:
            target += "?" + urlencode({k: v for k, v in self.params.items() if v is not None})
        return target

    def encode(self, base_headers: Mapping[str, str]) -> tuple[dict[str, str], bytes | None]:
        """The headers and body bytes to send."""
        headers = {**base_headers, **check_headers(self.headers, self.endpoint)}
        if self.expect == "events":
            headers["Accept"] = "text/event-stream"
        payload = None
        if self.body is not None:
            payload = encode_json(self.body, self.endpoint)
            headers["Content-Type"] = "application/json"
        return headers, payload


@dataclasses.dataclass(frozen=True)
class Head:
    """What matters of an answer's head."""

    status: int
    reason: str
    content_type: str
    location: str | None = None

    def ok_for(self, expect: Expect) -> bool:
        """Whether this is a success answer of the kind the request expects."""
        if not 200 <= self.status < 300:
            return False
        mime = self.content_type.split(";", 1)[0].strip().lower()
        if expect == "events":
            return mime == "text/event-stream"
        return mime == "application/json" or mime.endswith("+json")


def error_of(
    req: Request, head: Head, body: bytes, secrets: Secrets, max_chars: int
) -> RemoteError:
    """The error for an answer that is not what ``req`` expects (``body``: its first
    bytes, already bounded by the caller)."""
    where = req.endpoint
    if 300 <= head.status < 400:
        to = secrets.clean(head.location or "(no Location)", 200)
        return RemoteError(
            f"{where} was answered with a redirect ({head.status}) to {to}: RemoteGraph does "
            "not follow redirects; point url= at the server's final address.",
            head.status,
            endpoint=where,
        )
    text = body.decode("utf-8", "replace")
    if 200 <= head.status < 300:
        shown = secrets.clean(head.content_type or "no content type", 100)
        wanted = "an event stream (text/event-stream)" if req.expect == "events" else "JSON"
        return RemoteError(
            f"{where} answered {head.status} with {shown} where {wanted} was expected: is url= "
            "the address of a LangGraph-compatible server?",
            head.status,
            endpoint=where,
        )
    detail: Any = text
    if head.content_type.split(";", 1)[0].strip().lower() == "application/json":
        try:
            parsed = decode_json(body, where)
        except RemoteError:
            parsed = None
        if isinstance(parsed, Mapping) and "detail" in parsed:
            detail = parsed["detail"]
    if not isinstance(detail, str):
        detail = repr(detail)
    detail = secrets.clean(detail.strip() or head.reason, max_chars)
    return RemoteError(f"{where} failed ({head.status}): {detail}", head.status, endpoint=where)
