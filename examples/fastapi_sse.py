"""An async FastAPI app that streams a graph's progress over server-sent events.

Run it with ``uvicorn examples.fastapi_sse:app`` (``pip install 'stategraph[examples]'``),
then::

    curl -N -X POST localhost:8000/threads/t1/runs -H 'content-type: application/json' \\
         -d '{"topic": "graphs"}'
    curl -N -X POST localhost:8000/threads/t1/resume -H 'content-type: application/json' \\
         -d '{"value": "approve"}'
    curl localhost:8000/threads/t1

Each run is streamed as SSE events: ``token`` (custom chunks the writer node emits
while it works), ``update`` (what each node wrote), ``interrupt`` (the run paused and
waits for ``/resume``) and a final ``end``. Checkpoints go to the SQLite file named by
``STATEGRAPH_DB`` (default ``checkpoints.sqlite``), so a paused thread survives a
restart of the server.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, HTTPException
from fastapi.responses import StreamingResponse
from pydantic import BaseModel
from typing_extensions import TypedDict

from stategraph.config import get_stream_writer
from stategraph.graph import END, START, StateGraph
from stategraph.types import Command, interrupt


class State(TypedDict, total=False):
    topic: str
    draft: str
    decision: str


async def write(state: State) -> dict[str, Any]:
    """Write a draft word by word, streaming each word as it is produced."""
    emit = get_stream_writer()
    words = f"A short note about {state['topic']}, written one word at a time.".split()
    for word in words:
        emit({"token": word})
    return {"draft": " ".join(words)}


async def review(state: State) -> dict[str, Any]:
    """Wait for a human decision (answered by POST /threads/{id}/resume)."""
    decision = interrupt({"draft": state["draft"], "choices": ["approve", "reject"]})
    return {"decision": str(decision)}


def build(checkpointer: Any) -> Any:
    builder = StateGraph(State)
    builder.add_node("write", write)
    builder.add_node("review", review)
    builder.add_edge(START, "write")
    builder.add_edge("write", "review")
    builder.add_edge("review", END)
    return builder.compile(checkpointer=checkpointer)


def sse(event: str, data: Any) -> str:
    """One server-sent event."""
    return f"event: {event}\ndata: {json.dumps(data, default=str)}\n\n"


class RunRequest(BaseModel):
    topic: str


class ResumeRequest(BaseModel):
    value: Any


def create_app(checkpointer: Any = None) -> FastAPI:
    """The app; without ``checkpointer`` it opens an ``AsyncSqliteSaver`` at startup."""
    holder: dict[str, Any] = {}

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if checkpointer is not None:
            holder["graph"] = build(checkpointer)
            yield
            return
        from stategraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        path = os.environ.get("STATEGRAPH_DB", "checkpoints.sqlite")
        async with AsyncSqliteSaver.from_conn_string(path) as saver:
            holder["graph"] = build(saver)
            yield

    app = FastAPI(title="stategraph SSE example", lifespan=lifespan)
    if checkpointer is not None:
        holder["graph"] = build(checkpointer)

    async def stream(graph_input: Any, thread_id: str) -> AsyncIterator[str]:
        graph = holder["graph"]
        config = {"configurable": {"thread_id": thread_id}}
        async for mode, chunk in graph.astream(
            graph_input, config, stream_mode=["custom", "updates"]
        ):
            if mode == "custom":
                yield sse("token", chunk)
            elif "__interrupt__" in chunk:
                for item in chunk["__interrupt__"]:
                    yield sse("interrupt", {"id": item.id, "value": item.value})
            else:
                yield sse("update", chunk)
        state = await graph.aget_state(config)
        yield sse("end", {"next": list(state.next)})

    def respond(events: AsyncIterator[str]) -> StreamingResponse:
        return StreamingResponse(
            events, media_type="text/event-stream", headers={"Cache-Control": "no-cache"}
        )

    @app.post("/threads/{thread_id}/runs")
    async def run(thread_id: str, request: RunRequest) -> StreamingResponse:
        return respond(stream({"topic": request.topic}, thread_id))

    @app.post("/threads/{thread_id}/resume")
    async def resume(thread_id: str, request: ResumeRequest) -> StreamingResponse:
        state = await holder["graph"].aget_state({"configurable": {"thread_id": thread_id}})
        if not any(task.interrupts for task in state.tasks):
            raise HTTPException(409, f"Thread '{thread_id}' is not waiting for a decision.")
        return respond(stream(Command(resume=request.value), thread_id))

    @app.get("/threads/{thread_id}")
    async def show(thread_id: str) -> dict[str, Any]:
        state = await holder["graph"].aget_state({"configurable": {"thread_id": thread_id}})
        if state.created_at is None:
            raise HTTPException(404, f"No thread '{thread_id}'.")
        return {
            "values": state.values,
            "next": list(state.next),
            "interrupts": [i.value for task in state.tasks for i in task.interrupts],
        }

    return app


app = create_app()
