"""What every part of a server process shares: storage, graphs, streams, settings."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from stategraph.server._backends import Storage
from stategraph.server._config import ServerConfig
from stategraph.server._graphs import GraphRegistry
from stategraph.server._records import assistants
from stategraph.server._streams import RunStreams

__all__ = ["ServerContext", "ApiError", "ASSISTANT_NAMESPACE", "default_assistant_id"]

ASSISTANT_NAMESPACE = uuid.UUID("5d1bd0a3-65c6-4c43-9b3e-7b0c3a8f5e21")
"""Namespace of the uuid5 ids of the assistants created for each graph."""


def default_assistant_id(graph_id: str) -> str:
    """The id of the assistant the server creates for ``graph_id`` (stable across restarts)."""
    return str(uuid.uuid5(ASSISTANT_NAMESPACE, graph_id))


class ApiError(Exception):
    """A request the server refuses: HTTP ``status`` and a message saying what to do."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass
class ServerContext:
    """The state of one server (or worker) process."""

    config: ServerConfig
    storage: Storage
    graphs: GraphRegistry
    streams: RunStreams
    api_url: str = ""
    lease_seconds: float = 10.0
    """How long a worker's claim on a run lives without a heartbeat."""
    run_timeout: float | None = None
    auth: Any = None
    """The :class:`~stategraph.server.auth.Auth` object, or ``None``."""
    webhooks: Any = None
    extra: dict[str, Any] = field(default_factory=dict)
    _assistants: dict[str, Any] = field(default_factory=dict)
    local_runs: dict[str, Any] = field(default_factory=dict)
    """Runs this process executes now: run id -> ``stop(action)`` (a cancel asked for
    here reaches them at once instead of at their next heartbeat)."""

    def stop_local(self, run_ids: Any, action: str) -> None:
        """Tell the runs of ``run_ids`` executing in this process to stop now."""
        for run_id in run_ids:
            stop = self.local_runs.get(run_id)
            if stop is not None:
                stop(action)

    @property
    def records(self) -> Any:
        """The records (assistants, threads, runs, crons, events)."""
        return self.storage.records

    @property
    def queue(self) -> Any:
        """The run queue."""
        return self.storage.queue

    async def ensure_graph_assistants(self) -> None:
        """Create the default assistant of every graph (once; kept across restarts)."""
        for graph_id in self.graphs.ids:
            spec = self.graphs.spec(graph_id)
            await self.records.run(
                assistants.insert(
                    default_assistant_id(graph_id),
                    graph_id,
                    {},
                    {},
                    {"created_by": "system"},
                    graph_id,
                    spec.description,
                )
            )

    async def assistant(self, assistant_id: str) -> dict[str, Any] | None:
        """The assistant record, cached for a second (runs look it up on every create)."""
        import time

        cached = self._assistants.get(assistant_id)
        now = time.monotonic()
        if cached is not None and cached[0] > now:
            return cached[1]
        found = await self.records.read(assistants.get(assistant_id))
        if found is not None:
            self._assistants[assistant_id] = (now + 1.0, found)
        return found

    def forget_assistant(self, assistant_id: str) -> None:
        """Drop a cached assistant (it changed)."""
        self._assistants.pop(assistant_id, None)

    async def resolve_assistant(self, assistant_id: Any, *, for_run: bool = True) -> dict[str, Any]:
        """The assistant named by ``assistant_id``: a uuid, or a graph id (runs and
        crons accept graph ids, as LangGraph does). 422 for a name that is no graph,
        404 for an unknown uuid."""
        if not isinstance(assistant_id, str) or not assistant_id:
            raise ApiError(422, "assistant_id is required: an assistant uuid or a graph id.")
        try:
            uuid.UUID(assistant_id)
            is_uuid = True
        except ValueError:
            is_uuid = False
        if not is_uuid:
            if not for_run or assistant_id not in self.graphs.ids:
                if not for_run:
                    raise ApiError(422, "Invalid assistant ID: must be a UUID")
                raise ApiError(
                    422,
                    f"Invalid assistant: '{assistant_id}'. Must be either:\n- A valid assistant "
                    "UUID, or\n- One of the registered graphs: " + ", ".join(self.graphs.ids),
                )
            assistant_id = default_assistant_id(assistant_id)
        found = await self.assistant(assistant_id)
        if found is None:
            raise ApiError(
                404,
                "Thread or assistant not found."
                if for_run
                else f"Assistant '{assistant_id}' not found.",
            )
        if found["graph_id"] not in self.graphs.ids:
            raise ApiError(
                409,
                f"Assistant '{assistant_id}' uses graph '{found['graph_id']}', which this "
                f"server does not serve (graphs: {', '.join(self.graphs.ids)}).",
            )
        return found
