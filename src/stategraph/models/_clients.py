"""Building a vendor SDK's clients from the settings people pass LangChain's classes.

``ChatOpenAI(model=..., api_key=..., base_url=...)`` and ``ChatAnthropic(...)`` take the
constructor arguments known from langchain-openai / langchain-anthropic (and their
aliases, e.g. ``openai_api_key``, ``request_timeout``) and build the official SDK's
sync and async clients with them. A ready client can be passed instead; mixing the
two is refused, since the client's own settings would silently win.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from stategraph._optional import requires_extra

__all__ = ["SDK_ALIASES", "ClientSettings", "build_clients", "one_of"]

SDK_ALIASES: dict[str, tuple[str, ...]] = {
    "max_retries": ("max_retries",),
    "default_headers": ("default_headers",),
    "http_client": ("http_client",),
    "http_async_client": ("http_async_client",),
}
"""The settings both SDKs (``openai``, ``anthropic``) take under the same names."""


class ClientSettings:
    """Connection settings for one vendor: canonical SDK argument -> accepted names."""

    __slots__ = ("adapter", "aliases", "async_class", "extra", "module", "sync_class")

    def __init__(
        self,
        *,
        adapter: str,
        module: str,
        sync_class: str,
        async_class: str,
        extra: str,
        aliases: Mapping[str, tuple[str, ...]],
    ) -> None:
        self.adapter = adapter
        self.module = module
        self.sync_class = sync_class
        self.async_class = async_class
        self.extra = extra
        self.aliases = dict(aliases)

    def pop_settings(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        """Remove every connection setting from ``kwargs``; return them under the SDK's
        names (``None`` values dropped, so the SDK's defaults and environment apply)."""
        found: dict[str, Any] = {}
        for canonical, names in self.aliases.items():
            given = [n for n in names if n in kwargs]
            if len(given) > 1:
                raise TypeError(
                    f"{self.adapter} got both {given[0]}= and {given[1]}= (the same setting "
                    f"'{canonical}'); pass only one."
                )
            if given:
                value = kwargs.pop(given[0])
                if value is not None:
                    found[canonical] = _secret(value)
        return found


def _secret(value: Any) -> Any:
    """A pydantic ``SecretStr`` (as langchain configs hold keys) as its plain value."""
    reveal = getattr(value, "get_secret_value", None)
    return reveal() if callable(reveal) else value


def build_clients(settings: ClientSettings, options: dict[str, Any]) -> tuple[Any, Any]:
    """``(sync_client, async_client)`` of the SDK, built with ``options``."""
    with requires_extra(
        f"{settings.adapter} builds its client with the '{settings.module}' package, "
        f"which is not installed: pip install 'stategraph[{settings.extra}]' (or pass a "
        "ready client as the first argument)."
    ):
        sdk = importlib.import_module(settings.module)
    sync_options = dict(options)
    async_options = dict(options)
    http_async = sync_options.pop("http_async_client", None)
    async_options.pop("http_client", None)
    if http_async is not None:
        async_options["http_client"] = http_async
    else:
        async_options.pop("http_async_client", None)
    sync_client = getattr(sdk, settings.sync_class)(**sync_options)
    async_client = getattr(sdk, settings.async_class)(**async_options)
    return sync_client, async_client


def one_of(value: Any, kwargs: dict[str, Any], alias: str, name: str) -> Any:
    """``value``, or the same argument given under ``alias`` (popped from ``kwargs``)."""
    if alias not in kwargs:
        return value
    other = kwargs.pop(alias)
    if value is not None:
        raise TypeError(f"got both {name}= and {alias}= (the same setting); pass only one.")
    return other
