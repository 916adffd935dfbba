"""Bounds the decoder enforces on hostile payloads, so loading stays linear and safe.

* Depth: every extension payload is unpacked by a nested ``ormsgpack.unpackb`` call,
  and each of those may nest up to ~1,000 arrays/maps of its own. The decoder keeps the
  sum along the current chain of extensions (:data:`MAX_EXT_DEPTH` levels, and
  :data:`NATIVE_BUDGET` container levels counted by :func:`native_depth`) under a
  bound that fits the C stack whatever ``sys.setrecursionlimit`` says.
* Hash collisions: sets and dicts rebuilt by the decoder refuse more than
  :data:`MAX_COLLISIONS` distinct items sharing one hash (big integers can be chosen
  to collide, which makes building the container quadratic).
* Regexes: only the flags that change matching are accepted (never ``re.DEBUG``, which
  prints at load time) and the pattern text is at most :data:`MAX_PATTERN` characters.
  Compiling is what costs (``IGNORECASE`` over a wide character class folds the case
  of every code point in it: 809 bytes could take seconds), so each payload has a
  compile budget (:class:`PatternBudget`, :data:`PATTERN_BUDGET_US`): the cost of a
  pattern is estimated from its parse tree before it is compiled, and a payload whose
  patterns would exceed the budget is refused with a :class:`DeserializationError`.
* JSON payloads: nesting deeper than :data:`MAX_JSON_DEPTH` is refused before parsing.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

from stategraph.checkpoint.serde.base import DeserializationError

__all__ = [
    "MAX_EXT_DEPTH",
    "NATIVE_BUDGET",
    "EXT_COST",
    "MAX_COLLISIONS",
    "MAX_PATTERN",
    "PATTERN_FLAGS",
    "MAX_JSON_DEPTH",
    "native_depth",
    "check_collisions",
    "check_pattern",
    "PATTERN_BUDGET_US",
    "PatternBudget",
    "check_json_depth",
]

MAX_EXT_DEPTH = 256
"""Extensions nested in extensions (the encoder writes at most ~250 at the default
recursion limit)."""
NATIVE_BUDGET = 8000
"""Container levels allowed along one chain of extensions (arrays and maps count one,
an extension :data:`EXT_COST`): about 4 MB of C stack."""
EXT_COST = 8
"""What one extension level costs in :data:`NATIVE_BUDGET` (its Python frames)."""
MAX_COLLISIONS = 64
"""Distinct items of one set or dict allowed to share a hash value."""
MAX_PATTERN = 65536
"""Characters (or bytes) of a stored regular expression."""
PATTERN_FLAGS = int(re.IGNORECASE | re.MULTILINE | re.DOTALL | re.VERBOSE | re.ASCII | re.UNICODE)
"""Flags a stored regular expression may carry (``re.LOCALE`` too, for bytes patterns)."""
MAX_JSON_DEPTH = 512
"""Nesting of a ``"json"`` payload."""
PATTERN_BUDGET_US = 50_000
"""Estimated microseconds of regex compiling allowed per loaded payload (all its
patterns together): measured costs stay well under 100 ms."""

# msgpack header byte -> (kind, length of the size field); kinds: "a" array, "m" map,
# "s" skip N bytes, "x" extension with N-byte size, "f" fixed-size extension
_FIXED: dict[int, int] = {
    0xC0: 0, 0xC2: 0, 0xC3: 0, 0xCA: 4, 0xCB: 8, 0xCC: 1, 0xCD: 2, 0xCE: 4, 0xCF: 8,
    0xD0: 1, 0xD1: 2, 0xD2: 4, 0xD3: 8,
}  # fmt: skip
_SIZED: dict[int, int] = {0xC4: 1, 0xC5: 2, 0xC6: 4, 0xD9: 1, 0xDA: 2, 0xDB: 4}
_EXT_SIZED: dict[int, int] = {0xC7: 1, 0xC8: 2, 0xC9: 4}
_EXT_FIXED: dict[int, int] = {0xD4: 1, 0xD5: 2, 0xD6: 4, 0xD7: 8, 0xD8: 16}


def native_depth(data: bytes | bytearray | memoryview, stop: int) -> int:
    """The deepest array/map nesting of msgpack ``data`` (extension bodies not entered).

    Stops early, returning a value above ``stop``, once the depth exceeds ``stop``.
    Runs in time linear in ``len(data)``; malformed data returns what was seen so far
    (the unpacker reports the error itself).
    """
    pos = 0
    end = len(data)
    depth = 0
    deepest = 0
    pending: list[int] = []  # items still expected by each open container
    while pos < end:
        byte = data[pos]
        pos += 1
        opened = 0
        if byte <= 0x7F or byte >= 0xE0:
            pass
        elif 0x80 <= byte <= 0x8F:
            opened = 2 * (byte & 0x0F)
        elif 0x90 <= byte <= 0x9F:
            opened = byte & 0x0F
        elif 0xA0 <= byte <= 0xBF:
            pos += byte & 0x1F
        elif byte in _FIXED:
            pos += _FIXED[byte]
        elif byte in _SIZED or byte in _EXT_SIZED:
            width = _SIZED.get(byte) or _EXT_SIZED[byte]
            size = int.from_bytes(data[pos : pos + width], "big")
            pos += width + size + (1 if byte in _EXT_SIZED else 0)
        elif byte in _EXT_FIXED:
            pos += 1 + _EXT_FIXED[byte]
        elif byte in (0xDC, 0xDD, 0xDE, 0xDF):
            width = 2 if byte in (0xDC, 0xDE) else 4
            count = int.from_bytes(data[pos : pos + width], "big")
            pos += width
            opened = count * (2 if byte >= 0xDE else 1)
        else:
            return deepest  # 0xC1: never used; the unpacker rejects it
        # one item of the innermost open container is complete (or has just opened)
        if pending:
            pending[-1] -= 1
        if opened:
            pending.append(opened)
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > stop:
                    return deepest
        while pending and pending[-1] == 0:
            pending.pop()
            depth -= 1
    return deepest


def check_collisions(items: Iterable[Any], what: str) -> None:
    """Raise :class:`DeserializationError` if too many distinct ``items`` share a hash.

    ``items`` must be hashable. The count runs on the hash values (plain ints, which
    do not collide with each other), so it is linear whatever the items are.
    """
    hashes = [hash(item) for item in items]
    if len(hashes) <= MAX_COLLISIONS:
        return
    counts = Counter(hashes)
    value, count = counts.most_common(1)[0]
    if count > MAX_COLLISIONS:
        raise DeserializationError(
            f"Refusing to load a {what} of {len(hashes)} items where {count} share the hash "
            f"value {value}: building it would take quadratic time (a hostile payload)."
        )


def check_pattern(pattern: Any, flags: Any) -> None:
    """Validate a stored regular expression before it is compiled."""
    if not isinstance(pattern, (str, bytes)) or type(flags) is not int:
        raise DeserializationError(
            f"Malformed regular expression payload: expected a str or bytes pattern and "
            f"int flags, got {type(pattern).__name__} and {type(flags).__name__}."
        )
    allowed = PATTERN_FLAGS | (int(re.LOCALE) if isinstance(pattern, bytes) else 0)
    if flags & ~allowed:
        raise DeserializationError(
            f"Refusing to load a regular expression with flags {flags:#x}: only IGNORECASE, "
            f"MULTILINE, DOTALL, VERBOSE, ASCII, UNICODE (and LOCALE for bytes) are "
            f"accepted (re.DEBUG would print while loading)."
        )
    if len(pattern) > MAX_PATTERN:
        raise DeserializationError(
            f"Refusing to load a regular expression of {len(pattern)} characters: at most "
            f"{MAX_PATTERN} are accepted."
        )


# estimated cost model (microseconds, CPython 3.10-3.13, measured): parsing and
# compiling cost about _PER_CHAR per character; a character class costs per range
# item a fixed part plus a part per code point (case folding makes both larger)
_PER_CHAR = 3.0
_RANGE_FOLD = (300.0, 0.25)
_RANGE_PLAIN = (20.0, 0.08)
_WIDTH_CAP = 0x10000


def _parser() -> Any:
    try:
        from re import _parser as parser  # type: ignore[attr-defined]
    except ImportError:  # Python 3.10
        import sre_parse as parser
    return parser


def _tree_cost(tree: Any, fold: bool, constants: Any) -> float:
    """Estimated compile cost of the character classes of a parsed pattern."""
    cost = 0.0
    stack = [(tree, fold)]
    subpattern = constants.SUBPATTERN
    while stack:
        items, folded = stack.pop()
        for op, av in items:
            if op is constants.IN:
                for item_op, item_av in av:
                    if item_op is constants.RANGE:
                        width = min(item_av[1] - item_av[0] + 1, _WIDTH_CAP)
                        base, per = _RANGE_FOLD if folded else _RANGE_PLAIN
                        cost += base + per * width
            elif op is subpattern:
                add = av[1] or 0
                stack.append((av[3], folded or bool(add & re.IGNORECASE)))
            elif op is constants.BRANCH:
                stack.extend((p, folded) for p in av[1])
            elif op is constants.GROUPREF_EXISTS:
                stack.extend((p, folded) for p in av[1:] if p is not None)
            elif isinstance(av, tuple) and av and hasattr(av[-1], "data"):
                stack.append((av[-1], folded))  # repeats, assertions
            elif hasattr(av, "data"):
                stack.append((av, folded))  # atomic groups
    return cost


class PatternBudget:
    """The regex compile budget of one payload: :meth:`compile` checks a stored
    pattern (:func:`check_pattern`), estimates what compiling it costs and refuses it
    once the payload's patterns together would exceed :data:`PATTERN_BUDGET_US`."""

    __slots__ = ("left",)

    def __init__(self, budget_us: float = PATTERN_BUDGET_US) -> None:
        self.left = float(budget_us)

    def _charge(self, cost: float, pattern: str | bytes) -> None:
        self.left -= cost
        if self.left < 0:
            raise DeserializationError(
                f"Refusing to load a regular expression of {len(pattern)} characters: "
                f"compiling the payload's patterns would take more than "
                f"{PATTERN_BUDGET_US // 1000} ms (IGNORECASE over wide character classes, "
                f"or too many or too long patterns: a hostile or corrupt payload)."
            )

    def compile(self, pattern: Any, flags: Any = 0) -> re.Pattern[Any]:
        """``re.compile(pattern, flags)`` after the checks and within the budget."""
        check_pattern(pattern, flags)
        self._charge(_PER_CHAR * len(pattern), pattern)
        if isinstance(pattern, str) and not flags & re.ASCII:
            parser = _parser()
            try:
                tree = parser.parse(pattern, flags)
            except (re.error, RecursionError, OverflowError, ValueError) as exc:
                raise DeserializationError(f"Malformed regular expression payload: {exc}") from None
            fold = bool(tree.state.flags & re.IGNORECASE)
            self._charge(_tree_cost(tree, fold, parser), pattern)
        try:
            return re.compile(pattern, flags)
        except (re.error, RecursionError, OverflowError, ValueError) as exc:
            raise DeserializationError(f"Malformed regular expression payload: {exc}") from None


_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_JSON_BRACKETS = bytes(set(range(256)) - set(b"[]{}"))


def check_json_depth(payload: bytes) -> None:
    """Refuse JSON nested deeper than :data:`MAX_JSON_DEPTH` (linear-time pre-scan)."""
    if payload.count(b"[") + payload.count(b"{") <= MAX_JSON_DEPTH:
        return
    brackets = _JSON_STRING.sub(b"", payload).translate(None, _JSON_BRACKETS)
    depth = 0
    for byte in brackets:
        depth += 1 if byte in (0x5B, 0x7B) else -1
        if depth > MAX_JSON_DEPTH:
            raise DeserializationError(
                f"Refusing to load a 'json' payload nested deeper than {MAX_JSON_DEPTH} "
                f"levels (a hostile or corrupt payload)."
            )
