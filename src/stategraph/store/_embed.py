"""Semantic index support: index config, field paths, embedders and cosine similarity.

Vectors are kept as ``array('f')`` (float32) in every store so that scores are the
same whether an item lives in memory or in SQLite. Similarity is computed in pure
Python (no numpy).
"""

from __future__ import annotations

import inspect
import json
import math
import operator
from array import array
from collections.abc import Awaitable, Callable, Sequence
from functools import lru_cache
from typing import Any, Union

from stategraph.store._arguments import check_config_keys
from stategraph.store.base import IndexConfig

__all__ = [
    "WILDCARD",
    "IndexSpec",
    "Embedder",
    "parse_index_config",
    "tokenize_path",
    "extract_texts",
    "to_vector",
    "vector_norm",
    "cosine",
    "pack_vector",
    "unpack_vector",
]


class _Wildcard:
    """Path token ``[*]``: every element of a list (or every value of a dict)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "[*]"


WILDCARD: Any = _Wildcard()
PathToken = Union[str, int, _Wildcard]

_INDEX_KEYS = frozenset({"dims", "embed", "fields"})
_INDEX_EXAMPLE = "{'dims': 1536, 'embed': fn, 'fields': ['text']}"


@lru_cache(maxsize=1024)
def tokenize_path(path: str) -> tuple[PathToken, ...]:
    """Split a field path (``"a.b"``, ``"items[*].text"``, ``"items[-1]"``, ``"$"``).

    ``"$"`` (the whole value) gives an empty tuple. Raises ``ValueError`` naming the
    path if it cannot be parsed.
    """
    if not isinstance(path, str) or not path:
        raise ValueError(f"Invalid index field path {path!r}: give a non-empty string.")
    if path == "$":
        return ()
    text = path[2:] if path.startswith("$.") else path
    tokens: list[PathToken] = []
    name: list[str] = []
    i = 0
    after_bracket = False
    while i < len(text):
        ch = text[i]
        if ch == ".":
            if name:
                tokens.append("".join(name))
                name.clear()
            elif not after_bracket:
                raise ValueError(f"Invalid index field path {path!r}: empty segment at {i}.")
            after_bracket = False
            i += 1
        elif ch == "[":
            if name:
                tokens.append("".join(name))
                name.clear()
            end = text.find("]", i)
            if end < 0:
                raise ValueError(f"Invalid index field path {path!r}: unclosed '['.")
            inner = text[i + 1 : end].strip()
            if inner == "*":
                tokens.append(WILDCARD)
            else:
                try:
                    tokens.append(int(inner))
                except ValueError:
                    raise ValueError(
                        f"Invalid index field path {path!r}: '[{inner}]' must be '[*]' "
                        f"or an integer index."
                    )
            after_bracket = True
            i = end + 1
            if i < len(text) and text[i] not in ".[":
                raise ValueError(
                    f"Invalid index field path {path!r}: expected '.' or '[' after ']'."
                )
        elif ch == "]":
            raise ValueError(f"Invalid index field path {path!r}: unmatched ']'.")
        else:
            name.append(ch)
            after_bracket = False
            i += 1
    if name:
        tokens.append("".join(name))
    elif text.endswith("."):
        raise ValueError(f"Invalid index field path {path!r}: ends with '.'.")
    return tuple(tokens)


def _walk(value: Any, tokens: tuple[PathToken, ...], pos: int, out: list[Any]) -> None:
    if pos == len(tokens):
        out.append(value)
        return
    token = tokens[pos]
    if token is WILDCARD:
        if isinstance(value, list):
            for element in value:
                _walk(element, tokens, pos + 1, out)
        elif isinstance(value, dict):
            for element in value.values():
                _walk(element, tokens, pos + 1, out)
    elif isinstance(token, int):
        if isinstance(value, list) and -len(value) <= token < len(value):
            _walk(value[token], tokens, pos + 1, out)
    elif isinstance(value, dict) and token in value:
        _walk(value[token], tokens, pos + 1, out)


def _as_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or isinstance(value, (dict, list, tuple)):
        return json.dumps(value, sort_keys=True, default=str)
    return str(value)


def extract_texts(value: Any, path: str) -> list[str]:
    """The texts found at ``path`` in ``value`` (missing or ``None`` values give none).

    Strings are taken as they are; numbers as ``str``; dicts, lists and booleans as
    JSON (keys sorted).
    """
    found: list[Any] = []
    _walk(value, tokenize_path(path), 0, found)
    return [t for t in map(_as_text, found) if t is not None]


def to_vector(raw: Any, dims: int) -> array:
    """Convert one embedding to float32, checking it has ``dims`` dimensions."""
    try:
        vec = array("f", raw)
    except TypeError:
        raise TypeError(
            f"The embedding function returned {type(raw).__name__} where a list of "
            f"{dims} floats was expected."
        )
    if len(vec) != dims:
        raise ValueError(
            f"The embedding function returned a vector of {len(vec)} dimensions, but the "
            f"index is configured with dims={dims}. Fix 'dims' in the store's index config."
        )
    return vec


def vector_norm(vec: array) -> float:
    """Euclidean norm of ``vec``."""
    return math.sqrt(sum(map(operator.mul, vec, vec)))


def cosine(query: array, query_norm: float, vec: array) -> float:
    """Cosine similarity of ``query`` (with precomputed norm) and ``vec``; 0.0 if either is zero."""
    norm = vector_norm(vec)
    if not norm or not query_norm:
        return 0.0
    return sum(map(operator.mul, query, vec)) / (query_norm * norm)


def pack_vector(vec: array) -> bytes:
    """Serialize a float32 vector to bytes (machine byte order)."""
    return vec.tobytes()


def unpack_vector(blob: bytes) -> array:
    """Inverse of :func:`pack_vector`."""
    vec = array("f")
    vec.frombytes(blob)
    return vec


def _is_async_callable(fn: Any) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 - callable objects with async __call__
    )


def _run_sync(result: Any) -> Any:
    """Resolve ``result`` if it is awaitable, by running it on a fresh event loop."""
    if not inspect.isawaitable(result):
        return result
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:

        async def _await() -> Any:
            return await result

        return asyncio.run(_await())
    if inspect.iscoroutine(result):
        result.close()
    raise RuntimeError(
        "The store's embedding function is async and cannot be awaited from a "
        "synchronous call made inside a running event loop. Use the async methods "
        "(aput, asearch, abatch) or give the store a synchronous embedding function."
    )


class Embedder:
    """Uniform sync/async access to a user's embedding function or object."""

    __slots__ = ("_adocs", "_aquery", "_docs", "_query")

    def __init__(self, embed: Any) -> None:
        self._docs: Callable[[list[str]], Any] | None = None
        self._query: Callable[[str], Any] | None = None
        self._adocs: Callable[[list[str]], Awaitable[Any]] | None = None
        self._aquery: Callable[[str], Awaitable[Any]] | None = None
        if isinstance(embed, str):
            raise ValueError(
                f"Embedding provider strings like {embed!r} are not supported: pass a "
                f"function list[str] -> list[list[float]] or an object with "
                f"embed_documents/embed_query."
            )
        if callable(getattr(embed, "embed_documents", None)):
            self._docs = embed.embed_documents
            self._query = getattr(embed, "embed_query", None)
            self._adocs = getattr(embed, "aembed_documents", None)
            self._aquery = getattr(embed, "aembed_query", None)
        elif callable(embed):
            if _is_async_callable(embed):
                self._adocs = embed
            else:
                self._docs = embed
        else:
            raise TypeError(
                f"Index 'embed' must be a function list[str] -> list[list[float]] (sync or "
                f"async) or an object with embed_documents/embed_query, got "
                f"{type(embed).__name__}."
            )

    def embed_documents(self, texts: list[str]) -> list[Any]:
        """Embed ``texts`` synchronously (an async-only embedder runs on a fresh loop)."""
        if self._docs is not None:
            return list(_run_sync(self._docs(texts)))
        assert self._adocs is not None
        return list(_run_sync(self._adocs(texts)))

    def embed_queries(self, texts: list[str]) -> list[Any]:
        """Embed search queries synchronously."""
        if self._query is not None:
            return [_run_sync(self._query(t)) for t in texts]
        if self._docs is None and self._aquery is not None:
            return [_run_sync(self._aquery(t)) for t in texts]
        return self.embed_documents(texts)

    async def aembed_documents(self, texts: list[str]) -> list[Any]:
        """Embed ``texts`` without blocking the event loop (sync embedders run in a thread)."""
        if self._adocs is not None:
            return list(await self._adocs(texts))
        import asyncio

        assert self._docs is not None
        result = await asyncio.to_thread(self._docs, texts)
        if inspect.isawaitable(result):
            result = await result
        return list(result)

    async def aembed_queries(self, texts: list[str]) -> list[Any]:
        """Embed search queries without blocking the event loop."""
        if self._aquery is not None:
            return [await self._aquery(t) for t in texts]
        if self._query is not None:
            import asyncio

            query = self._query
            return await asyncio.to_thread(lambda: [_run_sync(query(t)) for t in texts])
        return await self.aembed_documents(texts)


