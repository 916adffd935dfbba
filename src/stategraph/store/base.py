"""The store interface: items, operations and :class:`BaseStore`.

A store's only primitive is :meth:`BaseStore.batch` (and :meth:`BaseStore.abatch`):
it executes a list of operations (:class:`GetOp`, :class:`PutOp`, :class:`SearchOp`,
:class:`ListNamespacesOp`) in order and returns one result per operation. ``get``,
``put``, ``delete``, ``search`` and ``list_namespaces`` (and their ``a``-prefixed
async twins) are thin wrappers that build one operation each.

This module is imported by graphs at compile time, so it imports nothing heavy
(no ``asyncio``, ``sqlite3`` or ``json``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, Protocol, TypedDict

from stategraph.errors import InvalidIdentifierError
from stategraph.store import _ops
from stategraph.store._filters import validate_filter
from stategraph.store._ops import (
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    NamespacePath,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)
from stategraph.store._ops import (
    NamespaceMatchType as NamespaceMatchType,  # re-exported with the rest of _ops.__all__
)

__all__ = [
    "NOT_PROVIDED",
    "NotProvided",
    "InvalidNamespaceError",
    "RESERVED_NAMESPACE_ROOT",
    "TTLConfig",
    "IndexConfig",
    "Embeddings",
    "EmbeddingsFunc",
    "AEmbeddingsFunc",
    "BaseStore",
    "validate_namespace",
    "validate_op",
]
__all__ += _ops.__all__  # the items and operations, re-exported

RESERVED_NAMESPACE_ROOT = "langgraph"
"""First namespace label reserved for the framework (as in LangGraph); puts under it fail."""


class NotProvided:
    """Type of :data:`NOT_PROVIDED`: "argument not given", distinct from ``None``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "NOT_PROVIDED"

    def __bool__(self) -> bool:
        return False


NOT_PROVIDED = NotProvided()
"""Default of ``put(..., ttl=)``: use the store's ``default_ttl`` (``None`` means never expire)."""


class InvalidNamespaceError(ValueError):
    """A namespace is not a non-empty tuple of non-empty strings without ``'.'``."""


class TTLConfig(TypedDict, total=False):
    """Time-to-live settings of a store (all durations in minutes)."""

    refresh_on_read: bool
    """Refresh an item's TTL when ``get``/``search`` return it (default ``True``)."""
    default_ttl: float | None
    """TTL given to items put without an explicit ``ttl`` (default: never expire)."""
    sweep_interval_minutes: float | None
    """If set, a background thread deletes expired items at this interval."""


class Embeddings(Protocol):
    """An embedding model object (the LangChain ``Embeddings`` shape)."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed several texts to be stored."""
        ...

    def embed_query(self, text: str) -> list[float]:
        """Embed one search query."""
        ...


EmbeddingsFunc = Callable[[Sequence[str]], "list[list[float]]"]
"""A function embedding a batch of texts into vectors."""
AEmbeddingsFunc = Callable[[Sequence[str]], Awaitable["list[list[float]]"]]
"""An async function embedding a batch of texts into vectors."""


class _IndexConfigRequired(TypedDict):
    dims: int
    """Number of dimensions of the embedding vectors."""
    embed: Embeddings | EmbeddingsFunc | AEmbeddingsFunc
    """Embedding function ``list[str] -> list[list[float]]`` (sync or async), or an
    object with ``embed_documents``/``embed_query`` (and optionally async twins)."""


class IndexConfig(_IndexConfigRequired, total=False):
    """Semantic-search settings: ``{"dims": 1536, "embed": fn, "fields": ["text"]}``."""

    fields: list[str] | None
    """JSON paths of the texts to embed (``"text"``, ``"a.b"``, ``"items[*].text"``,
    ``"items[0].text"``, ``"$"`` for the whole value). Default ``["$"]``."""


def validate_namespace(namespace: Any, *, for_write: bool = True) -> tuple[str, ...]:
    """Return ``namespace`` as a tuple, or raise :class:`InvalidNamespaceError`.

    Labels must be non-empty strings without ``'.'`` (the SQLite store joins labels
    with dots, so ``("a.b",)`` must never address ``("a", "b")``). For writes the
    namespace must also be non-empty and its first label not ``"langgraph"``; reads
    (search prefixes) allow the empty tuple.
    """
    if isinstance(namespace, (str, bytes)) or not isinstance(namespace, (tuple, list)):
        raise InvalidNamespaceError(
            f"Namespace must be a tuple of strings, got {type(namespace).__name__} "
            f"{namespace!r}. Write e.g. ('users', 'alice')."
        )
    ns = tuple(namespace)
    for label in ns:
        if not isinstance(label, str):
            raise InvalidNamespaceError(
                f"Invalid namespace label {label!r} in {ns!r}: labels must be strings, "
                f"got {type(label).__name__}."
            )
        if not label:
            raise InvalidNamespaceError(
                f"Invalid namespace label '' in {ns!r}: labels cannot be empty strings."
            )
        if "." in label:
            raise InvalidNamespaceError(
                f"Invalid namespace label {label!r} in {ns!r}: labels cannot contain "
                f"periods ('.'). Split it into separate labels instead."
            )
        if "\x00" in label:
            raise InvalidNamespaceError(
                f"Invalid namespace label {label!r} in {ns!r}: labels cannot contain a NUL "
                f"character ('\\x00'), which no store accepts (PostgreSQL cannot store it)."
            )
    if not for_write:
        return ns
    if not ns:
        raise InvalidNamespaceError(
            "Namespace cannot be empty: give at least one label, e.g. ('memories',)."
        )
    if ns[0] == RESERVED_NAMESPACE_ROOT:
        raise InvalidNamespaceError(
            f"Invalid namespace {ns!r}: the root label {RESERVED_NAMESPACE_ROOT!r} is "
            f"reserved. Use another first label."
        )
    return ns


