"""Observed values as plain JSON data, with ids, timestamps and addresses masked.

Only three things are masked, everything else is compared as it is:

* ids: UUIDs (run ids, checkpoint ids, task ids, message ids such as ``lc_run--<uuid>``)
  and 32-hex-digit ids (interrupt ids). Each distinct id becomes ``#1``, ``#2``... in
  order of first appearance within one observation, so which events share a run, or
  which message answers which call, is still compared;
* timestamps (ISO 8601 strings, ``datetime`` objects, the tracer's start/end times);
* memory addresses (``0x7f...`` in reprs);
* the installed package versions LangChain puts in run metadata (``lc_versions``): the
  environment, not the behaviour (the recording names the versions it was made with).

The library's own name (``langgraph`` / ``stategraph``) in class paths and reprs is
written ``LIB``: it is the one thing that must differ.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import re
import uuid
from collections.abc import Mapping
from typing import Any

__all__ = ["Masker", "to_data"]

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)
_HEX32 = re.compile(r"(?<![0-9a-f])[0-9a-f]{32}(?![0-9a-f])")
_TS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)?")
_ADDR = re.compile(r"0x[0-9a-f]{6,}")
_LIB = re.compile(r"\b(?:langgraph|stategraph)\b")


class Masker:
    """Replaces ids by labels in order of first appearance (one instance per observation)."""

    def __init__(self) -> None:
        self.labels: dict[str, str] = {}

    def label(self, raw: str) -> str:
        """The label of one id."""
        key = raw.lower()
        found = self.labels.get(key)
        if found is None:
            found = self.labels[key] = f"#{len(self.labels) + 1}"
        return found

    def text(self, value: str) -> str:
        """``value`` with ids, timestamps, addresses and the library name masked."""
        value = _TS.sub("<ts>", value)
        value = _UUID.sub(lambda m: self.label(m.group(0)), value)
        value = _HEX32.sub(lambda m: self.label(m.group(0)), value)
        value = _ADDR.sub("0x?", value)
        return _LIB.sub("LIB", value)


def _cls(obj: Any) -> str:
    module = type(obj).__module__
    root = module.split(".")[0]
    name = type(obj).__qualname__
    if root in ("langgraph", "stategraph"):
        return f"LIB.{name}"
    if root == "langchain_core":
        return name
    return f"{root}.{name}"


_EMPTY: tuple[Any, ...] = (None, {}, [], ())


def _message(obj: Any, m: Masker) -> dict[str, Any]:
    dump = obj.model_dump() if hasattr(obj, "model_dump") else dict(vars(obj))
    out: dict[str, Any] = {"~cls": _cls(obj), "content": to_data(dump.pop("content", None), m)}
    for key, value in dump.items():
        if key == "type" or any(value is e or value == e for e in _EMPTY):
            continue
        out[key] = to_data(value, m)
    return out


def to_data(obj: Any, m: Masker) -> Any:
    """``obj`` as JSON data (dicts, lists, str, numbers), masked with ``m``."""
    if obj is None or isinstance(obj, (bool, int, float)):
        return obj
    if isinstance(obj, str):
        return m.text(obj)
    if isinstance(obj, uuid.UUID):
        return m.label(str(obj))
    if isinstance(obj, (datetime.datetime, datetime.date)):
        return "<ts>"
    if isinstance(obj, enum.Enum):
        return to_data(obj.value, m)
    if isinstance(obj, BaseException):
        return {"~error": type(obj).__name__, "msg": m.text(str(obj))}
    if isinstance(obj, Mapping):
        return {
            m.text(str(k)): "<versions>" if k == "lc_versions" else to_data(v, m)
            for k, v in obj.items()
        }
    if isinstance(obj, tuple) and hasattr(obj, "_asdict"):
        return {"~cls": _cls(obj), **{k: to_data(v, m) for k, v in obj._asdict().items()}}
    if isinstance(obj, (list, tuple)):
        return [to_data(v, m) for v in obj]
    if isinstance(obj, (set, frozenset)):
        return sorted((to_data(v, m) for v in obj), key=repr)
    name = type(obj).__name__
    if hasattr(obj, "content") and hasattr(obj, "type") and hasattr(obj, "id"):
        return _message(obj, m)
    if name == "Send" and hasattr(obj, "node"):
        return {"~cls": _cls(obj), "node": obj.node, "arg": to_data(obj.arg, m)}
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        fields = {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
        return {"~cls": _cls(obj), **{k: to_data(v, m) for k, v in fields.items()}}
    if hasattr(obj, "model_dump"):
        return {"~cls": _cls(obj), **to_data(obj.model_dump(), m)}
    if isinstance(obj, type):
        return f"<class {m.text(obj.__qualname__)}>"
    return {"~repr": m.text(repr(obj))}
