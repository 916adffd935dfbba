"""Small helpers shared by the savers: reading run configs and matching metadata."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stategraph.constants import CONF
from stategraph.errors import InvalidIdentifierError

__all__ = [
    "thread_ns_id",
    "writes_target",
    "checkpoint_config",
    "metadata_matches",
    "list_args",
    "list_where",
    "check_ids",
    "refuse_in_event_loop",
]


def _nul(what: str, name: str, value: str) -> InvalidIdentifierError:
    return InvalidIdentifierError(
        f"{what}: {name} {value!r} contains a NUL character ('\\x00'), which no saver "
        f"or store accepts (PostgreSQL cannot store it). Remove it or encode the id "
        f"(for example as hex)."
    )


def refuse_in_event_loop(owner: str, name: str) -> None:
    """Raise when called inside a running event loop, which the sync method ``name``
    of the async saver ``owner`` would block (the error names the ``a``-method to await)."""
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return
    raise RuntimeError(
        f"{owner}.{name}() was called from inside a running event loop, "
        f"where it would block the loop: use `await saver.a{name}(...)` instead "
        "(for a graph: ainvoke/astream instead of invoke/stream)."
    )


def check_ids(what: str, **ids: Any) -> None:
    """Refuse ids containing NUL: ``check_ids("delete_thread", thread_id=tid)`` raises
    :class:`~stategraph.errors.InvalidIdentifierError` naming ``what`` and the argument.
    Values that are not strings are checked as ``str(value)``; ``None`` is skipped."""
    for name, value in ids.items():
        if value is None:
            continue
        if isinstance(value, (list, tuple, set, frozenset)):
            for one in value:
                if one is not None and "\x00" in str(one):
                    raise _nul(what, name, str(one))
        elif "\x00" in str(value):
            raise _nul(what, name, str(value))


def thread_ns_id(config: Mapping[str, Any], what: str) -> tuple[str, str, str | None]:
    """Return ``(thread_id, checkpoint_ns, checkpoint_id)`` from a run config.

    ``thread_id`` is required (converted with ``str``; a UUID works), ``checkpoint_ns``
    defaults to ``""``. ``what`` names the operation for the error message.
    """
    conf = config.get(CONF) or {}
    thread_id = conf.get("thread_id")
    if thread_id is None:
        raise ValueError(
            f"{what} needs config['configurable']['thread_id']: pass a config like "
            "{'configurable': {'thread_id': 'my-thread'}}."
        )
    ns = conf.get("checkpoint_ns")
    checkpoint_id = conf.get("checkpoint_id") or None
    tid = str(thread_id)
    ns = "" if ns is None else str(ns)
    if "\x00" in tid:
        raise _nul(what, "thread_id", tid)
    if "\x00" in ns:
        raise _nul(what, "checkpoint_ns", ns)
    if checkpoint_id is not None and "\x00" in str(checkpoint_id):
        raise _nul(what, "checkpoint_id", str(checkpoint_id))
    return tid, ns, checkpoint_id


def writes_target(config: Mapping[str, Any], what: str) -> tuple[str, str, str]:
    """Return ``(thread_id, checkpoint_ns, checkpoint_id)`` of the checkpoint that
    ``put_writes`` saves against: as :func:`thread_ns_id`, with ``checkpoint_id``
    required (``what`` names the operation for the error message)."""
    thread_id, ns, checkpoint_id = thread_ns_id(config, what)
    if checkpoint_id is None:
        raise ValueError(
            f"{what} needs config['configurable']['checkpoint_id']: the id of the "
            "checkpoint the writes belong to."
        )
    return thread_id, ns, checkpoint_id


def list_where(
    config: Mapping[str, Any] | None, before: Mapping[str, Any] | None, mark: str, alias: str = ""
) -> tuple[list[str], list[Any]]:
    """The SQL conditions, and their parameters, that ``list``'s ``config`` (thread,
    namespace, checkpoint) and ``before`` put on a checkpoints table: ``mark`` is the
    driver's placeholder (``"?"`` or ``"%s"``), ``alias`` prefixes the columns (``"p."``).
    ``config`` and ``before`` as :func:`list_args` returns them (ids as strings)."""
    conf = (config or {}).get(CONF) or {}
    where: list[str] = []
    params: list[Any] = []
    if conf.get("thread_id") is not None:
        where.append(f"{alias}thread_id = {mark}")
        params.append(conf["thread_id"])
    if "checkpoint_ns" in conf:
        where.append(f"{alias}checkpoint_ns = {mark}")
        params.append(conf["checkpoint_ns"])
    if conf.get("checkpoint_id"):
        where.append(f"{alias}checkpoint_id = {mark}")
        params.append(conf["checkpoint_id"])
    before_id = ((before or {}).get(CONF) or {}).get("checkpoint_id")
    if before_id:
        where.append(f"{alias}checkpoint_id < {mark}")
        params.append(before_id)
    return where, params


def checkpoint_config(thread_id: str, checkpoint_ns: str, checkpoint_id: str) -> dict[str, Any]:
    """Return the config that names one saved checkpoint."""
    return {
        CONF: {
            "thread_id": thread_id,
            "checkpoint_ns": checkpoint_ns,
            "checkpoint_id": checkpoint_id,
        }
    }


_ABSENT = object()


def metadata_matches(metadata: Mapping[str, Any], filter: Mapping[str, Any] | None) -> bool:
    """Whether ``metadata`` has every key of ``filter`` with an equal value."""
    if not filter:
        return True
    for key, expected in filter.items():
        actual = metadata.get(key, _ABSENT)
        if actual is _ABSENT or actual != expected:
            return False
    return True


def list_args(
    config: Mapping[str, Any] | None,
    filter: Any,
    before: Any,
    limit: Any,
) -> tuple[dict[str, Any] | None, dict[str, Any] | None, dict[str, Any] | None, int | None]:
    """Normalise and check the arguments of ``list()`` the same way for every saver.

    ``thread_id``, ``checkpoint_ns`` and ``checkpoint_id`` are converted with ``str``
    as ``put`` and ``get_tuple`` do (``checkpoint_ns=None`` means ``""``). ``limit`` must
    be ``None`` or an integer (anything with ``__index__``, not a bool, float or str);
    ``filter`` a mapping with ``str`` keys; ``before`` a config. Raises ``TypeError``
    naming the argument otherwise.
    """
    if config is not None and not isinstance(config, Mapping):
        raise TypeError(
            f"list() config must be a RunnableConfig dict or None, got {type(config).__name__}."
        )
    if before is not None and not isinstance(before, Mapping):
        raise TypeError(
            f"list() before must be a config such as {{'configurable': {{'checkpoint_id': "
            f"...}}}} or None, got {type(before).__name__} {before!r}."
        )
    if limit is not None:
        if isinstance(limit, (bool, float, str, bytes)) or not hasattr(limit, "__index__"):
            raise TypeError(
                f"list() limit must be an int or None, got {type(limit).__name__} {limit!r}."
            )
        limit = limit.__index__()
    if filter is not None:
        if not isinstance(filter, Mapping):
            raise TypeError(
                f"list() filter must be a mapping of metadata keys to values, got "
                f"{type(filter).__name__}."
            )
        bad = [key for key in filter if not isinstance(key, str)]
        if bad:
            raise TypeError(
                f"list() filter keys must be strings (metadata keys are strings), got "
                f"{type(bad[0]).__name__} {bad[0]!r}."
            )
        filter = dict(filter)
    return _normal_config(config), filter or None, _normal_config(before), limit


def _normal_config(config: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if config is None:
        return None
    conf = config.get(CONF)
    if not conf:
        return dict(config)
    conf = dict(conf)
    for key in ("thread_id", "checkpoint_id"):
        if conf.get(key) is not None:
            conf[key] = str(conf[key])
    if "checkpoint_ns" in conf:
        ns = conf["checkpoint_ns"]
        conf["checkpoint_ns"] = "" if ns is None else str(ns)
    return {**config, CONF: conf}
