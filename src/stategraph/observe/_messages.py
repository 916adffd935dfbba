"""The ``messages`` stream mode: token chunks as models produce them, then node outputs.

:class:`MessagesEmitter` is the first model-call handler of a run that streams
``"messages"``. It sends each chunk a model streams inside a task to the caller as
``(chunk, metadata)``, and, when a task finishes, every message the task wrote that
was neither streamed already nor part of the task's input (so a reply streamed token
by token is not sent a second time, and a node returning the whole history does not
replay it). Tasks of subgraphs report only when the caller streams subgraphs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from stategraph import _clock
from stategraph.constants import CALL_RESULT, ERROR, INTERRUPT
from stategraph.observe._model_calls import ModelCall, ModelCallHandler
from stategraph.observe._run_metadata import call_run_metadata, task_run_metadata

if TYPE_CHECKING:
    from stategraph.observe._protocol import RunRecord as RunContext
    from stategraph.observe._protocol import TaskRecord as Task

__all__ = ["MessagesEmitter", "NOSTREAM"]

_NOT_OUTPUT = frozenset({ERROR, INTERRUPT, CALL_RESULT, "__previous__"})
"""Writes that are not a task's output: errors, interrupts, ``@task`` results (sent
when each call finishes) and what an entrypoint saves for its next run."""

NOSTREAM = "nostream"
"""Tag that keeps a node's or a model's messages off the ``messages`` stream."""


def _is_message(value: Any) -> bool:
    return hasattr(value, "content") and hasattr(value, "type") and hasattr(value, "id")


def _direct_messages(value: Any) -> list[Any]:
    """``value`` itself if it is a message, or the messages of a list/tuple."""
    if _is_message(value):
        return [value]
    if isinstance(value, (list, tuple)):
        return [v for v in value if _is_message(v)]
    return []


def _input_messages(value: Any) -> list[Any]:
    """The messages in a task input: a message, a list, or a state's values."""
    found = _direct_messages(value)
    if found or _is_message(value):
        return found
    if not isinstance(value, Mapping):
        value = getattr(value, "__dict__", None)
        if not isinstance(value, dict):
            return []
    for item in value.values():
        found.extend(_direct_messages(item))
    return found


class MessagesEmitter(ModelCallHandler):
    """Streams model tokens and node output messages on the ``messages`` mode."""

    streams: ClassVar[bool] = True

    def __init__(self, sink: Callable[[tuple[str, ...], str, Any], None], subgraphs: bool) -> None:
        self.sink = sink
        self.subgraphs = subgraphs
        self.seen: set[str] = set()
        self._meta: dict[str, dict[str, Any]] = {}
        # messages of a Command(graph=PARENT) update, by identity (kept alive with them)
        self._bubbled: dict[int, Any] = {}

    # ------------------------------------------------------------ model calls
    def on_model_start(self, call: ModelCall) -> bool:
        if NOSTREAM in call.tags or (call.namespace and not self.subgraphs):
            return False
        meta = call.metadata
        tags = [t for t in call.tags if not (isinstance(t, str) and t.startswith("seq:step"))]
        if tags:
            # LangChain's position markers (seq:step:N) are not the caller's tags
            meta = {**meta, "tags": tags}
        self._meta[call.run_id] = meta
        return True

    def on_model_chunk(self, call: ModelCall, chunk: Any) -> None:
        chunk_id = chunk.id
        if chunk_id is not None:
            self.seen.add(chunk_id)
        self.sink(call.namespace, "messages", (chunk, self._meta[call.run_id]))

    def on_model_end(self, call: ModelCall, message: Any) -> None:
        meta = self._meta.pop(call.run_id, None)
        if call.chunk_count == 0 and meta is not None:
            # the model did not stream (it cannot): send the whole reply once
            if message.id is not None:
                if message.id in self.seen:
                    return
                self.seen.add(message.id)
            self.sink(call.namespace, "messages", (message, meta))

    def on_model_error(self, call: ModelCall, error: BaseException) -> None:
        self._meta.pop(call.run_id, None)

    # ------------------------------------------------------------ node outputs
    def task_started(self, task: Task) -> None:
        """Remember the messages a task received: returning them is not news."""
        if task.node.metadata.get("__hidden__"):
            return
        for message in _input_messages(task.input):
            if message.id is not None:
                self.seen.add(message.id)

    def task_finished(self, run: RunContext, task: Task, step: int) -> None:
        """Send the messages ``task`` wrote that were not streamed or received before."""
        node = task.node
        if NOSTREAM in node.tags or node.metadata.get("__hidden__"):
            return
        meta: dict[str, Any] | None = None
        for chan, value in task.writes:
            if chan in _NOT_OUTPUT:
                continue
            for item in self._news(value):
                if meta is None:
                    meta = {**task_run_metadata(run, task, step), "ls_integration": "langgraph"}
                self.sink(run.stream_ns, "messages", (item, dict(meta)))

    def call_finished(
        self, run: RunContext, task: Task, step: int, call_id: str, name: str, value: Any
    ) -> None:
        """Send the messages the ``@task`` call ``call_id`` (made by ``task``) returned,
        attributed to the call, as LangGraph reports a pushed task's output; they get
        their ids here, before the call's result is reported anywhere else."""
        node = task.node
        if NOSTREAM in node.tags or node.metadata.get("__hidden__"):
            return
        meta: dict[str, Any] | None = None
        for item in self._news(value):
            if meta is None:
                parent = task_run_metadata(run, task, step)
                meta = {
                    **call_run_metadata(parent, task, call_id, name),
                    "ls_integration": "langgraph",
                }
            self.sink(run.stream_ns, "messages", (item, dict(meta)))

    def bubbled(self, update: Any) -> None:
        """Never send the messages of ``update``, a ``Command(graph=PARENT)``'s update:
        the node that returned it did not finish, nor does the parent's node it
        becomes the output of (LangGraph reports neither's output)."""
        values = update.values() if isinstance(update, Mapping) else [update]
        for value in values:
            for item in _direct_messages(value):
                self._bubbled[id(item)] = item

    def _news(self, value: Any) -> list[Any]:
        """The messages in ``value`` not sent before (each gets an id if it has none)."""
        out = []
        for item in _direct_messages(value):
            if getattr(item, "type", "") == "remove" or id(item) in self._bubbled:
                continue
            if item.id is None:
                # give it its state id now: the id streamed is the id it keeps
                try:
                    item.id = _clock.uuid4_str()
                except AttributeError:
                    pass
            elif item.id in self.seen:
                continue
            if item.id is not None:
                self.seen.add(item.id)
            out.append(item)
        return out
