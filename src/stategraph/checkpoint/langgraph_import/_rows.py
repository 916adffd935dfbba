"""One LangGraph checkpoint row, checked and loaded: the part both readers share.

:class:`LgCheckpoint` and :class:`LgWrite` are what the readers return. The helpers
check each id (text, no NUL character: no stategraph saver stores one), load each
value with the allow-list decoder, and turn any failure into a
:class:`~._errors.LangGraphValueError` naming the source thread, namespace, checkpoint
and channel (a bad channel inside a SQLite checkpoint body is found by loading each
channel alone).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from stategraph.checkpoint.langgraph_import._decode import LangGraphDecoder
from stategraph.checkpoint.langgraph_import._errors import (
    LangGraphImportError,
    LangGraphValueError,
    Where,
)

__all__ = ["LgCheckpoint", "LgWrite", "text", "ids", "load", "metadata", "write", "body"]

T = TypeVar("T")


@dataclass
class LgWrite:
    """One pending write of a LangGraph checkpoint."""

    task_id: str
    task_path: str
    idx: int
    channel: str
    value: Any


@dataclass
class LgCheckpoint:
    """One LangGraph checkpoint, decoded."""

    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    parent_id: str | None
    checkpoint: dict[str, Any]
    metadata: dict[str, Any]
    writes: list[LgWrite] = field(default_factory=list)

    @property
    def where(self) -> Where:
        """This checkpoint's place in the source, for error messages."""
        return Where(self.thread_id, self.checkpoint_ns, self.checkpoint_id)


# -- checks shared by both readers ----------------------------------------------------


def text(value: Any, what: str, where: Where, *, optional: bool = False) -> Any:
    """``value`` if it is a string stategraph can store (no NUL character)."""
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise LangGraphValueError(
            f"The {what} of {where} is {type(value).__name__} {value!r:.60}, not text: "
            "the source is corrupt.",
            where,
        )
    if "\x00" in value:
        raise LangGraphValueError(
            f"The {what} {value!r:.80} ({where}) holds a NUL character, which stategraph's "
            "savers do not store: rename it in the source (or leave the thread out) first.",
            where,
        )
    return value


def ids(thread: Any, ns: Any, cid: Any) -> Where:
    """The checked ids of one row, as a :class:`Where`."""
    where = Where(thread if isinstance(thread, str) else repr(thread))
    thread = text(thread, "thread id", where)
    where = Where(thread, ns if isinstance(ns, str) else repr(ns))
    ns = text(ns, "checkpoint namespace", where)
    where = Where(thread, ns, cid if isinstance(cid, str) else repr(cid))
    cid = text(cid, "checkpoint id", where)
    return Where(thread, ns, cid)


def load(where: Where, fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)``, any failure raised as :class:`LangGraphValueError` naming ``where``."""
    try:
        return fn(*args)
    except LangGraphImportError:
        raise
    except MemoryError:
        raise
    except Exception as exc:  # the decoder or an allowed class refused the value
        raise LangGraphValueError(
            f"Cannot import {where}: {type(exc).__name__}: {exc}", where
        ) from exc


def metadata(decoder: LangGraphDecoder, raw: Any, where: Where) -> dict[str, Any]:
    """A checkpoint's metadata (JSON text, bytes or already parsed): a JSON object."""
    where = where.at(part="metadata")
    if raw is None:
        return {}
    if isinstance(raw, dict):
        value = load(where, decoder.loads_json, raw)
    else:
        value = load(where, decoder.loads_json, bytes(raw) if isinstance(raw, memoryview) else raw)
    if not isinstance(value, dict):
        raise LangGraphValueError(
            f"The metadata of {where} must be a JSON object, got {value!r:.60}.", where
        )
    return value


def write(decoder: LangGraphDecoder, row: Sequence[Any], where: Where) -> LgWrite:
    """One pending write row ``(task_id, task_path, idx, channel, type, value)``."""
    task, tpath, idx, channel, vtype, value = row
    here = where.at(part=f"a pending write of task {task!r:.60}")
    task = text(task, "task id", here)
    tpath = text(tpath, "task path", here, optional=True) or ""
    if isinstance(idx, bool) or not isinstance(idx, int):
        raise LangGraphValueError(f"The write index of {here} is {idx!r:.40}, not a number.", here)
    here = where.at(part=f"pending write {idx} of task {task!r}")
    channel = text(channel, "channel", here)
    here = here.at(channel=channel)
    return LgWrite(task, tpath, idx, channel, load(here, decoder.loads_typed, (vtype, value)))


def _blame_channel(decoder: LangGraphDecoder, payload: Any) -> str | None:
    """The channel whose value makes a whole msgpack checkpoint body fail to load.

    Only called once loading failed: the body is split with its extensions left as
    they are, and each channel value is loaded alone.
    """
    import ormsgpack

    from stategraph.checkpoint.serde._pyunpack import unpack

    try:
        body = unpack(bytes(payload), lambda code, data: ormsgpack.Ext(code, data))
        values = body.get("channel_values") if isinstance(body, dict) else None
        if not isinstance(values, dict):
            return None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for channel, value in values.items():
                try:
                    packed = ormsgpack.packb(value, option=ormsgpack.OPT_NON_STR_KEYS)
                    decoder.loads_typed(("msgpack", packed))
                except Exception:
                    return str(channel)
    except Exception:
        return None
    return None


def body(decoder: LangGraphDecoder, ctype: Any, blob: Any, where: Where) -> dict[str, Any]:
    """A SQLite checkpoint body (channel values inside), naming the bad channel if any."""
    try:
        value = load(where.at(part="checkpoint body"), decoder.loads_typed, (ctype, blob))
    except LangGraphValueError as exc:
        channel = _blame_channel(decoder, blob) if ctype == "msgpack" else None
        if channel is None:
            raise
        here = where.at(channel=channel)
        cause = exc.__cause__ if exc.__cause__ is not None else exc
        raise LangGraphValueError(
            f"Cannot import {here}: {type(cause).__name__}: {cause}", here
        ) from cause
    if not isinstance(value, dict):
        raise LangGraphValueError(
            f"The body of {where} is {type(value).__name__}, not a mapping.", where
        )
    return value
