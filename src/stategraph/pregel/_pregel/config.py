"""Run settings read from a config: ``config`` keys, merging, the recursion limit,
durability and the checks made on them before a run starts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from stategraph.constants import CONF
from stategraph.runtime import ServerInfo
from stategraph.warnings import LangGraphDeprecatedSinceV10, warn_deprecated

DEFAULT_RECURSION_LIMIT = 10007


_VALID_MODES = frozenset(
    {"values", "updates", "checkpoints", "tasks", "debug", "messages", "custom", "tools"}
)


_DURABILITY = ("sync", "async", "exit")


_CONFIG_KEYS = frozenset(
    {
        "tags",
        "metadata",
        "callbacks",
        "run_name",
        "max_concurrency",
        "recursion_limit",
        CONF,
        "run_id",
        "durability",
        # stategraph's own run settings (see docs/concurrency.md and docs/scale-out.md)
        "multitask_strategy",
        "lease_timeout",
        "enqueue_timeout",
        "executor",
    }
)


def lift_config_keys(config: Mapping[str, Any] | None) -> dict[str, Any]:
    """``config`` with keys that are not config fields moved into ``configurable``.

    As in LangGraph, ``{"thread_id": "1"}`` means ``{"configurable": {"thread_id":
    "1"}}``; ``None`` values are dropped.
    """
    if config is not None and not isinstance(config, Mapping):
        raise TypeError(
            f"config must be a mapping such as {{'configurable': {{'thread_id': '1'}}}}, "
            f"got {type(config).__name__}: {config!r:.80}."
        )
    out = dict(config or {})
    extra = [k for k in out if k not in _CONFIG_KEYS]
    if extra:
        conf = dict(out.get(CONF) or {})
        for key in extra:
            value = out.pop(key)
            if value is not None:
                conf[key] = value
        out[CONF] = conf
    given = out.get(CONF)
    if given is not None:
        _check_thread_id(given)
    return out


def _check_thread_id(conf: Any) -> None:
    """Refuse a ``thread_id`` that cannot name a thread (a dict, a list...).

    Savers store the id as text: ``str()`` of a dict would name a thread by its repr,
    which changes with key order. Strings, integers and UUIDs are accepted.
    """
    if not isinstance(conf, Mapping):
        raise TypeError(
            f"config['configurable'] must be a mapping, got {type(conf).__name__}: {conf!r:.80}."
        )
    tid = conf.get("thread_id")
    if tid is None or isinstance(tid, str):
        return
    if isinstance(tid, int) and not isinstance(tid, bool):
        return
    from uuid import UUID  # only here: uuid (and platform) cost ~3 ms to import

    if isinstance(tid, UUID):
        return
    raise TypeError(
        f"configurable['thread_id'] must be a string (or an int or UUID), got "
        f"{type(tid).__name__}: {tid!r:.80}. Pass the thread's id, e.g. "
        "{'configurable': {'thread_id': 'user-42'}}."
    )


def _merge_configs(
    base: Mapping[str, Any] | None, extra: Mapping[str, Any] | None
) -> dict[str, Any]:
    out: dict[str, Any] = dict(base or {})
    if not extra:
        return out
    for key, value in extra.items():
        if key in (CONF, "metadata") and isinstance(value, Mapping):
            out[key] = {**(out.get(key) or {}), **value}
        elif key == "tags" and value:
            out[key] = [*(out.get(key) or ()), *value]
        else:
            out[key] = value
    return out


_ROOT_CHECKPOINTER_TRUE = (
    "checkpointer=True cannot be used for root graphs: it makes a subgraph keep its own "
    "history in the checkpointer of the graph that runs it. Compile the graph you invoke "
    "with a saver, e.g. builder.compile(checkpointer=InMemorySaver()), and use "
    "checkpointer=True only for graphs added as nodes (or called inside nodes)."
)


_EXTRA_RUN_KWARGS = {
    "invoke": frozenset({"print_mode", "debug", "subgraphs", "checkpoint_during"}),
    "stream": frozenset({"checkpoint_during"}),
}


def _run_kwargs(method: str, kwargs: Mapping[str, Any], durability: str | None) -> str | None:
    """Reject keyword arguments ``method`` does not take; returns the durability.

    LangGraph's deprecated ``checkpoint_during`` is accepted with a warning (``True``
    means durability ``"async"``, ``False`` ``"exit"``).
    """
    unknown = [k for k in kwargs if k not in _EXTRA_RUN_KWARGS[method]]
    if unknown:
        names = ", ".join(repr(k) for k in unknown)
        raise TypeError(
            f"{method}() got unexpected keyword argument(s) {names}. Check the spelling; "
            f"see help(Pregel.{method}) for the accepted arguments."
        )
    during = kwargs.get("checkpoint_during")
    if during is not None:
        warn_deprecated(
            LangGraphDeprecatedSinceV10,
            "`checkpoint_during` is deprecated and will be removed. Please use `durability` "
            "instead.",
            stacklevel=4,
        )
        if durability is None:
            durability = "async" if during else "exit"
    return durability


def _configs_for(inputs: Sequence[Any], config: Any) -> list[Any]:
    if isinstance(config, (list, tuple)):
        if len(config) != len(inputs):
            raise ValueError(
                f"batch() got {len(inputs)} inputs but {len(config)} configs; pass one config "
                "or one per input."
            )
        return list(config)
    return [config] * len(inputs)


def _check_checkpointer(checkpointer: Any) -> None:
    """Reject a checkpointer that is not a saver (or None/True/False) when compiling."""
    if checkpointer is None or isinstance(checkpointer, bool):
        return
    from stategraph.checkpoint.base import BaseCheckpointSaver

    if not isinstance(checkpointer, BaseCheckpointSaver):
        raise TypeError(
            f"Invalid checkpointer provided: {checkpointer!r} is not a BaseCheckpointSaver. "
            "Pass a saver such as InMemorySaver() or SqliteSaver, True (a subgraph saves "
            "with its parent's saver), False or None."
        )


def _max_concurrency(cfg: Mapping[str, Any]) -> int:
    """Check ``config["max_concurrency"]`` before the run starts."""
    value = cfg["max_concurrency"]
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(
            f"max_concurrency must be a positive integer (the most tasks of one step run "
            f'at once), got {value!r}. Pass e.g. config={{"max_concurrency": 4}}, or leave '
            "it out for no limit."
        )
    return value


def _server_info(conf: Mapping[str, Any]) -> ServerInfo | None:
    """``ServerInfo`` from the keys a server puts in ``configurable`` (None without them)."""
    assistant_id = conf.get("assistant_id")
    graph_id = conf.get("graph_id")
    if assistant_id is None and graph_id is None:
        return None
    return ServerInfo(
        assistant_id=str(assistant_id) if assistant_id is not None else "",
        graph_id=str(graph_id) if graph_id is not None else "",
        user=conf.get("langgraph_auth_user"),
    )
