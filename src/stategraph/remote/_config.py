"""What a remote call sends besides its input: config, command, headers.

A local config holds objects the server cannot take (callbacks, savers, checkpoint
keys of the caller's own thread); :func:`sanitize_config` keeps only JSON values and the
keys a server uses. :func:`merge_configs` merges a call's config into the graph's;
:func:`command_body` writes a ``Command`` as the API's ``command`` object;
:func:`merge_tracing_headers` adds LangSmith's trace headers when tracing is on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stategraph.types import Command, Send

__all__ = [
    "sanitize_config",
    "merge_configs",
    "command_body",
    "merge_tracing_headers",
]

_DROPPED_CONFIGURABLE = ("checkpoint_map", "checkpoint_id", "checkpoint_ns")
_PRIMITIVES = (str, int, float, bool, type(None))


def _sanitize(value: Any) -> tuple[bool, Any]:
    """``(ok, json_value)``: primitives, lists and str-keyed dicts of them."""
    if isinstance(value, _PRIMITIVES):
        return True, value
    if isinstance(value, (list, tuple)):
        return True, [v for ok, v in map(_sanitize, value) if ok]
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            ok, clean = _sanitize(v)
            if ok and isinstance(k, str):
                out[k] = clean
        return True, out
    return False, None


def sanitize_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a config the server can take: JSON values only, no checkpoint keys."""
    out: dict[str, Any] = {}
    if "recursion_limit" in config:
        out["recursion_limit"] = config["recursion_limit"]
    if "tags" in config:
        out["tags"] = [t for t in config["tags"] or () if isinstance(t, str)]
    if "metadata" in config:
        out["metadata"] = _sanitize(config["metadata"] or {})[1]
    if "configurable" in config:
        configurable = {
            k: v
            for k, v in (config["configurable"] or {}).items()
            if isinstance(k, str) and k not in _DROPPED_CONFIGURABLE and not k.startswith("__")
        }
        out["configurable"] = _sanitize(configurable)[1]
    return out


def merge_configs(base: Mapping[str, Any] | None, extra: Mapping[str, Any] | None) -> dict:
    """``extra`` over ``base``: configurable and metadata merged, tags added."""
    out: dict[str, Any] = dict(base or {})
    for key, value in (extra or {}).items():
        if key in ("configurable", "metadata") and isinstance(value, Mapping):
            out[key] = {**(out.get(key) or {}), **value}
        elif key == "tags" and value:
            out[key] = [*(out.get(key) or []), *value]
        else:
            out[key] = value
    return out


def merge_tracing_headers(headers: Mapping[str, str] | None) -> dict[str, str]:
    """``headers`` plus LangSmith's trace headers of the current run, when there is one."""
    out = dict(headers or {})
    try:
        from langsmith.run_helpers import (  # type: ignore[import-not-found]
            get_current_run_tree,
        )
    except ImportError:
        return out
    run_tree = get_current_run_tree()
    if run_tree is not None:
        out.update(run_tree.to_headers())
    return out


def command_body(cmd: Command) -> dict[str, Any]:
    """A ``Command`` as the API's ``command`` object (``resume``, ``update``, ``goto``)."""
    body: dict[str, Any] = {}
    if cmd.resume is not None:
        body["resume"] = cmd.resume
    if cmd.update is not None:
        body["update"] = cmd.update
    if cmd.goto:
        gotos = cmd.goto if isinstance(cmd.goto, (list, tuple)) else [cmd.goto]
        body["goto"] = [
            {"node": g.node, "input": g.arg} if isinstance(g, Send) else g for g in gotos
        ]
    return body
