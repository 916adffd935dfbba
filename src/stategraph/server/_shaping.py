"""Turning what the graph streams into LangGraph Server's events (names and payloads).

* a mode's chunk becomes an event named after the mode, ``|``-joined with the
  subgraph namespace when ``stream_subgraphs`` is on (``updates|child:<task id>``);
* ``messages-tuple`` sends ``messages`` events of ``[message, metadata]``;
* ``messages`` sends ``messages/metadata`` once per message id, then
  ``messages/partial`` (the message so far, chunks added up) or
  ``messages/complete``;
* ``events`` sends LangChain-style event dicts (``astream_events`` v2);
* ``values`` chunks are kept (the last root one is the run's result) and only sent
  when asked for;
* ``debug`` checkpoint payloads also name their checkpoint and its parent
  (``checkpoint`` / ``parent_checkpoint``: thread, namespace and checkpoint id), as
  LangGraph Server adds them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from stategraph.server._json import dumps, plain

__all__ = ["Shaper"]

Emit = Callable[[str, str], None]


def _add_chunk(acc: dict[str, Any], chunk: dict[str, Any]) -> dict[str, Any]:
    out = dict(acc)
    content, more = acc.get("content"), chunk.get("content")
    if isinstance(content, str) and isinstance(more, str):
        out["content"] = content + more
    elif isinstance(content, list) and isinstance(more, list):
        out["content"] = content + more
    elif more:
        out["content"] = more
    for key in ("tool_call_chunks", "tool_calls", "invalid_tool_calls"):
        if chunk.get(key):
            out[key] = [*(acc.get(key) or []), *chunk[key]]
    for key in ("additional_kwargs", "response_metadata"):
        if chunk.get(key):
            out[key] = {**(acc.get(key) or {}), **chunk[key]}
    if chunk.get("usage_metadata"):
        out["usage_metadata"] = chunk["usage_metadata"]
    return out


def _checkpoint_id(config: Any) -> dict[str, Any] | None:
    conf = config.get("configurable") if isinstance(config, Mapping) else None
    if not isinstance(conf, Mapping) or not conf.get("checkpoint_id"):
        return None
    return {
        "checkpoint_id": conf["checkpoint_id"],
        "thread_id": conf.get("thread_id"),
        "checkpoint_ns": conf.get("checkpoint_ns") or "",
    }


def _with_checkpoint_ids(data: Mapping[str, Any]) -> Mapping[str, Any]:
    """A ``debug`` checkpoint event with ``checkpoint`` and ``parent_checkpoint`` in
    its payload (from its ``config`` and ``parent_config``)."""
    payload = data.get("payload")
    if not isinstance(payload, Mapping):
        return data
    return {
        **data,
        "payload": {
            **payload,
            "checkpoint": _checkpoint_id(payload.get("config")),
            "parent_checkpoint": _checkpoint_id(payload.get("parent_config")),
        },
    }


class Shaper:
    """Shapes one run's stream; call :meth:`chunk` for each ``(ns, mode, data)``."""

    def __init__(self, modes: list[str], subgraphs: bool, emit: Emit) -> None:
        self.modes = set(modes)
        self.subgraphs = subgraphs
        self.emit = emit
        self.last_values_json: str | None = None
        """The last root ``values`` chunk (JSON text): the run's result."""
        self._seen: dict[str, dict[str, Any]] = {}

    def _name(self, mode: str, ns: tuple[str, ...]) -> str:
        return mode if not ns else "|".join((mode, *ns))

    def chunk(self, ns: tuple[str, ...], mode: str, data: Any) -> None:
        """One chunk of the graph's stream."""
        if ns and not self.subgraphs:
            return
        if mode == "values":
            text = dumps(data)
            if not ns:
                self.last_values_json = text
            if "values" in self.modes:
                self.emit(self._name("values", ns), text)
            return
        if mode == "messages":
            self._messages(ns, data)
            return
        if mode == "debug" and isinstance(data, Mapping) and data.get("type") == "checkpoint":
            data = _with_checkpoint_ids(data)
        if mode in self.modes:
            self.emit(self._name(mode, ns), dumps(data))

    def _messages(self, ns: tuple[str, ...], data: Any) -> None:
        message, meta = data
        if "messages-tuple" in self.modes:
            self.emit(self._name("messages", ns), dumps([message, meta]))
        if "messages" not in self.modes:
            return
        as_json = plain(message)
        if not isinstance(as_json, Mapping):
            return
        msg_id = str(as_json.get("id") or "")
        is_chunk = str(as_json.get("type", "")).endswith("Chunk") or type(
            message
        ).__name__.endswith("Chunk")
        if msg_id not in self._seen:
            self.emit(self._name("messages/metadata", ns), dumps({msg_id: {"metadata": meta}}))
            self._seen[msg_id] = {}
        if is_chunk:
            acc = (
                _add_chunk(self._seen[msg_id], dict(as_json))
                if self._seen[msg_id]
                else dict(as_json)
            )
            self._seen[msg_id] = acc
            self.emit(self._name("messages/partial", ns), dumps([acc]))
        else:
            self._seen[msg_id] = dict(as_json)
            self.emit(self._name("messages/complete", ns), dumps([as_json]))

    def event(self, event: Mapping[str, Any], root_run_id: str | None) -> bool:
        """One ``astream_events`` event; ``True`` when it carried a mode chunk of the
        root run (already shaped), else it is sent as an ``events`` event."""
        if event.get("event") == "on_chain_stream" and event.get("run_id") == root_run_id:
            chunk = (event.get("data") or {}).get("chunk")
            if isinstance(chunk, tuple) and len(chunk) == 3:
                ns, mode, data = chunk
                self.chunk(tuple(ns), mode, data)
                return True
            if isinstance(chunk, tuple) and len(chunk) == 2:
                mode, data = chunk
                self.chunk((), mode, data)
                return True
        if "events" in self.modes:
            self.emit("events", dumps(event))
        return False

    def result_json(self) -> str:
        """The run's result (the last root values) as JSON text."""
        return self.last_values_json if self.last_values_json is not None else "null"
