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
  16-byte ``bin`` (a reference to the items store), ``[type, bytes]`` (an element
  kept inline, serialized on its own) or, from format 2, ``[hash, keys, role]``: a
  plain message dict (``{"role": ..., "content": ..., "id": ...}``, all strings)
  stored as a reference to the message it becomes in a ``messages`` channel, and
  rebuilt from that message's ``content`` and ``id``, the ``role`` string and the
  dict's ``keys`` in order (so a chat message a node or the input wrote and the same
  message in the channel share one item);
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
FORMAT = 2
"""Newest version of the interned encoding (format 2 adds message-dict references);
values without such a reference are still written as format 1."""
OLDEST_FORMAT = 1
"""Oldest version of the interned encoding this release reads."""
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
Shape = list[Any]
"""``[keys, role]`` of a message dict stored as a reference to its message."""
_CONTENT_AND_ID = frozenset(("content", "id"))


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

    def _element(self, channel: str, element: Any, memo: Memo) -> Element:
        """``element`` serialized, its hash when it is large enough to intern, and the
        shape of a message dict stored as its message (see :func:`message_shape`).

        ``memo`` (one per :meth:`dump` call, keyed by ``id``: every element is alive in
        the value being dumped) serializes an object that the value holds several
        times only once."""
        found = memo.get(id(element))
        if found is None:
            shaped = message_shape(element) if type(element) is dict else None
            typed = dump_channel_value(
                self._owner.serde, channel, element if shaped is None else shaped[0]
            )
            large = len(typed[1]) >= self.threshold
            if shaped is not None and not large:  # keep the dict itself inline
                shaped = None
                typed = dump_channel_value(self._owner.serde, channel, element)
            found = (
                self.keep(typed, element if shaped is None else shaped[0]) if large else typed,
                item_hash(typed) if large else None,
                None if shaped is None else shaped[1],
            )
            memo[id(element)] = found
        return found

    def keep(self, typed: Typed, element: Any) -> Any:
        """What goes to the items store for the large ``element`` serialized as
        ``typed``: ``typed`` itself. A saver may override it to keep an equivalent,
        smaller form (the in-memory saver's shares message text with the live
        message); its reads must give back ``typed`` exactly (the hash is checked).

        Called as soon as ``element`` is serialized, so the full bytes are freed at
        once rather than held until the whole value is dumped."""
        return typed

    def _mostly_small(self, channel: str, value: list[Any], memo: Memo) -> bool:
        """Whether ``value`` is a long list of small elements (numbers, short strings),
        judged from a few samples: such a list is stored whole, with no work per
        element."""
        n = len(value)
        if n <= SHORT_LIST:
            return False
        stride = n // SAMPLES
        samples = [self._element(channel, value[i * stride], memo) for i in range(SAMPLES)]
        if any(key is not None for _, key, _ in samples):
            return False  # a large element (what ``keep`` made of it may be shorter)
        size = sum(len(typed[1]) for typed, _, _ in samples)
        return size * 8 < SAMPLES * self.threshold

    def _elements(
        self,
        channel: str,
        value: list[Any],
        items: dict[bytes, Typed],
        memo: Memo,
    ) -> tuple[list[Any], int]:
        """The encoded elements and the format they need (0: nothing interned)."""
        out: list[Any] = []
        fmt = 0
        for element in value:
            typed, key, shape = self._element(channel, element, memo)
            if key is None:
                out.append([typed[0], typed[1]])
                continue
            items[key] = typed
            if shape is None:
                out.append(key)
                fmt = max(fmt, 1)
            else:
                out.append([key, *shape])
                fmt = 2
        return out, fmt

    def dump(self, channel: str, value: Any, items: dict[bytes, Typed]) -> Typed:
        """Serialize ``value`` (of channel ``channel``); the items it refers to are
        added to ``items`` (hash -> typed), which the caller stores with the value in
        one transaction. A value with nothing to intern is ``serde``'s own encoding."""
        tp = type(value)
        memo: Memo = {}
        if tp is list and value:
            if not self._mostly_small(channel, value, memo):
                found: dict[bytes, Typed] = {}
                elements, fmt = self._elements(channel, value, found, memo)
                if fmt:
                    items.update(found)
                    import ormsgpack

                    return INTERNED_TYPE, ormsgpack.packb([fmt, LIST, elements])
        elif tp is dict and value and all(type(k) is str for k in value):
            if any(type(v) is list and v for v in value.values()):
                found = {}
                entries: list[Any] = []
                fmt = 0
                for key, entry in value.items():
                    if type(entry) is list and not self._mostly_small(channel, entry, memo):
                        elements, entry_fmt = self._elements(channel, entry, found, memo)
                        fmt = max(fmt, entry_fmt)
                        entries.append([key, 1, elements])
                    else:
                        typed = dump_channel_value(self._owner.serde, channel, entry)
                        entries.append([key, 0, [typed[0], typed[1]]])
                if fmt:
                    items.update(found)
                    import ormsgpack

                    return INTERNED_TYPE, ormsgpack.packb([fmt, DICT, entries])
        return dump_channel_value(self._owner.serde, channel, value)


