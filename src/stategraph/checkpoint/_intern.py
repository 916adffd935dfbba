"""Content-addressed list items: each large item of a list value stored once per thread.

A chat thread's messages show up in several stored values: the input checkpoint's
``__start__`` value (``{"messages": [msg]}``), the ``__start__`` task's pending write
(``messages = [msg]``), the ``messages`` delta segment that appends it and, every
:data:`~stategraph.checkpoint._list_delta.SPAN`-th version, the higher-level segments
that repeat the last steps' items. Interning stores each element of such a list whose
serialized form is at least :data:`THRESHOLD` bytes once, in the saver's *items* store
keyed ``(thread_id, checkpoint_ns, hash)``, and puts its 16-byte hash in its place.

The hash is ``xxh3_128`` over the item's serialized ``(type, bytes)``, produced by the
saver's own ``serde.dumps_typed``: with an ``EncryptedSerializer`` the items are
stored encrypted (identical items then rarely share a row: the cipher is randomised;
nothing is ever stored in clear).

On-disk form: a value (a channel blob, a pending write, or the items of a delta
segment) whose type is :data:`INTERNED_TYPE` has as bytes the msgpack array
``[FORMAT, kind, payload]``:

* ``kind`` :data:`LIST` -- ``payload`` is the list's elements in order, each either a
  16-byte ``bin`` (a reference to the items store) or ``[type, bytes]`` (an element
  kept inline, serialized on its own);
* ``kind`` :data:`DICT` -- a ``dict`` with ``str`` keys (the ``__start__`` input map):
  ``payload`` is ``[[key, 1, elements], ...]`` for the entries whose value is a list
  (``elements`` as above) and ``[key, 0, [type, bytes]]`` for the others.

Any other type is a value stored whole by ``serde``, so rows written before interning
(or with it turned off) read exactly as before. A reference whose item is missing
raises :class:`~stategraph.checkpoint.serde.base.DeserializationError` naming the
thread, channel and hash: never a wrong value.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from stategraph.checkpoint._list_delta import DELTA_TYPE
from stategraph.checkpoint.base import dump_channel_value
from stategraph.checkpoint.serde.base import DeserializationError

__all__ = [
    "DICT",
    "FORMAT",
    "INTERNED_TYPE",
    "LIST",
    "THRESHOLD",
    "Interner",
    "Resolver",
    "item_hash",
    "refs",
]

INTERNED_TYPE = "sg-interned"
"""Type tag of a value whose large list elements live in the items store."""
FORMAT = 1
"""Version of the interned encoding written (and read) by this release."""
LIST = 0
"""Kind of an interned list."""
DICT = 1
"""Kind of an interned ``dict`` whose entries include lists."""
THRESHOLD = 128
"""Elements whose serialized bytes reach this size are interned; smaller ones stay
inline (a reference costs 18 bytes)."""
SHORT_LIST = 16
"""Lists up to this length are always examined element by element. In a longer list
:data:`SAMPLES` evenly spaced elements are serialized first: when they average under
``THRESHOLD / 8`` bytes (a list of numbers or short strings) the list is stored whole,
without per-element work."""
SAMPLES = 8
"""Elements sampled to judge a long list (see :data:`SHORT_LIST`)."""

Typed = tuple[str, bytes]


def item_hash(typed: Typed) -> bytes:
    """The 16-byte key of a serialized item: ``xxh3_128`` over its type and bytes."""
    import xxhash

    h = xxhash.xxh3_128(typed[0].encode())
    h.update(b"\x00")
    h.update(typed[1])
    return h.digest()


class Interner:
    """Serializes values for one saver, interning the large elements of lists.

    ``owner`` is the saver: its ``serde`` is read on every call (so a saver whose
    ``serde`` is replaced keeps working); ``threshold`` is the element size from which
    elements are interned.
    """

    def __init__(self, owner: Any, threshold: int = THRESHOLD) -> None:
        self._owner = owner
        self.threshold = threshold

    def _element(
        self, channel: str, element: Any, memo: dict[int, tuple[Typed, bytes | None]]
    ) -> tuple[Typed, bytes | None]:
        """``element`` serialized, and its hash when it is large enough to intern.

        ``memo`` (one per :meth:`dump` call, keyed by ``id``: every element is alive in
        the value being dumped) serializes an object that the value holds several
        times only once."""
        found = memo.get(id(element))
        if found is None:
            typed = dump_channel_value(self._owner.serde, channel, element)
            found = (typed, item_hash(typed) if len(typed[1]) >= self.threshold else None)
            memo[id(element)] = found
        return found

    def _mostly_small(
        self, channel: str, value: list[Any], memo: dict[int, tuple[Typed, bytes | None]]
    ) -> bool:
        """Whether ``value`` is a long list of small elements (numbers, short strings),
        judged from a few samples: such a list is stored whole, with no work per
        element."""
        n = len(value)
        if n <= SHORT_LIST:
            return False
        stride = n // SAMPLES
        size = sum(
            len(self._element(channel, value[i * stride], memo)[0][1]) for i in range(SAMPLES)
        )
        return size * 8 < SAMPLES * self.threshold

    def _elements(
        self,
        channel: str,
        value: list[Any],
        items: dict[bytes, Typed],
        memo: dict[int, tuple[Typed, bytes | None]],
    ) -> tuple[list[Any], bool]:
        out: list[Any] = []
        interned = False
        for element in value:
            typed, key = self._element(channel, element, memo)
            if key is not None:
                items[key] = typed
                out.append(key)
                interned = True
            else:
                out.append([typed[0], typed[1]])
        return out, interned

    def dump(self, channel: str, value: Any, items: dict[bytes, Typed]) -> Typed:
        """Serialize ``value`` (of channel ``channel``); the items it refers to are
        added to ``items`` (hash -> typed), which the caller stores with the value in
        one transaction. A value with nothing to intern is ``serde``'s own encoding."""
        tp = type(value)
        memo: dict[int, tuple[Typed, bytes | None]] = {}
        if tp is list and value:
            if not self._mostly_small(channel, value, memo):
                found: dict[bytes, Typed] = {}
                elements, interned = self._elements(channel, value, found, memo)
                if interned:
                    items.update(found)
                    import ormsgpack

                    return INTERNED_TYPE, ormsgpack.packb([FORMAT, LIST, elements])
        elif tp is dict and value and all(type(k) is str for k in value):
            if any(type(v) is list and v for v in value.values()):
                found = {}
                entries: list[Any] = []
                any_interned = False
                for key, entry in value.items():
                    if type(entry) is list and not self._mostly_small(channel, entry, memo):
                        elements, interned = self._elements(channel, entry, found, memo)
                        any_interned = any_interned or interned
                        entries.append([key, 1, elements])
                    else:
                        typed = dump_channel_value(self._owner.serde, channel, entry)
                        entries.append([key, 0, [typed[0], typed[1]]])
                if any_interned:
                    items.update(found)
                    import ormsgpack

                    return INTERNED_TYPE, ormsgpack.packb([FORMAT, DICT, entries])
        return dump_channel_value(self._owner.serde, channel, value)


