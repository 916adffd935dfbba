"""Which classes a serializer may construct at load time, and how schemas name them.

:class:`TypeRegistry` maps ``(module, qualname)`` to a class. Loading looks classes up
*only* here: a name that is not registered is never imported nor resolved by walking
attributes. The one exception is stategraph's own modules (:data:`OWN_MODULES`), whose
classes are always allowed; they are resolved inside those fixed modules only. So are
langchain-core's message classes (a fixed list of names, resolved in
``langchain_core.messages``) when langchain-core is installed.

:func:`collect_schema_types` walks type hints (TypedDict, dataclass, pydantic, NamedTuple
fields, ``Annotated``, ``Optional``/``Union``, ``list[...]``/``dict[...]`` arguments,
``Literal`` enum members) and returns the user classes it finds, so a compiled graph can
allow everything its state, input, output and context schemas mention.
"""

from __future__ import annotations

import builtins
import enum
import importlib
import sys
import typing
from collections.abc import Iterable
from typing import Any

import typing_extensions

__all__ = ["OWN_MODULES", "TypeRegistry", "collect_schema_types", "builtin_exception"]

OWN_MODULES: frozenset[str] = frozenset(
    {
        "stategraph.types",
        "stategraph.messages",
        "stategraph.errors",
        "stategraph.checkpoint.serde.types",
    }
)
"""Modules whose classes every serializer may construct without registration."""

_BUILTIN_EXCEPTIONS: dict[str, type[BaseException]] = {
    name: obj
    for name, obj in vars(builtins).items()
    if isinstance(obj, type) and issubclass(obj, BaseException)
}

_STDLIB: frozenset[str] = frozenset(getattr(sys, "stdlib_module_names", ())) | {
    "builtins",
    "typing",
    "typing_extensions",
    "collections",
    "datetime",
    "decimal",
    "enum",
    "pathlib",
    "re",
    "types",
    "uuid",
    "zoneinfo",
}
_SKIPPED_PACKAGES: frozenset[str] = frozenset({"pydantic", "pydantic_core", "annotated_types"})


def builtin_exception(qualname: str) -> type[BaseException] | None:
    """The builtin exception class called ``qualname`` (``ValueError``...), if any."""
    return _BUILTIN_EXCEPTIONS.get(qualname)


_LANGCHAIN_MESSAGES: frozenset[str] = frozenset(
    {
        f"{kind}{suffix}"
        for kind in ("AI", "Human", "System", "Tool", "Chat", "Function")
        for suffix in ("Message", "MessageChunk")
    }
    | {"RemoveMessage"}
)
"""langchain-core's message classes: allowed automatically when langchain-core is
installed, so a LangChain app's state round-trips through every saver unchanged."""


def _langchain_message_type(module: str, qualname: str) -> type | None:
    """Resolve one of langchain-core's message classes, if installed, else ``None``."""
    if qualname not in _LANGCHAIN_MESSAGES or not module.startswith("langchain_core.messages"):
        return None
    try:
        messages = importlib.import_module("langchain_core.messages")  # a fixed name
    except ImportError:
        return None
    cls = getattr(messages, qualname, None)
    if isinstance(cls, type) and cls.__module__ == module and cls.__qualname__ == qualname:
        return cls
    return None


def _own_type(module: str, qualname: str) -> type | None:
    """Resolve a class defined in one of stategraph's own modules, else ``None``."""
    if module not in OWN_MODULES:
        return _langchain_message_type(module, qualname)
    mod = sys.modules.get(module)
    if mod is None:
        try:
            mod = importlib.import_module(module)  # a fixed, trusted module name
        except ImportError:
            return None
    obj: Any = mod
    for part in qualname.split("."):
        if obj is not mod and not (isinstance(obj, type) and obj.__module__ == module):
            return None  # only walk into classes defined in this module (nested classes)
        obj = vars(obj).get(part)
        if obj is None:
            return None
    if (
        isinstance(obj, type)
        and obj.__module__ == module
        and getattr(obj, "__qualname__", None) == qualname
    ):
        return obj
    return None


class TypeRegistry:
    """The classes one serializer may construct when loading, keyed by (module, qualname)."""

    __slots__ = ("_types",)

    def __init__(self, types: Iterable[type] = ()) -> None:
        """Create a registry allowing ``types`` (exactly those; see :meth:`add`)."""
        self._types: dict[tuple[str, str], type] = {}
        self.add(*types)

    def add(self, *types: type) -> None:
        """Allow each class in ``types``; raise ``TypeError`` for anything else."""
        for tp in types:
            if not isinstance(tp, type):
                raise TypeError(
                    f"Only classes can be allowed for deserialization, got {tp!r} "
                    f"({type(tp).__name__})."
                )
            self._types[(tp.__module__, tp.__qualname__)] = tp

    def lookup(self, module: str, qualname: str) -> type | None:
        """The allowed class named ``module.qualname``, or ``None`` if it is not allowed."""
        tp = self._types.get((module, qualname))
        if tp is not None:
            return tp
        return _own_type(module, qualname)

    def allows(self, tp: type) -> bool:
        """Whether instances of ``tp`` may be rebuilt at load time."""
        if tp.__module__ in OWN_MODULES:
            return True
        if tp.__qualname__ in _LANGCHAIN_MESSAGES and tp.__module__.startswith(
            "langchain_core.messages"
        ):
            return _langchain_message_type(tp.__module__, tp.__qualname__) is tp
        return self._types.get((tp.__module__, tp.__qualname__)) is tp

    def copy(self) -> TypeRegistry:
        """An independent registry with the same classes."""
        new = TypeRegistry()
        new._types = dict(self._types)
        return new

    def __iter__(self) -> typing.Iterator[type]:
        """The registered classes (stategraph's own classes are implicit, not listed)."""
        return iter(list(self._types.values()))

    def __len__(self) -> int:
        """How many classes were registered."""
        return len(self._types)