Memo = dict[int, "Element"]
Element = tuple[Any, bytes | None, Shape | None]
"""An element serialized (as :meth:`Interner.keep` keeps it, if interned), its hash if
interned, its message-dict shape if any."""


def message_shape(element: dict[Any, Any]) -> tuple[Any, Shape] | None:
    """``(message, [keys, role])`` when the dict ``element`` is a plain chat message
    (keys ``role`` or ``type``, ``content`` and ``id``, all ``str``) that
    :func:`rebuild_message_dict` gives back exactly from the message it converts to;
    otherwise ``None``."""
    keys = list(element)
    role_key = "role" if "role" in element else "type"
    if len(keys) != 3 or {*keys} - {role_key} != _CONTENT_AND_ID:
        return None
    if any(type(k) is not str or type(v) is not str for k, v in element.items()):
        return None
    from stategraph.messages import _convert_one

    try:
        message = _convert_one(element)
    except (TypeError, ValueError):
        return None
    shape: Shape = [keys, element[role_key]]
    if rebuild_message_dict(message, shape) != element:
        return None
    return message, shape


def rebuild_message_dict(message: Any, shape: Shape) -> dict[str, Any]:
    """The message dict of ``shape`` (``[keys, role]``) whose message is ``message``."""
    keys, role = shape
    return {k: role if k in ("role", "type") else getattr(message, k, None) for k in keys}


def unpack_header(
    blob: bytes, size: int, fmt: int, kind: str, stored_in: str, oldest: int | None = None
) -> list[Any]:
    """``blob`` read as a msgpack list of ``size`` items starting with format ``fmt``
    (or any from ``oldest`` to ``fmt``) (the layout of interned and of sealed values).
    Raises
    :class:`~stategraph.checkpoint.serde.base.DeserializationError` naming ``kind``
    for a corrupt blob, and ``stored_in`` and the format for one of another format."""
    import ormsgpack

    try:
        data: list[Any] = ormsgpack.unpackb(blob)
    except (ValueError, TypeError) as exc:  # ormsgpack's decode error is a ValueError
        raise DeserializationError(f"A {kind} is corrupt ({exc}).") from exc
    low = fmt if oldest is None else oldest
    if (
        type(data) is not list
        or len(data) != size
        or type(data[0]) is not int
        or not low <= data[0] <= fmt
    ):
        version = data[0] if type(data) is list and data else "?"
        raise DeserializationError(
            f"A stored value {stored_in} {version!r}, which this release cannot "
            f"read (it reads format {fmt}): upgrade stategraph."
        )
    return data


def _check(blob: bytes) -> list[Any]:
    return unpack_header(
        blob, 3, FORMAT, "stored interned value", "uses interned format", OLDEST_FORMAT
    )


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


def _ref(e: Any) -> bytes | None:
    """The item hash an encoded element refers to, if any."""
    if type(e) is bytes:
        return e
    if type(e) is list and len(e) == 3 and type(e[0]) is bytes:
        return e[0]
    return None


def _refs_of(data: list[Any]) -> list[bytes]:
    if data[1] == LIST:
        payloads = [data[2]]
    else:
        payloads = [payload for _, is_list, payload in data[2] if is_list]
    return [h for payload in payloads for e in payload if (h := _ref(e)) is not None]


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
        key = _ref(e)
        if key is None:
            return self.serde.loads_typed((e[0], e[1]))
        typed = self._items.get(key)
        if typed is None:
            self._load_items((key,))
            typed = self._items.get(key)
            if typed is None:
                raise DeserializationError(
                    f"Thread '{self.thread_id}', channel '{channel}': the stored item "
                    f"{key.hex()} a value refers to is missing (checkpoint data is "
                    "incomplete)."
                )
        value = self.serde.loads_typed(typed)
        return value if key is e else rebuild_message_dict(value, e[1:])

    def _elements(self, payload: list[Any], channel: str) -> list[Any]:
        missing = [h for e in payload if (h := _ref(e)) is not None and h not in self._items]
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