def unpack_header(blob: bytes, size: int, fmt: int, kind: str, stored_in: str) -> list[Any]:
    """``blob`` read as a msgpack list of ``size`` items starting with format ``fmt``
    (the layout of interned and of sealed values). Raises
    :class:`~stategraph.checkpoint.serde.base.DeserializationError` naming ``kind``
    for a corrupt blob, and ``stored_in`` and the format for one of another format."""
    import ormsgpack

    try:
        data: list[Any] = ormsgpack.unpackb(blob)
    except (ValueError, TypeError) as exc:  # ormsgpack's decode error is a ValueError
        raise DeserializationError(f"A {kind} is corrupt ({exc}).") from exc
    if type(data) is not list or len(data) != size or data[0] != fmt:
        version = data[0] if type(data) is list and data else "?"
        raise DeserializationError(
            f"A stored value {stored_in} {version!r}, which this release cannot "
            f"read (it reads format {fmt}): upgrade stategraph."
        )
    return data


def _check(blob: bytes) -> list[Any]:
    return unpack_header(blob, 3, FORMAT, "stored interned value", "uses interned format")


def refs(typed: Typed | None) -> Iterable[bytes]:
    """The item hashes a stored value refers to (none for other types); a delta
    whose items are interned refers to theirs."""
    if typed is None or typed[1] is None:
        return ()
    kind = typed[0]
    try:
        if kind == INTERNED_TYPE:
            return _refs_of(_check(typed[1]))
        if kind == DELTA_TYPE:
            import ormsgpack

            header = ormsgpack.unpackb(typed[1])
            if type(header) is list and len(header) >= 10 and header[8] == INTERNED_TYPE:
                return _refs_of(_check(header[9]))
    except DeserializationError:
        raise
    except (ValueError, TypeError, IndexError, KeyError) as exc:
        raise DeserializationError(f"A stored value is malformed ({exc!r}).") from exc
    return ()


