"""``version="v2"`` output: stream parts, with state values built as the graph's classes.

With ``version="v2"`` a graph whose schemas are pydantic models or dataclasses hands
back instances of those classes instead of plain dicts, in the places LangGraph 1.1+
does: the ``data`` of root ``values`` parts and the ``value`` of ``invoke``'s
:class:`~stategraph.types.GraphOutput` (built as the output schema), and the
``values`` of root ``checkpoints`` parts and of ``debug`` checkpoint payloads (built as
the state schema). ``updates``, ``tasks``, ``messages`` and ``custom`` data stay as
they are, and so do the parts of subgraphs (``ns != ()``).

Values a class rejects (a checkpoint taken before a required key was written, an
output schema whose fields the state lacks) are handed back as the plain dict rather
than failing the run. ``version="v1"`` output never passes through this module.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from stategraph._fields import is_pydantic_class
from stategraph.constants import INTERRUPT
from stategraph.types import GraphOutput

__all__ = ["V2Parts", "class_builder"]

Builder = Callable[[dict[str, Any]], Any]


def class_builder(schema: Any) -> Builder | None:
    """A function building ``schema`` from a dict of state values.

    ``None`` when the schema is not a pydantic model or dataclass class (a
    ``TypedDict`` or ``dict``: values stay dicts). The function keeps only the keys
    the class declares (a ``values`` chunk carries every state key, the output schema
    may declare fewer), runs the class's validation, and returns the dict itself when
    the class rejects it.
    """
    if is_pydantic_class(schema):
        fields = frozenset(schema.model_fields)

        def to_model(values: dict[str, Any]) -> Any:
            try:
                return schema.model_validate({k: v for k, v in values.items() if k in fields})
            except (TypeError, ValueError):  # pydantic's ValidationError is a ValueError
                return values

        return to_model
    if isinstance(schema, type) and dataclasses.is_dataclass(schema):
        names = frozenset(f.name for f in dataclasses.fields(schema) if f.init)

        def to_dataclass(values: dict[str, Any]) -> Any:
            try:
                return schema(**{k: v for k, v in values.items() if k in names})
            except (TypeError, ValueError):  # a missing field, or __post_init__ refusing
                return values

        return to_dataclass
    return None


class V2Parts:
    """Turns the ``(ns, mode, payload)`` chunks of one run into ``version="v2"`` parts."""

    __slots__ = ("output", "state")

    def __init__(self, output_schema: Any, state_schema: Any) -> None:
        self.output = class_builder(output_schema)
        self.state = class_builder(state_schema)

    def __call__(self, ns: tuple[str, ...], mode: str, payload: Any) -> dict[str, Any]:
        """The stream part of one chunk: ``{"type", "ns", "data"}`` (+ ``interrupts``)."""
        if mode == "values":
            interrupts: tuple[Any, ...] = ()
            if isinstance(payload, dict) and INTERRUPT in payload:
                interrupts = tuple(payload[INTERRUPT])
                payload = {k: v for k, v in payload.items() if k != INTERRUPT}
            if not ns and self.output is not None and isinstance(payload, dict):
                payload = self.output(payload)
            return {"type": mode, "ns": ns, "data": payload, "interrupts": interrupts}
        if not ns and self.state is not None:
            if mode == "checkpoints":
                payload = self._checkpoint(payload)
            elif (
                mode == "debug"
                and isinstance(payload, dict)
                and payload.get("type") == "checkpoint"
            ):
                payload = {**payload, "payload": self._checkpoint(payload.get("payload"))}
        return {"type": mode, "ns": ns, "data": payload}

    def _checkpoint(self, payload: Any) -> Any:
        # a new dict: the same payload object may also be shown in another mode
        if self.state is None or not isinstance(payload, dict):
            return payload
        values = payload.get("values")
        if not isinstance(values, dict):
            return payload
        return {**payload, "values": self.state(values)}

    def graph_output(self, out: Any) -> GraphOutput[Any]:
        """``invoke(..., version="v2")``'s result from the v1 output (interrupts split off)."""
        interrupts: tuple[Any, ...] = ()
        if isinstance(out, dict) and INTERRUPT in out:
            interrupts = tuple(out[INTERRUPT])
            out = {k: v for k, v in out.items() if k != INTERRUPT}
        if self.output is not None and isinstance(out, dict):
            out = self.output(out)
        return GraphOutput(value=out, interrupts=interrupts)
