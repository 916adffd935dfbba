"""Items and operations of the store API (re-exported by :mod:`stategraph.store.base`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal, NamedTuple, Union

__all__ = [
    "Item",
    "SearchItem",
    "GetOp",
    "PutOp",
    "SearchOp",
    "ListNamespacesOp",
    "MatchCondition",
    "NamespacePath",
    "NamespaceMatchType",
    "Op",
    "Result",
]


def _as_datetime(value: datetime | str) -> datetime:
    return datetime.fromisoformat(value) if isinstance(value, str) else value


class Item:
    """A stored document: its ``value`` with namespace, key and timestamps."""

    __slots__ = ("created_at", "key", "namespace", "updated_at", "value")

    def __init__(
        self,
        *,
        value: dict[str, Any],
        key: str,
        namespace: tuple[str, ...],
        created_at: datetime | str,
        updated_at: datetime | str,
    ) -> None:
        self.value = value
        self.key = key
        self.namespace = tuple(namespace)
        self.created_at = _as_datetime(created_at)
        self.updated_at = _as_datetime(updated_at)

    def dict(self) -> dict[str, Any]:
        """A JSON-ready dict (namespace as a list, timestamps as ISO strings)."""
        return {
            "namespace": list(self.namespace),
            "key": self.key,
            "value": self.value,
            "created_at": self.created_at.isoformat(),
            "updated_at": self.updated_at.isoformat(),
        }

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Item):
            return NotImplemented
        return (
            self.namespace == other.namespace
            and self.key == other.key
            and self.value == other.value
            and self.created_at == other.created_at
            and self.updated_at == other.updated_at
        )

    def __hash__(self) -> int:
        return hash((self.namespace, self.key))

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(namespace={self.namespace!r}, key={self.key!r}, "
            f"value={self.value!r}, created_at={self.created_at.isoformat()!r}, "
            f"updated_at={self.updated_at.isoformat()!r})"
        )


class SearchItem(Item):
    """An :class:`Item` returned by ``search``, with its relevance ``score``.

    ``score`` is the cosine similarity to the query, or ``None`` when the search had
    no query, the store has no index, or the item was stored with ``index=False``.
    """

    __slots__ = ("score",)

    def __init__(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: dict[str, Any],
        created_at: datetime | str,
        updated_at: datetime | str,
        score: float | None = None,
    ) -> None:
        super().__init__(
            value=value,
            key=key,
            namespace=namespace,
            created_at=created_at,
            updated_at=updated_at,
        )
        self.score = score

    def dict(self) -> dict[str, Any]:
        """Like :meth:`Item.dict`, plus ``score``."""
        result = super().dict()
        result["score"] = self.score
        return result

    def __repr__(self) -> str:
        return f"{super().__repr__()[:-1]}, score={self.score!r})"


NamespacePath = tuple[str, ...]
"""A namespace pattern; the label ``"*"`` matches any single label."""
NamespaceMatchType = Literal["prefix", "suffix"]
"""How a :class:`MatchCondition` path is matched against namespaces."""


class GetOp(NamedTuple):
    """Fetch the item at ``(namespace, key)``; result: :class:`Item` or ``None``."""

    namespace: tuple[str, ...]
    key: str
    refresh_ttl: bool = True


class SearchOp(NamedTuple):
    """Search items under ``namespace_prefix``; result: ``list[SearchItem]``."""

    namespace_prefix: tuple[str, ...]
    filter: dict[str, Any] | None = None
    limit: int = 10
    offset: int = 0
    query: str | None = None
    refresh_ttl: bool = True


class MatchCondition(NamedTuple):
    """A namespace pattern for :class:`ListNamespacesOp` (``"*"`` = any one label)."""

    match_type: NamespaceMatchType
    path: NamespacePath


class ListNamespacesOp(NamedTuple):
    """List namespaces holding items; result: ``list[tuple[str, ...]]`` (sorted)."""

    match_conditions: tuple[MatchCondition, ...] | None = None
    max_depth: int | None = None
    limit: int = 100
    offset: int = 0


class PutOp(NamedTuple):
    """Store ``value`` at ``(namespace, key)``, or delete it when ``value`` is ``None``.

    ``index``: ``None`` embeds the store's configured fields, ``False`` skips
    indexing, a list of paths overrides the fields for this item. ``ttl``: minutes
    until expiry, ``None`` for never. Result: ``None``.
    """

    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any] | None
    index: Literal[False] | list[str] | None = None  # type: ignore[assignment]
    ttl: float | None = None


Op = Union[GetOp, SearchOp, PutOp, ListNamespacesOp]
"""Any store operation."""
Result = Union[Item, list[Item], list[SearchItem], list[tuple[str, ...]], None]
"""Any store operation's result."""
