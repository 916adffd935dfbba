"""The server's settings: LangGraph's ``langgraph.json`` keys, plus the command line.

``langgraph.json`` keys read: ``graphs`` (id -> ``path/file.py:attr`` or
``module:attr``, or ``{"path": ..., "description": ...}``), ``env`` (a ``.env`` file
or a mapping), ``dependencies`` (folders put on ``sys.path``), ``store`` (``ttl``:
``default_ttl`` minutes, ``refresh_on_read``, ``sweep_interval_minutes``; ``index`` is
refused with a clear error: no embeddings in the server yet), ``auth`` (``path`` of an
:class:`~stategraph.server.auth.Auth` object, ``disable_studio_auth``), ``http``
(``cors``, ``disable_assistants`` / ``_threads`` / ``_runs`` / ``_store`` / ``_meta``
/ ``_ui``), ``webhooks`` (``url`` policy, ``headers``), ``checkpointer`` (``ttl``:
``strategy``, ``default_ttl`` minutes, ``sweep_interval_minutes``). Keys LangGraph
uses for building images (``python_version``, ``dockerfile_lines``, ``image_distro``,
``pip_config_file``, ...) are accepted and ignored; any other key is an error that
names it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "ConfigError",
    "GraphSpec",
    "TTLSettings",
    "WebhookPolicy",
    "ServerConfig",
    "load_config",
    "config_from_specs",
]

_IGNORED_KEYS = frozenset(
    {
        "$schema",
        "python_version",
        "node_version",
        "pip_config_file",
        "pip_installer",
        "dockerfile_lines",
        "image_distro",
        "base_image",
        "keep_pkg_tools",
        "ui",
        "ui_config",
        "api_version",
        "middleware_order",
        "encryption",
    }
)
_KNOWN_KEYS = frozenset(
    {"graphs", "env", "dependencies", "store", "auth", "http", "webhooks", "checkpointer"}
)


class ConfigError(ValueError):
    """A setting the server cannot use; the message names it and says what to write."""


@dataclass(frozen=True)
class GraphSpec:
    """One entry of ``graphs``: where the graph is and how it is described."""

    graph_id: str
    path: str
    """``path/to/file.py:attr`` (relative to the config file) or ``module:attr``."""
    description: str | None = None


@dataclass(frozen=True)
class TTLSettings:
    """Time to live (minutes) of threads or store items, and the sweep period."""

    default_ttl: float | None = None
    sweep_interval_minutes: float = 5.0
    refresh_on_read: bool = True
    strategy: str = "delete"


@dataclass(frozen=True)
class WebhookPolicy:
    """Which webhook URLs runs may ask for (LangGraph's ``webhooks.url`` keys).

    By default only ``https`` URLs to public addresses are called: plain ``http`` and
    loopback / private / link-local targets are refused (SSRF). ``require_https:
    false`` allows ``http``; a host listed in ``allowed_domains`` (exactly, or through
    ``*.suffix``) is trusted even when it resolves to a private address.
    """

    require_https: bool = True
    allowed_domains: tuple[str, ...] = ()
    allowed_ports: tuple[int, ...] = ()
    max_url_length: int = 4096
    disable_loopback: bool = False
    headers: Mapping[str, str] = field(default_factory=dict)
    retries: int = 3
    timeout: float = 10.0


@dataclass
class ServerConfig:
    """Everything ``stategraph serve`` needs to know before it starts."""

    graphs: dict[str, GraphSpec]
    base_dir: Path
    env: dict[str, str] = field(default_factory=dict)
    dependencies: list[str] = field(default_factory=list)
    store_ttl: TTLSettings | None = None
    thread_ttl: TTLSettings | None = None
    auth_path: str | None = None
    disable_studio_auth: bool = False
    cors: Mapping[str, Any] | None = None
    disabled: frozenset[str] = frozenset()
    """Route groups switched off: ``assistants``, ``threads``, ``runs``, ``store``,
    ``meta``, ``ui``."""
    webhooks: WebhookPolicy = field(default_factory=WebhookPolicy)

    def apply_environment(self) -> None:
        """Export ``env`` and put ``dependencies`` (and the config's folder) on ``sys.path``."""
        import sys

        for key, value in self.env.items():
            os.environ.setdefault(key, value)
        for dep in [*self.dependencies, "."]:
            folder = (self.base_dir / dep).resolve()
            if folder.is_dir() and str(folder) not in sys.path:
                sys.path.insert(0, str(folder))


def _minutes(section: str, key: str, value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ConfigError(
            f"{section}.{key} must be a positive number of minutes, got {value!r} "
            f'(e.g. "{key}": 60).'
        )
    return float(value)


def _ttl(section: str, raw: Any) -> TTLSettings | None:
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise ConfigError(f'{section} must be an object such as {{"default_ttl": 60}}.')
    unknown = set(raw) - {"default_ttl", "sweep_interval_minutes", "refresh_on_read", "strategy"}
    if unknown:
        raise ConfigError(
            f"{section} has unknown key(s) {sorted(unknown)}: use default_ttl, "
            "sweep_interval_minutes, refresh_on_read or strategy."
        )
    strategy = raw.get("strategy", "delete")
    if strategy != "delete":
        raise ConfigError(
            f"{section}.strategy must be 'delete' (the only strategy), got {strategy!r}."
        )
    return TTLSettings(
        default_ttl=_minutes(section, "default_ttl", raw.get("default_ttl")),
        sweep_interval_minutes=_minutes(
            section, "sweep_interval_minutes", raw.get("sweep_interval_minutes", 5)
        )
        or 5.0,
        refresh_on_read=bool(raw.get("refresh_on_read", True)),
        strategy=strategy,
    )


def _graphs(raw: Any) -> dict[str, GraphSpec]:
    if not isinstance(raw, Mapping) or not raw:
        raise ConfigError(
            'graphs must name at least one graph, e.g. "graphs": {"agent": "./agent.py:graph"}.'
        )
    out: dict[str, GraphSpec] = {}
    for graph_id, value in raw.items():
        if isinstance(value, str):
            path, description = value, None
        elif isinstance(value, Mapping) and isinstance(value.get("path"), str):
            path, description = value["path"], value.get("description")
        else:
            raise ConfigError(
                f"graphs.{graph_id} must be 'path/file.py:attr' or 'module:attr' (or an object "
                f'with "path"), got {value!r}.'
            )
        if path.split(":", 1)[0].endswith((".ts", ".js", ".mts", ".mjs", ".tsx")):
            raise ConfigError(
                f"graphs.{graph_id} = {path!r} is a JavaScript graph: stategraph serve runs "
                "Python graphs only."
            )
        if ":" not in path:
            raise ConfigError(
                f"graphs.{graph_id} = {path!r} does not name an attribute: write "
                f"'{path}:graph' (file or module, a colon, then the variable)."
            )
        out[str(graph_id)] = GraphSpec(str(graph_id), path, description)
    return out


def _env(raw: Any, base: Path) -> dict[str, str]:
    if raw is None:
        return {}
    if isinstance(raw, Mapping):
        return {str(k): str(v) for k, v in raw.items()}
    if isinstance(raw, str):
        path = base / raw
        if not path.is_file():
            raise ConfigError(f"env names {raw!r}, but {path} does not exist.")
        out: dict[str, str] = {}
        for line in path.read_text().splitlines():
            line = line.strip()
            if not line or line.startswith("#") or "=" not in line:
                continue
            key, _, value = line.removeprefix("export ").partition("=")
            out[key.strip()] = value.strip().strip("'\"")
        return out
    raise ConfigError(f"env must be a file name or an object, got {raw!r}.")


def _webhooks(raw: Any) -> WebhookPolicy:
    if raw is None:
        return WebhookPolicy()
    if not isinstance(raw, Mapping):
        raise ConfigError("webhooks must be an object with a url policy and headers.")
    url = raw.get("url") or {}
    if not isinstance(url, Mapping):
        raise ConfigError("webhooks.url must be an object (require_https, allowed_domains, ...).")
    unknown = set(url) - {
        "require_https",
        "allowed_domains",
        "allowed_ports",
        "max_url_length",
        "disable_loopback",
    }
    if unknown:
        raise ConfigError(f"webhooks.url has unknown key(s) {sorted(unknown)}.")
    headers = raw.get("headers") or {}
    if not isinstance(headers, Mapping):
        raise ConfigError("webhooks.headers must map header names to values.")
    return WebhookPolicy(
        require_https=bool(url.get("require_https", True)),
        allowed_domains=tuple(str(d).lower() for d in url.get("allowed_domains") or ()),
        allowed_ports=tuple(int(p) for p in url.get("allowed_ports") or ()),
        max_url_length=int(url.get("max_url_length", 4096)),
        disable_loopback=bool(url.get("disable_loopback", False)),
        headers={str(k): str(v) for k, v in headers.items()},
    )


def _http(raw: Any) -> tuple[Mapping[str, Any] | None, frozenset[str]]:
    if raw is None:
        return None, frozenset()
    if not isinstance(raw, Mapping):
        raise ConfigError("http must be an object (cors, disable_assistants, ...).")
    groups = ("assistants", "threads", "runs", "store", "meta", "ui", "webhooks")
    disabled = frozenset(g for g in groups if raw.get(f"disable_{g}"))
    if raw.get("app"):
        raise ConfigError(
            "http.app (a custom ASGI app mounted beside the API) is not supported by "
            "stategraph serve yet: remove it, or serve the app separately."
        )
    cors = raw.get("cors")
    if cors is not None and not isinstance(cors, Mapping):
        raise ConfigError("http.cors must be an object (allow_origins, allow_methods, ...).")
    return cors, disabled


def load_config(path: str | Path) -> ServerConfig:
    """Read a ``langgraph.json``; every problem is a :class:`ConfigError` naming its key."""
    file = Path(path)
    if not file.is_file():
        raise ConfigError(
            f"No {file.name} at {file.resolve().parent}: run `stategraph serve` in your "
            "project folder, pass --config FILE, or name a graph: "
            "`stategraph serve app.py:graph`."
        )
    try:
        raw = json.loads(file.read_text())
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{file} is not valid JSON: {exc}") from exc
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{file} must hold a JSON object.")
    unknown = set(raw) - _KNOWN_KEYS - _IGNORED_KEYS
    if unknown:
        raise ConfigError(
            f"{file} has key(s) stategraph serve does not know: {sorted(unknown)}. Known: "
            f"{sorted(_KNOWN_KEYS)}."
        )
    base = file.resolve().parent
    store = raw.get("store") or {}
    if not isinstance(store, Mapping):
        raise ConfigError("store must be an object (ttl, index).")
    if store.get("index"):
        raise ConfigError(
            "store.index (semantic search with embeddings) is not supported by stategraph "
            "serve yet: remove it to serve the store without vector search."
        )
    checkpointer = raw.get("checkpointer") or {}
    if not isinstance(checkpointer, Mapping):
        raise ConfigError("checkpointer must be an object (ttl).")
    auth = raw.get("auth") or {}
    if not isinstance(auth, Mapping):
        raise ConfigError('auth must be an object such as {"path": "./auth.py:auth"}.')
    deps = raw.get("dependencies") or []
    if not isinstance(deps, list):
        raise ConfigError('dependencies must be a list of folders, e.g. ["."].')
    cors, disabled = _http(raw.get("http"))
    return ServerConfig(
        graphs=_graphs(raw.get("graphs")),
        base_dir=base,
        env=_env(raw.get("env"), base),
        dependencies=[str(d) for d in deps],
        store_ttl=_ttl("store.ttl", store.get("ttl")),
        thread_ttl=_ttl("checkpointer.ttl", checkpointer.get("ttl")),
        auth_path=auth.get("path"),
        disable_studio_auth=bool(auth.get("disable_studio_auth", False)),
        cors=cors,
        disabled=disabled,
        webhooks=_webhooks(raw.get("webhooks")),
    )


def config_from_specs(specs: list[str], base_dir: Path | None = None) -> ServerConfig:
    """The config of ``stategraph serve MODULE:GRAPH [...]`` (graph ids: the attribute
    names, or ``id=MODULE:GRAPH``)."""
    graphs: dict[str, GraphSpec] = {}
    for spec in specs:
        graph_id, eq, path = spec.partition("=")
        if not eq:
            path = spec
            graph_id = spec.rpartition(":")[2].split(".")[-1]
        if ":" not in path:
            raise ConfigError(
                f"{spec!r} does not name a graph: use module:attribute or file.py:attribute "
                "(optionally id=module:attribute)."
            )
        if graph_id in graphs:
            raise ConfigError(
                f"Two graphs would be served as '{graph_id}': name them, e.g. "
                f"first={graphs[graph_id].path} second={path}."
            )
        graphs[graph_id] = GraphSpec(graph_id, path)
    if not graphs:
        raise ConfigError("Name at least one graph (module:attribute) or give --config.")
    return ServerConfig(graphs=graphs, base_dir=base_dir or Path.cwd())