def _ns(namespace: Any) -> tuple[str, ...]:
    """``namespace`` as a tuple (a bare string is rejected, not split into letters)."""
    if type(namespace) is tuple:
        return namespace
    return validate_namespace(namespace, for_write=False)


def _check_count(name: str, value: Any, *, allow_none: bool = False) -> None:
    if value is None and allow_none:
        return
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}.")


def _check_key(key: str, namespace: Any) -> None:
    if "\x00" in key:
        raise InvalidIdentifierError(
            f"Invalid key {key!r} (namespace {tuple(namespace)!r}): keys cannot contain a "
            f"NUL character ('\\x00'), which no store accepts (PostgreSQL cannot store "
            f"it). Remove it or encode the key (for example as hex)."
        )


def validate_op(op: Op) -> None:
    """Raise a clear error if ``op`` is malformed (namespace, key, value, filter, ...)."""
    if isinstance(op, PutOp):
        validate_namespace(op.namespace, for_write=op.value is not None)
        if not isinstance(op.key, str):
            raise TypeError(
                f"Key must be a string, got {type(op.key).__name__} {op.key!r} "
                f"(namespace {tuple(op.namespace)!r})."
            )
        _check_key(op.key, op.namespace)
        if op.value is not None and not isinstance(op.value, Mapping):
            raise TypeError(
                f"Value for key {op.key!r} in namespace {tuple(op.namespace)!r} must be a "
                f"dict, got {type(op.value).__name__}. Wrap it, e.g. {{'data': value}}."
            )
        index = op.index
        if not (
            index is None
            or index is False
            or (isinstance(index, list) and all(isinstance(p, str) for p in index))
        ):
            raise TypeError(
                f"index for key {op.key!r} must be None, False or a list of field paths, "
                f"got {index!r}."
            )
        if op.ttl is not None and (
            not isinstance(op.ttl, (int, float)) or isinstance(op.ttl, bool) or op.ttl <= 0
        ):
            raise ValueError(
                f"ttl for key {op.key!r} must be a positive number of minutes or None, "
                f"got {op.ttl!r}."
            )
    elif isinstance(op, GetOp):
        validate_namespace(op.namespace, for_write=False)
        if not isinstance(op.key, str):
            raise TypeError(f"Key must be a string, got {type(op.key).__name__} {op.key!r}.")
        _check_key(op.key, op.namespace)
    elif isinstance(op, SearchOp):
        validate_namespace(op.namespace_prefix, for_write=False)
        validate_filter(op.filter)
        _check_count("limit", op.limit)
        _check_count("offset", op.offset)
        if op.query is not None and not isinstance(op.query, str):
            raise TypeError(f"query must be a string, got {type(op.query).__name__}.")
    elif isinstance(op, ListNamespacesOp):
        for cond in op.match_conditions or ():
            if cond.match_type not in ("prefix", "suffix"):
                raise ValueError(
                    f"Unknown match type {cond.match_type!r}: use 'prefix' or 'suffix'."
                )
            validate_namespace(cond.path, for_write=False)
        _check_count("max_depth", op.max_depth, allow_none=True)
        _check_count("limit", op.limit)
        _check_count("offset", op.offset)
    else:
        raise TypeError(
            f"Unknown store operation {op!r}: expected GetOp, PutOp, SearchOp or ListNamespacesOp."
        )


def _match_conditions(
    prefix: NamespacePath | None, suffix: NamespacePath | None
) -> tuple[MatchCondition, ...] | None:
    conds = []
    if prefix:
        conds.append(MatchCondition(match_type="prefix", path=_ns(prefix)))
    if suffix:
        conds.append(MatchCondition(match_type="suffix", path=_ns(suffix)))
    return tuple(conds) or None