# --------------------------------------------------------------------------- schema walk

_ANNOTATED_ORIGINS = {typing.Annotated, typing_extensions.Annotated}
_LITERAL_ORIGINS = {typing.Literal, typing_extensions.Literal}


def _is_user_class(tp: type) -> bool:
    module = getattr(tp, "__module__", None) or ""
    top = module.partition(".")[0]
    return top not in _STDLIB and top not in _SKIPPED_PACKAGES


def _is_typeddict(tp: type) -> bool:
    return typing_extensions.is_typeddict(tp) or typing.is_typeddict(tp)


def _class_hints(tp: type) -> list[Any]:
    """The field annotations of ``tp``, resolved where possible, never raising."""
    fields = getattr(tp, "__pydantic_fields__", None)
    if isinstance(fields, dict) and hasattr(tp, "model_construct"):
        return [getattr(info, "annotation", None) for info in fields.values()]
    try:
        return list(typing_extensions.get_type_hints(tp, include_extras=True).values())
    except Exception:
        pass
    hints: list[Any] = []
    dc_fields = getattr(tp, "__dataclass_fields__", None)
    if isinstance(dc_fields, dict):
        hints.extend(getattr(f, "type", None) for f in dc_fields.values())
    for klass in getattr(tp, "__mro__", (tp,)):
        import inspect

        try:
            annotations = inspect.get_annotations(klass)
        except Exception:
            continue
        if isinstance(annotations, dict):
            hints.extend(annotations.values())
    return [h for h in hints if h is not None and not isinstance(h, str)]


class _SchemaWalker:
    """Collects user classes reachable from type hints, visiting each hint once."""

    def __init__(self) -> None:
        self.found: set[type] = set()
        self._seen: set[int] = set()
        self._keep: list[Any] = []  # keeps visited objects alive so ids stay unique

    def walk(self, tp: Any) -> None:
        if tp is None or isinstance(tp, (str, typing.ForwardRef)) or id(tp) in self._seen:
            return
        self._seen.add(id(tp))
        self._keep.append(tp)
        origin = typing_extensions.get_origin(tp)
        args = typing_extensions.get_args(tp)
        if origin in _ANNOTATED_ORIGINS:
            self.walk(args[0] if args else None)
            return
        if origin in _LITERAL_ORIGINS:
            for value in args:
                if isinstance(value, enum.Enum):
                    self.walk(type(value))
            return
        if origin is not None:
            self.walk(origin)
            for arg in args:
                if isinstance(arg, (list, tuple)):
                    for item in arg:
                        self.walk(item)
                else:
                    self.walk(arg)
            return
        if isinstance(tp, typing.TypeVar):
            self.walk(tp.__bound__)
            for constraint in tp.__constraints__:
                self.walk(constraint)
            return
        supertype = getattr(tp, "__supertype__", None)  # typing.NewType
        if supertype is not None:
            self.walk(supertype)
            return
        if type(tp).__name__ == "TypeAliasType":  # PEP 695 ``type X = ...``
            self.walk(getattr(tp, "__value__", None))
            return
        if isinstance(tp, type):
            self._walk_class(tp)

    def _walk_class(self, tp: type) -> None:
        if not _is_user_class(tp):
            return
        if not _is_typeddict(tp):
            self.found.add(tp)
        if isinstance(tp, enum.EnumMeta):
            return
        meta = getattr(tp, "__pydantic_generic_metadata__", None)
        if isinstance(meta, dict):
            self.walk(meta.get("origin"))
            for arg in meta.get("args", ()):
                self.walk(arg)
        for hint in _class_hints(tp):
            self.walk(hint)


def collect_schema_types(*schemas: Any) -> set[type]:
    """Return the user classes reachable from ``schemas`` through their type hints.

    Walks TypedDict, dataclass, pydantic (v1 and v2), NamedTuple and annotated-class
    fields recursively, through ``Annotated``, ``Optional``/``Union``, generic
    arguments (``list[Item]``, ``dict[str, Item]``, ``Page[Item]``), ``NewType`` and the
    members of ``Literal`` enums. Builtins, standard-library and typing constructs are
    skipped; TypedDicts are walked but not returned (their instances are plain dicts).
    """
    walker = _SchemaWalker()
    for schema in schemas:
        walker.walk(schema)
    return walker.found
