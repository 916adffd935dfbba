"""Webhooks: a POST to the run's ``webhook`` URL when the run ends, with retries, and
the URL policy that keeps runs from making the server call private addresses (SSRF).

Policy (LangGraph's ``webhooks.url`` keys; see :class:`~stategraph.server._config.WebhookPolicy`):
``https`` only unless ``require_https`` is false; the host's addresses must all be
public (not loopback, private, link-local, reserved or multicast) unless the host is
listed in ``allowed_domains`` (exactly or through ``*.suffix``), which then also
limits which hosts are allowed at all; ``allowed_ports`` limits ports; a relative URL
(``/path``) calls this server itself unless ``disable_loopback``. The URL is checked
when the run is created (so a client learns at once) and its addresses again right
before each call (DNS can change).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import socket
from collections.abc import Mapping
from typing import Any
from urllib.parse import urljoin, urlsplit

from stategraph.server._config import WebhookPolicy
from stategraph.server._context import ApiError
from stategraph.server._json import dumps

__all__ = ["Webhooks", "WebhookRefused"]

log = logging.getLogger("stategraph.server")


class WebhookRefused(ApiError):
    """A webhook URL the policy does not allow (422, naming the rule)."""

    def __init__(self, message: str) -> None:
        super().__init__(422, message)


def _listed(host: str, domains: tuple[str, ...]) -> bool:
    for entry in domains:
        if entry.startswith("*."):
            if host.endswith(entry[1:]) and host != entry[2:]:
                return True
        elif host == entry:
            return True
    return False


def _private(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return bool(
        ip.is_private
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_reserved
        or ip.is_multicast
        or ip.is_unspecified
    )


class Webhooks:
    """Checks webhook URLs and calls them (see the module docstring)."""

    def __init__(self, policy: WebhookPolicy, api_url: str = "") -> None:
        self.policy = policy
        self.api_url = api_url
        self._tasks: set[asyncio.Task[None]] = set()
        self.sent: list[tuple[str, int]] = []
        """``(url, status)`` of the calls made (the last 100), for diagnostics."""

    def check(self, url: Any) -> str:
        """The absolute URL to call; :class:`WebhookRefused` naming the broken rule."""
        policy = self.policy
        if not isinstance(url, str) or not url:
            raise WebhookRefused("webhook must be a URL string.")
        if len(url) > policy.max_url_length:
            raise WebhookRefused(
                f"webhook URL is {len(url)} characters long; the limit is {policy.max_url_length} "
                "(webhooks.url.max_url_length)."
            )
        if url.startswith("/"):
            if policy.disable_loopback:
                raise WebhookRefused(
                    "webhook is a relative URL (a call to this server), and "
                    "webhooks.url.disable_loopback forbids those."
                )
            return urljoin(self.api_url or "http://127.0.0.1", url)
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise WebhookRefused(f"webhook {url!r} is not an http(s) URL.")
        if parts.scheme != "https" and policy.require_https:
            raise WebhookRefused(
                f"webhook {url!r} is plain http: use https, or allow http with "
                "webhooks.url.require_https = false in langgraph.json."
            )
        if parts.username or parts.password:
            raise WebhookRefused("webhook URLs must not carry credentials (user:password@).")
        host = parts.hostname.lower()
        port = parts.port or (443 if parts.scheme == "https" else 80)
        if policy.allowed_ports and port not in policy.allowed_ports:
            raise WebhookRefused(
                f"webhook port {port} is not in webhooks.url.allowed_ports {list(policy.allowed_ports)}."
            )
        listed = _listed(host, policy.allowed_domains)
        if policy.allowed_domains and not listed:
            raise WebhookRefused(
                f"webhook host {host!r} is not in webhooks.url.allowed_domains "
                f"{list(policy.allowed_domains)}."
            )
        if not listed:
            with contextlib.suppress(ValueError):
                if _private(host.strip("[]")):
                    raise WebhookRefused(
                        f"webhook host {host} is a loopback/private address, refused against "
                        "SSRF: list it in webhooks.url.allowed_domains to allow it."
                    )
            if host == "localhost" or host.endswith(".localhost"):
                raise WebhookRefused(
                    f"webhook host {host} is loopback, refused against SSRF: list it in "
                    "webhooks.url.allowed_domains to allow it."
                )
        return url

    async def _resolves_public(self, url: str) -> None:
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        if url.startswith(self.api_url or "\0") or _listed(host, self.policy.allowed_domains):
            return
        loop = asyncio.get_running_loop()
        infos = await loop.getaddrinfo(host, parts.port or 443, type=socket.SOCK_STREAM)
        for info in infos:
            if _private(str(info[4][0])):
                raise WebhookRefused(
                    f"webhook host {host} resolves to the private address {info[4][0]}: refused "
                    "against SSRF (list it in webhooks.url.allowed_domains to allow it)."
                )

    def send(self, url: str, run: Mapping[str, Any], values: Any, error: Any) -> None:
        """Call ``url`` in the background (the run's end does not wait for it)."""
        payload = {**run, "values": values}
        if error is not None:
            payload["error"] = error
        task = asyncio.ensure_future(self._post(url, payload))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _post(self, url: str, payload: Mapping[str, Any]) -> None:
        import httpx

        try:
            target = self.check(url)
            await self._resolves_public(target)
        except (WebhookRefused, OSError) as exc:
            log.warning("webhook %s not called: %s", url, exc)
            return
        headers = {"content-type": "application/json", **self.policy.headers}
        body = dumps(payload).encode()
        delay = 0.5
        async with httpx.AsyncClient(timeout=self.policy.timeout, follow_redirects=False) as client:
            for attempt in range(1, self.policy.retries + 2):
                status = 0
                try:
                    response = await client.post(target, content=body, headers=headers)
                    status = response.status_code
                except httpx.HTTPError as exc:
                    log.info("webhook %s attempt %d failed: %s", url, attempt, exc)
                self.sent = [*self.sent[-99:], (target, status)]
                if status and status < 500 and status != 429:
                    return
                if attempt <= self.policy.retries:
                    await asyncio.sleep(delay)
                    delay *= 2
        log.warning("webhook %s failed after %d attempts", url, self.policy.retries + 1)

    async def aclose(self) -> None:
        """Wait (briefly) for calls in flight."""
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=5)
