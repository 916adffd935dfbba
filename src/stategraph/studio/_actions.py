"""What the thread page's buttons do: answer an interrupt, update the state, fork.

Each action needs ``--allow-writes`` and the graph, is checked before anything is
written (an answer against its interrupt's ``response_schema``), and replies with the
page to show next (``redirect``) or the errors to show inline (``errors``).
"""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from stategraph.studio._answers import schema_errors
from stategraph.studio._api import JsonResponse
from stategraph.studio._context import Studio, StudioError
from stategraph.studio._html import thread_url
from stategraph.studio._params import identifier, optional_id, read_json_object, text
from stategraph.types import Command

__all__ = ["action_routes"]


async def _writing(request: Request, what: str) -> tuple[Any, dict[str, Any], str]:
    """``(graph, body, thread_id)`` of an action that writes, once the studio allows
    writes and has the graph (``what`` names the action in the error otherwise)."""
    studio: Studio = request.app.state.studio
    studio.need_writes(what)
    graph = studio.need_graph(what)
    body = await read_json_object(request)
    thread_id = body.get("thread_id")
    if thread_id is None or thread_id == "":
        raise StudioError("Name the thread (thread_id).", 422)
    return graph, body, identifier(thread_id, "thread_id")


def _config(thread_id: str, body: dict[str, Any]) -> dict[str, Any]:
    conf = {"thread_id": thread_id, "checkpoint_ns": optional_id(body, "checkpoint_ns", "") or ""}
    checkpoint_id = optional_id(body, "checkpoint_id")
    if checkpoint_id:
        conf["checkpoint_id"] = checkpoint_id
    return {"configurable": conf}


def _page(thread_id: str, config: dict[str, Any] | None = None) -> str:
    conf = (config or {}).get("configurable") or {}
    return thread_url(
        thread_id,
        checkpoint=conf.get("checkpoint_id"),
        ns=conf.get("checkpoint_ns"),
    )


async def answer(request: Request) -> Response:
    """Resume a pending interrupt with a JSON answer valid for its response schema."""
    graph, body, thread_id = await _writing(request, "Answering an interrupt")
    interrupt_id = identifier(body.get("interrupt_id"), "interrupt_id")
    config = _config(thread_id, body)
    snap = await run_in_threadpool(graph.get_state, config)
    pending = {i.id: i for t in snap.tasks for i in t.interrupts}
    if interrupt_id not in pending:
        raise StudioError(
            f"Interrupt '{interrupt_id}' is not pending at this checkpoint (it may have been "
            "answered already): reload the page.",
            409,
        )
    value = body.get("value")
    errors = schema_errors(value, pending[interrupt_id].response_schema)
    if errors:
        return JsonResponse({"errors": errors}, 422)
    command: Command[Any] = Command(resume={interrupt_id: value} if len(pending) > 1 else value)
    try:
        await run_in_threadpool(graph.invoke, command, config)
    except Exception as exc:  # the failure is saved with the thread: show it
        return JsonResponse(
            {
                "errors": [f"The run failed: {type(exc).__name__}: {exc}"],
                "redirect": _page(thread_id),
            },
            500,
        )
    return JsonResponse({"redirect": _page(thread_id)})


async def update(request: Request) -> Response:
    """``update_state`` as a node (or as no node) on the checkpoint shown."""
    graph, body, thread_id = await _writing(request, "Updating the state")
    values = body.get("values")
    if values is not None and not isinstance(values, dict):
        return JsonResponse({"errors": ["Values must be a JSON object (state keys)."]}, 422)
    try:
        new = await run_in_threadpool(
            graph.update_state, _config(thread_id, body), values, text(body, "as_node") or None
        )
    except Exception as exc:  # refused before anything was written
        return JsonResponse({"errors": [f"{type(exc).__name__}: {exc}"]}, 422)
    return JsonResponse({"redirect": _page(thread_id, new)})


async def fork(request: Request) -> Response:
    """A new head of the thread copied from an earlier checkpoint (run from there next)."""
    graph, body, thread_id = await _writing(request, "Forking")
    if not optional_id(body, "checkpoint_id"):
        raise StudioError("Name the checkpoint to fork from (checkpoint_id).", 422)
    new = await run_in_threadpool(graph.update_state, _config(thread_id, body), None)
    return JsonResponse({"redirect": _page(thread_id, new), "checkpoint": new["configurable"]})


def action_routes() -> list[Route]:
    """The page actions' routes."""
    return [
        Route("/studio/api/answer", answer, methods=["POST"]),
        Route("/studio/api/update", update, methods=["POST"]),
        Route("/studio/api/fork", fork, methods=["POST"]),
    ]