class BaseStore(ABC):
    """Interface of long-term memory stores.

    Implement :meth:`batch` and :meth:`abatch`; everything else builds operations.
    """

    supports_ttl: bool = False
    """Whether ``put(..., ttl=...)`` is honoured."""
    ttl_config: TTLConfig | None = None
    """The store's TTL settings, if any."""

    @abstractmethod
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Execute ``ops`` in order; return one result per operation."""

    @abstractmethod
    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Async twin of :meth:`batch`."""

    async def _arun(self, op: Op) -> Any:
        """The result of one operation of an async convenience method (``aget``,
        ``aput``, ...): an :meth:`abatch` of its own here; coalesced with concurrent
        calls in :class:`~stategraph.store._batch.AsyncBatchedBaseStore`."""
        return (await self.abatch([op]))[0]

    # -- building operations -------------------------------------------------

    def _refresh(self, refresh_ttl: bool | None) -> bool:
        if refresh_ttl is not None:
            return refresh_ttl
        return (self.ttl_config or {}).get("refresh_on_read", True)

    def _put_op(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: Mapping[str, Any],
        index: Literal[False] | list[str] | None,
        ttl: float | NotProvided | None,
    ) -> PutOp:
        validate_namespace(namespace)
        if isinstance(ttl, NotProvided):
            ttl = (self.ttl_config or {}).get("default_ttl")
        if ttl is not None and not self.supports_ttl:
            raise ValueError(
                f"{type(self).__name__} does not support TTL; put key {key!r} with "
                f"ttl=None or use a store that supports TTL."
            )
        return PutOp(tuple(namespace), key, value, index, ttl)  # type: ignore[arg-type]

    def _search_op(
        self,
        namespace_prefix: tuple[str, ...],
        query: str | None,
        filter: dict[str, Any] | None,
        limit: int,
        offset: int,
        refresh_ttl: bool | None,
    ) -> SearchOp:
        return SearchOp(
            _ns(namespace_prefix), filter, limit, offset, query, self._refresh(refresh_ttl)
        )

    # -- sync API --------------------------------------------------------------

    def get(
        self, namespace: tuple[str, ...], key: str, *, refresh_ttl: bool | None = None
    ) -> Item | None:
        """The item at ``(namespace, key)``, or ``None``; may refresh its TTL."""
        op = GetOp(_ns(namespace), key, self._refresh(refresh_ttl))
        return self.batch([op])[0]  # type: ignore[return-value]

    def put(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: Mapping[str, Any],
        index: Literal[False] | list[str] | None = None,
        *,
        ttl: float | NotProvided | None = NOT_PROVIDED,
    ) -> None:
        """Store ``value`` (a dict) at ``(namespace, key)``, replacing any previous value.

        ``index=False`` skips semantic indexing, a list of paths overrides the
        configured fields; ``ttl`` is in minutes (``None``: never expire).
        """
        self.batch([self._put_op(namespace, key, value, index, ttl)])

    def delete(self, namespace: tuple[str, ...], key: str) -> None:
        """Delete the item at ``(namespace, key)`` (no error if it does not exist)."""
        self.batch([PutOp(_ns(namespace), key, None)])

    def search(
        self,
        namespace_prefix: tuple[str, ...],
        /,
        *,
        query: str | None = None,
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        refresh_ttl: bool | None = None,
    ) -> list[SearchItem]:
        """Items under ``namespace_prefix`` matching ``filter``.

        With ``query`` and an index, ranked by similarity (best first); otherwise
        newest ``updated_at`` first.
        """
        op = self._search_op(namespace_prefix, query, filter, limit, offset, refresh_ttl)
        return self.batch([op])[0]  # type: ignore[return-value]

    def list_namespaces(
        self,
        *,
        prefix: NamespacePath | None = None,
        suffix: NamespacePath | None = None,
        max_depth: int | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[tuple[str, ...]]:
        """Sorted namespaces holding items, filtered by ``prefix``/``suffix`` patterns
        (``"*"`` matches one label) and truncated to ``max_depth`` labels."""
        op = ListNamespacesOp(_match_conditions(prefix, suffix), max_depth, limit, offset)
        return self.batch([op])[0]  # type: ignore[return-value]

    # -- async API -------------------------------------------------------------

    async def aget(
        self, namespace: tuple[str, ...], key: str, *, refresh_ttl: bool | None = None
    ) -> Item | None:
        """Async twin of :meth:`get`."""
        op = GetOp(_ns(namespace), key, self._refresh(refresh_ttl))
        return await self._arun(op)

    async def aput(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: Mapping[str, Any],
        index: Literal[False] | list[str] | None = None,
        *,
        ttl: float | NotProvided | None = NOT_PROVIDED,
    ) -> None:
        """Async twin of :meth:`put`."""
        await self._arun(self._put_op(namespace, key, value, index, ttl))

    async def adelete(self, namespace: tuple[str, ...], key: str) -> None:
        """Async twin of :meth:`delete`."""
        await self._arun(PutOp(_ns(namespace), key, None))

    async def asearch(
        self,
        namespace_prefix: tuple[str, ...],
        /,
        *,
        query: str | None = None,
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        refresh_ttl: bool | None = None,
    ) -> list[SearchItem]:
        """Async twin of :meth:`search`."""
        op = self._search_op(namespace_prefix, query, filter, limit, offset, refresh_ttl)
        return await self._arun(op)

    async def alist_namespaces(
        self,
        *,
        prefix: NamespacePath | None = None,
        suffix: NamespacePath | None = None,
        max_depth: int | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[tuple[str, ...]]:
        """Async twin of :meth:`list_namespaces`."""
        op = ListNamespacesOp(_match_conditions(prefix, suffix), max_depth, limit, offset)
        return await self._arun(op)
