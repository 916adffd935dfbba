"""Loading LangGraph's stored values with an allow-list (never importing by name).

LangGraph's serializer writes msgpack with extension codes of its own: each extension
holds ``[module, name, argument(s), method?]`` and LangGraph's loader imports
``module`` and calls ``name``. Here nothing is imported: a fixed table maps the names
LangGraph writes for standard values (sets, datetimes, UUIDs, decimals, paths...),
LangChain messages (to stategraph's messages) and LangGraph's own types (``Interrupt``,
``Send``, ``Command``) to constructors; the application's classes are rebuilt only if
passed in ``allowed_types``. Any other class loads as its plain data with an
:class:`~stategraph.checkpoint.serde.base.UnknownTypeWarning` (or raises
:class:`~stategraph.checkpoint.serde.base.DeserializationError` with ``strict=True``).

Old ``"json"`` payloads (LangChain's ``{"lc": 1, "type": "constructor", ...}`` objects)
are revived with the same table. ``"pickle"`` payloads are refused.
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import json
import pathlib
import uuid
import warnings
from collections.abc import Callable, Iterable
from typing import Any

from stategraph.checkpoint.serde import _limits as limits
from stategraph.checkpoint.serde._pyunpack import Replaying
from stategraph.checkpoint.serde.base import DeserializationError, UnknownTypeWarning

__all__ = ["LangGraphDecoder"]

# LangGraph's extension codes
_SINGLE, _POS, _KW, _METHOD, _PYDANTIC_V1, _PYDANTIC_V2, _NUMPY = range(7)


def _message_classes() -> dict[str, type]:
    from stategraph import messages as sg

    names = [
        "HumanMessage",
        "AIMessage",
        "SystemMessage",
        "ToolMessage",
        "RemoveMessage",
        "AIMessageChunk",
        "ToolMessageChunk",
    ]
    found = {name: getattr(sg, name) for name in names if hasattr(sg, name)}
    # LangChain message kinds stategraph has no class for: the closest one
    found.setdefault("HumanMessageChunk", sg.HumanMessage)
    found.setdefault("SystemMessageChunk", sg.SystemMessage)
    found["ChatMessage"] = sg.HumanMessage
    found["FunctionMessage"] = sg.ToolMessage
    return found


def _init_fields(cls: type) -> frozenset[str]:
    if dataclasses.is_dataclass(cls):
        return frozenset(f.name for f in dataclasses.fields(cls) if f.init)
    import inspect

    return frozenset(inspect.signature(cls).parameters)


def _build(cls: type, kwargs: dict[str, Any]) -> Any:
    """``cls(**kwargs)`` with the keys ``cls`` accepts (LangChain adds some we do not keep)."""
    accepted = _init_fields(cls)
    return cls(**{k: v for k, v in kwargs.items() if k in accepted})


def _message(name: str) -> Callable[[Any], Any] | None:
    cls = _message_classes().get(name)
    if cls is None:
        return None

    def build(kwargs: Any) -> Any:
        if not isinstance(kwargs, dict):
            raise DeserializationError(f"Malformed LangChain {name}: expected its fields.")
        fields = dict(kwargs)
        if name == "ChatMessage" and fields.get("role"):
            fields["name"] = fields.get("name") or fields["role"]
        if name == "FunctionMessage":
            fields.setdefault("tool_call_id", fields.get("name") or "")
        return _build(cls, fields)

    return build


def _langgraph_type(name: str) -> Callable[[Any], Any] | None:
    from stategraph import types as sg_types

    if name not in ("Interrupt", "Send", "Command", "Overwrite"):
        return None
    cls = getattr(sg_types, name)

    def build(arg: Any) -> Any:
        if name == "Send":
            if isinstance(arg, dict):
                return cls(arg.get("node"), arg.get("arg"))
            node, value = arg[0], arg[1]
            return cls(node, value)
        if isinstance(arg, dict):
            return _build(cls, arg)
        return cls(*arg) if isinstance(arg, list) else cls(arg)

    return build


def _set(kind: type) -> Callable[..., Any]:
    def build(items: Any) -> Any:
        if not isinstance(items, list):
            raise DeserializationError("Malformed set payload: expected a list.")
        limits.check_collisions(items, "set")
        return kind(items)

    return build


def _pattern(pattern: Any, flags: Any = 0) -> Any:
    """A stored regex, within a budget of its own (the decoder passes the payload's)."""
    return limits.PatternBudget().compile(pattern, flags)


def _deque(items: Any) -> Any:
    import collections

    return collections.deque(items)


def _zone(key: Any) -> Any:
    import zoneinfo

    return zoneinfo.ZoneInfo(key)


def _ip(kind: str) -> Callable[[Any], Any]:
    def build(text: Any) -> Any:
        import ipaddress

        return getattr(ipaddress, kind)(text)

    return build


_STANDARD: dict[tuple[str, str], Callable[..., Any]] = {
    ("builtins", "set"): _set(set),
    ("builtins", "frozenset"): _set(frozenset),
    ("uuid", "UUID"): uuid.UUID,
    ("decimal", "Decimal"): decimal.Decimal,
    ("datetime", "datetime"): datetime.datetime,
    ("datetime", "date"): datetime.date,
    ("datetime", "time"): datetime.time,
    ("datetime", "timedelta"): datetime.timedelta,
    ("datetime", "timezone"): datetime.timezone,
    ("zoneinfo", "ZoneInfo"): _zone,
    ("ipaddress", "IPv4Address"): _ip("IPv4Address"),
    ("ipaddress", "IPv6Address"): _ip("IPv6Address"),
    ("re", "compile"): _pattern,
    ("collections", "deque"): _deque,
    ("pathlib", "Path"): pathlib.Path,
    ("pathlib", "PosixPath"): pathlib.PurePosixPath,
    ("pathlib", "WindowsPath"): pathlib.PureWindowsPath,
}
"""Standard values LangGraph writes, by ``(module, name)``; called as the code says."""
_METHODS = frozenset({"fromisoformat"})


def _call(fn: Callable[..., Any], code: int, arg: Any, method: Any) -> Any:
    """Call ``fn`` the way LangGraph's extension ``code`` says (no other method names)."""
    if code == _SINGLE:
        return fn(arg)
    if code == _POS and isinstance(arg, list):
        return fn(*arg)
    if code in (_KW, _PYDANTIC_V1, _PYDANTIC_V2) and isinstance(arg, dict):
        return fn(**arg)
    if code == _METHOD and method in _METHODS and isinstance(fn, type):
        return getattr(fn, method)(arg)
    raise DeserializationError(f"Malformed LangGraph extension (code {code}, method {method!r}).")


class LangGraphDecoder:
    """Loads LangGraph's ``(type, bytes)`` values into stategraph values.

    ``allowed_types`` are the application's classes (dataclasses, pydantic models,
    enums, NamedTuples) to rebuild, matched by module and qualified name, or by
    qualified name alone for classes LangGraph saw in ``__main__``.
    """

    def __init__(self, allowed_types: Iterable[type] = (), *, strict: bool = False) -> None:
        """See the class docstring."""
        self.strict = strict
        self._types: dict[tuple[str, str], type] = {}
        self._by_name: dict[str, list[type]] = {}
        for tp in allowed_types:
            self._types[(tp.__module__, tp.__qualname__)] = tp
            self._by_name.setdefault(tp.__qualname__, []).append(tp)
        self._depth = 0
        self._patterns = limits.PatternBudget()

    # -- public ---------------------------------------------------------------------

    def loads_typed(self, data: tuple[str, Any]) -> Any:
        """Load one stored value; raise :class:`DeserializationError` if it cannot be."""
        try:
            type_, payload = data
        except (TypeError, ValueError):
            raise DeserializationError("Expected a (type, payload) pair.") from None
        if type_ == "null" or (type_ is None and payload is None):
            return None
        if isinstance(payload, memoryview):
            payload = bytes(payload)
        if type_ == "msgpack":
            return self._msgpack(payload)
        if type_ == "json":
            return self.loads_json(payload)
        if type_ == "bytes":
            return bytes(payload)
        if type_ == "bytearray":
            return bytearray(payload)
        if type_ == "pickle":
            raise DeserializationError(
                "This LangGraph database holds a 'pickle' value (written with "
                "pickle_fallback=True). stategraph does not unpickle while importing: "
                "unpickling can run arbitrary code. Re-save that thread without pickle."
            )
        raise DeserializationError(f"Unknown LangGraph value type {type_!r}.")

    def loads_json(self, payload: Any) -> Any:
        """Load JSON (bytes, str, or already parsed) and revive LangChain constructors."""
        if isinstance(payload, (bytes, bytearray)):
            limits.check_json_depth(bytes(payload))
        elif isinstance(payload, str):
            limits.check_json_depth(payload.encode())
        try:
            value = json.loads(payload) if isinstance(payload, (bytes, bytearray, str)) else payload
            return self._revive(value)
        except DeserializationError:
            raise
        except (ValueError, TypeError, RecursionError) as exc:
            raise DeserializationError(f"Cannot load a LangGraph JSON value: {exc}") from exc

    # -- msgpack ----------------------------------------------------------------------

    def _msgpack(self, payload: Any) -> Any:
        if not isinstance(payload, (bytes, bytearray)):
            raise DeserializationError(
                f"A LangGraph msgpack value must be bytes, got {type(payload).__name__}."
            )
        self._depth = 0
        self._patterns = limits.PatternBudget()
        errors: list[BaseException] = []

        def hook(code: int, data: bytes) -> Any:
            try:
                return self._ext(code, data, unpack)
            except BaseException as exc:
                errors.append(exc)
                raise

        # maps with non-str keys (LangGraph writes int and tuple keys natively) are
        # built from their items with a hash-collision check, not by ormsgpack
        unpack = Replaying(hook)
        try:
            return unpack(payload)
        except (ValueError, TypeError, RecursionError) as exc:
            first = errors[0] if errors else exc
            if isinstance(first, (DeserializationError, Warning)):
                raise first from None
            raise DeserializationError(
                f"Cannot load a LangGraph msgpack value ({len(payload)} bytes): {first!r}"
            ) from first

    def _ext(self, code: int, data: bytes, unpack: Callable[[bytes], Any]) -> Any:
        if self._depth >= limits.MAX_EXT_DEPTH:
            raise DeserializationError(
                f"Refusing LangGraph extensions nested more than {limits.MAX_EXT_DEPTH} deep."
            )
        self._depth += 1
        try:
            parts = unpack(data)
        finally:
            self._depth -= 1
        if code == _NUMPY:
            raise DeserializationError(
                "This LangGraph value is a numpy array; stategraph does not import numpy "
                "arrays. Convert it to a list before importing."
            )
        if not isinstance(parts, list) or len(parts) < 3:
            raise DeserializationError(f"Malformed LangGraph extension (code {code}).")
        module, name, arg = parts[0], parts[1], parts[2]
        method = parts[3] if len(parts) > 3 else None
        if not isinstance(module, str) or not isinstance(name, str):
            raise DeserializationError("Malformed LangGraph extension: bad class name.")
        return self._construct(code, module, name, arg, method)

    def _construct(self, code: int, module: str, name: str, arg: Any, method: Any) -> Any:
        if module.startswith("langchain_core.messages") or module.startswith("langchain.schema"):
            build = _message(name)
            if build is not None:
                return build(arg)
        if module == "langgraph.types":
            build = _langgraph_type(name)
            if build is not None:
                return build(arg)
        std = _STANDARD.get((module, name))
        if std is _pattern:
            std = self._patterns.compile  # one compile budget per payload
        if std is not None:
            try:
                return _call(std, code, arg, method)
            except DeserializationError:
                raise
            except (TypeError, ValueError, OverflowError, KeyError) as exc:
                raise DeserializationError(
                    f"Malformed LangGraph {module}.{name} value: {exc}"
                ) from exc
        tp = self._types.get((module, name))
        if tp is None and module == "__main__" and len(self._by_name.get(name, ())) == 1:
            tp = self._by_name[name][0]
        if tp is None:
            return self._plain(module, name, arg)
        return self._user(tp, code, arg, method)

    def _user(self, tp: Any, code: int, arg: Any, method: Any) -> Any:
        import enum

        if issubclass(tp, enum.Enum):
            return tp(arg)
        if code in (_PYDANTIC_V2, _PYDANTIC_V1) and isinstance(arg, dict):
            construct = getattr(tp, "model_construct", None) or getattr(tp, "construct", None)
            if construct is not None:
                return construct(**arg)
        if code == _KW and isinstance(arg, dict):
            return tp(**arg)
        if code == _POS and isinstance(arg, list):
            return tp(*arg)
        if code == _METHOD and method in ("fromisoformat", "model_validate_json"):
            return getattr(tp, method)(arg)
        return tp(arg)

    def _plain(self, module: str, name: str, arg: Any) -> Any:
        qualified = f"{module}.{name}"
        if self.strict:
            raise DeserializationError(
                f"Refusing to load LangGraph value of type '{qualified}': it is not allowed. "
                f"Pass the class in allowed_types to import it."
            )
        warnings.warn(
            f"Imported a LangGraph '{qualified}' as plain data: pass the class in "
            f"allowed_types to rebuild it.",
            UnknownTypeWarning,
            stacklevel=3,
        )
        return arg

    # -- json -------------------------------------------------------------------------

    def _revive(self, value: Any) -> Any:
        if isinstance(value, list):
            return [self._revive(v) for v in value]
        if not isinstance(value, dict):
            return value
        if (
            value.get("type") == "constructor"
            and "lc" in value
            and isinstance(value.get("id"), list)
        ):
            path = [str(p) for p in value["id"]]
            kwargs = {k: self._revive(v) for k, v in (value.get("kwargs") or {}).items()}
            name = path[-1] if path else ""
            if "messages" in path or path[:3] == ["langchain", "schema", "messages"]:
                build = _message(name)
                if build is not None:
                    return build(kwargs)
            if path[:2] == ["langgraph", "types"]:
                build = _langgraph_type(name)
                if build is not None:
                    return build(kwargs)
            module = ".".join(path[:-1])
            tp = self._types.get((module, name))
            if tp is not None:
                return self._user(tp, _KW, kwargs, None)
            return self._plain(module, name, kwargs)
        return {k: self._revive(v) for k, v in value.items()}
