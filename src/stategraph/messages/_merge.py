"""Merging streamed pieces of a message: content, metadata dicts, lists, usage, JSON.

These are the rules ``chunk + chunk`` follows (the same as langchain-core's, so a
reply assembled from our chunks equals one assembled from theirs):

* strings are concatenated; content lists are merged block by block, blocks with the
  same ``index`` being merged into one;
* dicts are merged key by key: a missing or ``None`` side takes the other side's value,
  strings are concatenated (except ``id``, ``model_provider`` and ``output_version``,
  which stay as they are when equal), integers are added unless equal, nested dicts and
  lists are merged recursively;
* usage counts are added, details included;
* tool-call arguments arrive as pieces of a JSON object; :func:`parse_partial_json`
  reads the object that the pieces received so far describe.
"""

from __future__ import annotations

from typing import Any

__all__ = ["merge_content", "merge_dicts", "merge_lists", "add_usage", "parse_partial_json"]

_KEEP_WHEN_EQUAL = frozenset({"id", "output_version", "model_provider"})


def merge_content(left: Any, right: Any) -> Any:
    """Concatenate two message contents (strings and/or lists of content blocks)."""
    if isinstance(left, str):
        if isinstance(right, str):
            return left + right
        return [left, *right]
    merged = list(left)
    if isinstance(right, list):
        return merge_lists(merged, right)
    if not right:
        return merged
    if merged and isinstance(merged[-1], str):
        merged[-1] += right
    else:
        merged.append(right)
    return merged


def merge_lists(left: list[Any] | None, right: list[Any] | None) -> list[Any]:
    """Merge two lists: dict items sharing an ``index`` (and a compatible ``id``) are merged."""
    if left is None:
        return list(right or [])
    merged = list(left)
    for item in right or ():
        if isinstance(item, dict) and item.get("index") is not None:
            position = _find_indexed(merged, item)
            if position is not None:
                body = {k: v for k, v in item.items() if k != "type"}
                merged[position] = merge_dicts(merged[position], body)
                continue
        merged.append(item)
    return merged


def _find_indexed(items: list[Any], item: dict[str, Any]) -> int | None:
    index = item["index"]
    item_id = item.get("id")
    for position, existing in enumerate(items):
        if not isinstance(existing, dict) or existing.get("index") != index:
            continue
        existing_id = existing.get("id")
        if item_id is not None and existing_id is not None and existing_id != item_id:
            continue  # two calls reusing one index: keep them apart
        return position
    return None


def merge_dicts(left: dict[str, Any], right: dict[str, Any]) -> dict[str, Any]:
    """Merge ``right`` into a copy of ``left`` with the streaming rules (see module doc)."""
    merged = dict(left)
    for key, value in right.items():
        if key not in merged or (value is not None and merged[key] is None):
            merged[key] = value
            continue
        current = merged[key]
        if value is None or (current == value and (key in _KEEP_WHEN_EQUAL or key == "index")):
            continue
        if type(current) is not type(value):
            raise TypeError(
                f"Cannot merge message field {key!r}: one chunk has a "
                f"{type(current).__name__} ({current!r:.60}) and the other a "
                f"{type(value).__name__} ({value!r:.60}). Chunks of one reply must carry "
                "the same type for each key."
            )
        if isinstance(value, str):
            merged[key] = current + value
        elif isinstance(value, dict):
            merged[key] = merge_dicts(current, value)
        elif isinstance(value, list):
            merged[key] = merge_lists(current, value)
        elif current == value:
            continue
        elif isinstance(value, int) and not isinstance(value, bool):
            merged[key] = current + value
        else:
            raise TypeError(
                f"Cannot merge message field {key!r}: the chunks carry different "
                f"{type(value).__name__} values ({current!r} and {value!r}); only strings, "
                "integers, lists and dicts can be merged."
            )
    return merged


def add_usage(left: Any, right: Any) -> Any:
    """Add two ``usage_metadata`` dicts (either may be ``None``), details included."""
    if not left:
        return dict(right) if right else right
    if not right:
        return dict(left)
    return _add_counts(left, right)


def _add_counts(left: dict[str, Any], right: dict[str, Any]) -> dict[str, Any]:
    out = dict(left)
    for key, value in right.items():
        current = out.get(key)
        if current is None:
            out[key] = value
        elif isinstance(value, dict) and isinstance(current, dict):
            out[key] = _add_counts(current, value)
        elif isinstance(value, (int, float)) and isinstance(current, (int, float)):
            out[key] = current + value
        else:
            out[key] = value
    return out


# --------------------------------------------------------------------- partial JSON

_CLOSERS = {"{": "}", "[": "]"}
_MAX_TAIL_DROPS = 16
_MAX_CUTS = 16


def _close(text: str, cuts: list[int] | None = None) -> str | None:
    """``text`` with open strings, objects and arrays closed; ``None`` when malformed.

    When ``cuts`` is given, the positions where a shorter, still meaningful prefix ends
    (before a ``,`` or ``:``, after a ``{`` or ``[``) are appended to it.
    """
    stack: list[str] = []
    in_string = False
    escaped = False
    out: list[str] = []
    for position, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            elif char == "\n":
                out.append("\\n")
                continue
        elif char == '"':
            in_string = True
        elif char in _CLOSERS:
            stack.append(_CLOSERS[char])
            if cuts is not None:
                cuts.append(position + 1)
        elif char in "}]":
            if not stack or stack.pop() != char:
                return None
        elif char in ",:" and cuts is not None:
            cuts.append(position)
        out.append(char)
    if in_string:
        if escaped:
            out.pop()
        out.append('"')
    out.extend(reversed(stack))
    return "".join(out)


def _loads(text: str | None) -> tuple[bool, Any]:
    if text is None:
        return False, None
    import json  # only a streamed tool call parses JSON: not loaded with the messages

    try:
        return True, json.loads(text, strict=False)
    except ValueError:
        return False, None


def parse_partial_json(text: str) -> Any:
    """Parse a JSON document that may be cut off part way (a tool call being streamed).

    Open strings, arrays and objects are closed; an incomplete trailing token is
    dropped (``'{"a": 1, "b": tr'`` reads as ``{"a": 1}``). Raises ``ValueError`` when
    no prefix of ``text`` is valid JSON, or the brackets do not match.
    """
    ok, value = _loads(text)
    if ok:
        return value
    cuts: list[int] = []
    closed = _close(text, cuts)
    if closed is not None:
        # an incomplete number or literal at the end: drop it a character at a time
        for end in range(len(text), max(len(text) - _MAX_TAIL_DROPS, 0), -1):
            ok, value = _loads(closed if end == len(text) else _close(text[:end]))
            if ok:
                return value
        # then cut back to the last structural boundaries (a half-written key, ...)
        for end in sorted(set(cuts), reverse=True)[:_MAX_CUTS]:
            ok, value = _loads(_close(text[:end]))
            if ok:
                return value
    raise ValueError(f"Not valid (even partial) JSON: {text!r:.200}")