class IndexSpec:
    """A parsed, validated index configuration."""

    __slots__ = ("config", "dims", "embedder", "fields")

    def __init__(self, config: IndexConfig) -> None:
        self.config = config
        dims = config["dims"]
        if not isinstance(dims, int) or isinstance(dims, bool) or dims <= 0:
            raise ValueError(f"Index 'dims' must be a positive integer, got {dims!r}.")
        self.dims = dims
        fields = config.get("fields") or ["$"]
        if isinstance(fields, str) or not all(isinstance(f, str) for f in fields):
            raise TypeError(f"Index 'fields' must be a list of path strings, got {fields!r}.")
        for field in fields:
            tokenize_path(field)
        self.fields: list[str] = list(fields)
        self.embedder = Embedder(config["embed"])

    def texts_for(self, value: Any, fields: Sequence[str] | None) -> list[tuple[str, str]]:
        """``(field, text)`` pairs to embed for ``value`` (``fields`` overrides the config)."""
        pairs: list[tuple[str, str]] = []
        for field in self.fields if fields is None else fields:
            pairs.extend((field, text) for text in extract_texts(value, field))
        return pairs


def parse_index_config(index: IndexConfig | None) -> IndexSpec | None:
    """Validate a store's ``index`` argument; ``None`` means no semantic search."""
    if index is None:
        return None
    check_config_keys(index, "index", _INDEX_KEYS, _INDEX_EXAMPLE)
    for required in ("dims", "embed"):
        if required not in index:
            raise ValueError(f"Index config needs {required!r} (got keys {sorted(index)}).")
    return IndexSpec(index)