def _refs_of(data: list[Any]) -> list[bytes]:
    if data[1] == LIST:
        return [e for e in data[2] if type(e) is bytes]
    out: list[bytes] = []
    for _, is_list, payload in data[2]:
        if is_list:
            out.extend(e for e in payload if type(e) is bytes)
    return out


class Resolver:
    """Decodes stored values of one ``(thread_id, checkpoint_ns)`` for a saver,
    fetching the items they refer to.

    Register the values a read may decode with :meth:`add`; the first value that
    needs an item triggers one ``fetch(hashes)`` for the references of every value
    registered so far (one query per read); a reference found in none of them is
    fetched on its own. ``fetch`` returns ``{hash: (type, bytes)}`` for the hashes it
    found.
    """

    def __init__(
        self,
        serde: Any,
        thread_id: str,
        fetch: Callable[[list[bytes]], Mapping[bytes, Typed]],
    ) -> None:
        self.serde = serde
        self.thread_id = thread_id
        self._fetch = fetch
        self._pending: list[Typed] = []
        self._items: dict[bytes, Typed] = {}
        self.queries = 0
        """How many times ``fetch`` was called (for tests)."""

    def add(self, typed: Typed | None) -> None:
        """Register a stored value the read may decode (cheap: parsed only if an item
        is needed)."""
        if typed is not None and typed[0] in _REFERRING:
            self._pending.append(typed)

    def _load_items(self, wanted: Iterable[bytes]) -> None:
        need = {h for h in wanted if h not in self._items}
        for typed in self._pending:
            need.update(h for h in refs(typed) if h not in self._items)
        self._pending.clear()
        if need:
            self.queries += 1
            for key, typed in self._fetch(sorted(need)).items():
                if item_hash(typed) != key:
                    raise DeserializationError(
                        f"Thread '{self.thread_id}': the stored item {key.hex()} is corrupt "
                        "(its bytes do not match its hash)."
                    )
                self._items[key] = typed

    def _element(self, e: Any, channel: str) -> Any:
        if type(e) is bytes:
            typed = self._items.get(e)
            if typed is None:
                self._load_items((e,))
                typed = self._items.get(e)
                if typed is None:
                    raise DeserializationError(
                        f"Thread '{self.thread_id}', channel '{channel}': the stored item "
                        f"{e.hex()} a value refers to is missing (checkpoint data is "
                        "incomplete)."
                    )
            return self.serde.loads_typed(typed)
        return self.serde.loads_typed((e[0], e[1]))

    def _elements(self, payload: list[Any], channel: str) -> list[Any]:
        missing = [e for e in payload if type(e) is bytes and e not in self._items]
        if missing:
            self._load_items(missing)
        return [self._element(e, channel) for e in payload]

    def loads(self, typed: Typed, channel: str = "?") -> Any:
        """The value stored as ``typed`` (any type ``serde`` reads, or interned)."""
        if typed[0] != INTERNED_TYPE:
            return self.serde.loads_typed(typed)
        try:
            data = _check(typed[1])
            return self._decode(data, channel)
        except DeserializationError as exc:
            if str(exc).startswith("Thread '"):
                raise
            raise DeserializationError(
                f"Thread '{self.thread_id}', channel '{channel}': {exc}"
            ) from exc
        except (ValueError, TypeError, IndexError, KeyError) as exc:
            raise DeserializationError(
                f"Thread '{self.thread_id}', channel '{channel}': a stored interned value "
                f"is malformed ({exc!r})."
            ) from exc

    def _decode(self, data: list[Any], channel: str) -> Any:
        if data[1] == LIST:
            return self._elements(data[2], channel)
        if data[1] == DICT:
            out: dict[str, Any] = {}
            for key, is_list, payload in data[2]:
                out[key] = (
                    self._elements(payload, channel)
                    if is_list
                    else self.serde.loads_typed((payload[0], payload[1]))
                )
            return out
        raise DeserializationError(
            f"Thread '{self.thread_id}', channel '{channel}': unknown interned value kind "
            f"{data[1]!r}."
        )

    def loader(self, channel: str) -> Callable[[Typed], Any]:
        """``loads`` bound to ``channel`` (for error messages)."""
        return lambda typed: self.loads(typed, channel)


_REFERRING = frozenset((INTERNED_TYPE, DELTA_TYPE))


def referenced(typeds: Iterable[Typed | None]) -> set[bytes]:
    """Every item hash the stored values ``typeds`` refer to (the mark of a GC)."""
    out: set[bytes] = set()
    for typed in typeds:
        out.update(refs(typed))
    return out
