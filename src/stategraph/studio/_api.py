"""The studio's HTTP API, shaped like LangGraph Server's for the part it implements.

Assistants (the loaded graph), threads, thread state and history, streaming and
waiting runs (server-sent events), and the store. ``RemoteGraph`` and LangGraph's SDK
client can drive a graph served by ``stategraph studio`` through these routes.
"""

from __future__ import annotations

import uuid
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from stategraph.errors import InvalidUpdateError
from stategraph.studio._context import Studio, StudioError
from stategraph.studio._jsonio import dumps, jsonable
from stategraph.studio._params import (
    MAX_LIMIT,
    checkpoint_ref,
    flag,
    identifier,
    mapping,
    optional_id,
    parse_json,
    path_id,
    query_flag,
    query_whole,
    read_json_object,
    text,
    text_list,
    whole,
)
from stategraph.studio._runs import run_request, stream_run
from stategraph.studio._shapes import snapshot_json, thread_json, tuple_state_json

__all__ = ["api_routes", "thread_state", "JsonResponse"]


class JsonResponse(JSONResponse):
    """JSON of any saved value (messages, dataclasses, interrupts)."""

    def render(self, content: Any) -> bytes:
        return dumps(content).encode()


def _studio(request: Request) -> Studio:
    studio: Studio = request.app.state.studio
    return studio


async def _body(request: Request) -> dict[str, Any]:
    """The request body, a JSON object (checked: see :mod:`stategraph.studio._params`)."""
    return await read_json_object(request)


def _config(thread_id: str, checkpoint_id: str | None = None, ns: str = "") -> dict[str, Any]:
    conf: dict[str, Any] = {"thread_id": thread_id, "checkpoint_ns": ns}
    if checkpoint_id:
        conf["checkpoint_id"] = checkpoint_id
    return {"configurable": conf}


def thread_state(
    studio: Studio,
    thread_id: str,
    checkpoint_id: str | None = None,
    ns: str = "",
    subgraphs: bool = False,
) -> dict[str, Any] | None:
    """The ThreadState of a thread's checkpoint (latest by default); None if none is saved."""
    config = _config(thread_id, checkpoint_id, ns)
    if studio.graph is not None:
        snap = studio.graph.get_state(config, subgraphs=subgraphs)
        if not (snap.config.get("configurable") or {}).get("checkpoint_id"):
            return None
        return snapshot_json(snap)
    tup = studio.saver.get_tuple(config)
    return None if tup is None else tuple_state_json(tup)


def _need_state(studio: Studio, thread_id: str, **kw: Any) -> dict[str, Any]:
    state = thread_state(studio, thread_id, **kw)
    if state is None:
        if thread_id in studio.created_threads and not kw.get("checkpoint_id"):
            return {
                "values": {},
                "next": [],
                "tasks": [],
                "metadata": {},
                "created_at": None,
                "checkpoint": None,
                "parent_checkpoint": None,
                "interrupts": [],
            }
        what = f"checkpoint '{kw['checkpoint_id']}' of " if kw.get("checkpoint_id") else ""
        raise StudioError(f"No {what}thread '{thread_id}' in this database.", 404)
    return state


# --------------------------------------------------------------------------- assistants
def _assistant(studio: Studio) -> dict[str, Any]:
    graph = studio.need_graph("An assistant")
    return {
        "assistant_id": studio.assistant_id,
        "graph_id": studio.assistant_id,
        "name": getattr(graph, "name", None) or studio.assistant_id,
        "config": {},
        "context": {},
        "metadata": {"created_by": "stategraph studio"},
        "version": 1,
        "created_at": None,
        "updated_at": None,
        "description": None,
    }


async def assistants_search(request: Request) -> Response:
    studio = _studio(request)
    return JsonResponse([_assistant(studio)] if studio.graph is not None else [])


async def assistant_get(request: Request) -> Response:
    studio = _studio(request)
    studio.check_assistant(request.path_params["assistant_id"])
    return JsonResponse(_assistant(studio))


async def assistant_graph(request: Request) -> Response:
    studio = _studio(request)
    studio.check_assistant(request.path_params["assistant_id"])
    graph = studio.need_graph("The drawing")
    raw = request.query_params.get("xray", "false").lower()
    xray: bool | int = (
        raw == "true" if raw in ("true", "false") else query_whole(request, "xray", 0, maximum=100)
    )
    return JsonResponse(graph.get_graph(xray=xray).to_json())


async def assistant_schemas(request: Request) -> Response:
    studio = _studio(request)
    studio.check_assistant(request.path_params["assistant_id"])
    graph = studio.need_graph("The schemas")
    out: dict[str, Any] = {"graph_id": studio.assistant_id}
    for key, method in (
        ("input_schema", "get_input_jsonschema"),
        ("output_schema", "get_output_jsonschema"),
        ("context_schema", "get_context_jsonschema"),
    ):
        getter = getattr(graph, method, None)
        try:
            out[key] = getter() if callable(getter) else None
        except Exception:  # a schema pydantic cannot express: report none
            out[key] = None
    out["state_schema"] = out["input_schema"]
    return JsonResponse(out)


# --------------------------------------------------------------------------- threads
async def threads_create(request: Request) -> Response:
    studio = _studio(request)
    body = await _body(request)
    thread_id = optional_id(body, "thread_id") or str(uuid.uuid4())
    if_exists = text(body, "if_exists")
    if if_exists not in (None, "raise", "do_nothing"):
        raise StudioError(f"'if_exists' must be 'raise' or 'do_nothing', got {if_exists!r}.", 422)
    mapping(body, "metadata")
    state = await run_in_threadpool(thread_state, studio, thread_id)
    if state is not None and if_exists != "do_nothing":
        raise StudioError(f"Thread '{thread_id}' already exists.", 409)
    if state is None:
        studio.need_writes("Creating a thread")
        studio.created_threads.add(thread_id)
    return JsonResponse(thread_json(thread_id, state))


async def threads_search(request: Request) -> Response:
    studio = _studio(request)
    body = await _body(request)
    limit = whole(body, "limit", 10, minimum=1, maximum=MAX_LIMIT) or 10
    offset = whole(body, "offset", 0) or 0
    status = text(body, "status")
    if status not in (None, "idle", "busy", "interrupted", "error"):
        raise StudioError(
            f"'status' must be one of idle, busy, interrupted, error, got {status!r}.", 422
        )
    filters = mapping(body, "metadata") or None

    def read() -> list[dict[str, Any]]:
        if not status:
            rows, _total = studio.index.page(filters=filters, offset=offset, limit=limit)
            return [thread_json(r.thread_id, thread_state(studio, r.thread_id)) for r in rows]
        # the status is known only from each thread's state: read them newest first
        # until the page is full
        rows, _total = studio.index.page(filters=filters, offset=0, limit=10**9)
        found: list[dict[str, Any]] = []
        for row in rows:
            thread = thread_json(row.thread_id, thread_state(studio, row.thread_id))
            if thread["status"] == status:
                found.append(thread)
                if len(found) >= offset + limit:
                    break
        return found[offset : offset + limit]

    return JsonResponse(await run_in_threadpool(read))


async def thread_get(request: Request) -> Response:
    studio = _studio(request)
    thread_id = path_id(request, "thread_id")
    state = await run_in_threadpool(thread_state, studio, thread_id)
    if state is None and thread_id not in studio.created_threads:
        raise StudioError(f"No thread '{thread_id}' in this database.", 404)
    return JsonResponse(thread_json(thread_id, state))


async def thread_delete(request: Request) -> Response:
    studio = _studio(request)
    studio.need_writes("Deleting a thread")
    thread_id = path_id(request, "thread_id")
    await run_in_threadpool(studio.saver.delete_thread, thread_id)
    studio.created_threads.discard(thread_id)
    return Response(status_code=204)


async def state_get(request: Request) -> Response:
    studio = _studio(request)
    state = await run_in_threadpool(
        _need_state,
        studio,
        path_id(request, "thread_id"),
        checkpoint_id=path_id(request, "checkpoint_id")
        if "checkpoint_id" in request.path_params
        else None,
        subgraphs=query_flag(request, "subgraphs"),
    )
    return JsonResponse(state)


async def state_at_checkpoint(request: Request) -> Response:
    studio = _studio(request)
    thread_id = path_id(request, "thread_id")
    body = await _body(request)
    checkpoint_id, ns = checkpoint_ref(body)
    state = await run_in_threadpool(
        _need_state,
        studio,
        thread_id,
        checkpoint_id=checkpoint_id,
        ns=ns,
        subgraphs=flag(body, "subgraphs"),
    )
    return JsonResponse(state)


async def state_update(request: Request) -> Response:
    studio = _studio(request)
    studio.need_writes("Updating the state")
    graph = studio.need_graph("Updating the state")
    thread_id = path_id(request, "thread_id")
    body = await _body(request)
    checkpoint_id, ns = checkpoint_ref(body)
    config = _config(thread_id, optional_id(body, "checkpoint_id") or checkpoint_id, ns)
    as_node = text(body, "as_node")
    try:
        new_config = await run_in_threadpool(
            graph.update_state, config, body.get("values"), as_node
        )
    except (InvalidUpdateError, ValueError, TypeError, KeyError, RecursionError) as exc:
        raise StudioError(f"update_state refused: {exc}", 422) from exc
    studio.created_threads.discard(thread_id)
    return JsonResponse({"checkpoint": jsonable(new_config["configurable"])})


async def history(request: Request) -> Response:
    studio = _studio(request)
    thread_id = path_id(request, "thread_id")
    if request.method == "POST":
        body = await _body(request)
    else:
        body = dict(request.query_params.items())
        if "metadata" in body:
            body["metadata"] = parse_json(body["metadata"], "The 'metadata' parameter")
    limit = whole(body, "limit", 10, minimum=1, maximum=MAX_LIMIT) or 10
    raw_before = body.get("before")
    before = (
        checkpoint_ref(body, "before")[0]
        if isinstance(raw_before, dict)
        else optional_id(body, "before")
    )
    checkpoint_id, ns = checkpoint_ref(body)
    config = _config(thread_id, checkpoint_id, ns)
    before_config = _config(thread_id, before) if before else None
    metadata = mapping(body, "metadata") or None

    def read() -> list[dict[str, Any]]:
        if studio.graph is not None:
            return [
                snapshot_json(s)
                for s in studio.graph.get_state_history(
                    config, filter=metadata, before=before_config, limit=limit
                )
            ]
        return [
            tuple_state_json(t)
            for t in studio.saver.list(config, filter=metadata, before=before_config, limit=limit)
        ]

    return JsonResponse(await run_in_threadpool(read))


# --------------------------------------------------------------------------- runs
def _need_checkpoint(studio: Studio, run: Any) -> None:
    """Refuse a run from a checkpoint the thread does not have (404), or one without
    input on a thread with nothing to continue (422), before it starts."""
    conf = run.config["configurable"]
    if conf.get("checkpoint_id"):
        if studio.saver.get_tuple(run.config) is None:
            raise StudioError(
                f"No checkpoint '{conf['checkpoint_id']}' of thread '{conf['thread_id']}' "
                "in this database.",
                404,
            )
    elif run.input is None:
        latest = {"configurable": {"thread_id": conf["thread_id"], "checkpoint_ns": ""}}
        if studio.saver.get_tuple(latest) is None:
            raise StudioError(
                f"'input' is needed: thread '{conf['thread_id']}' has no checkpoint to "
                "continue from.",
                422,
            )


async def runs_stream(request: Request) -> Response:
    studio = _studio(request)
    studio.need_writes("A run")
    studio.need_graph("A run")
    thread_id = path_id(request, "thread_id") if "thread_id" in request.path_params else None
    body = await _body(request)
    run = run_request(studio, thread_id, body)
    await run_in_threadpool(_need_checkpoint, studio, run)
    if thread_id is not None:
        studio.created_threads.discard(thread_id)
    return StreamingResponse(
        stream_run(studio, run),
        media_type="text/event-stream",
        headers={"cache-control": "no-store", "content-location": f"/runs/{run.run_id}"},
    )


async def runs_wait(request: Request) -> Response:
    studio = _studio(request)
    studio.need_writes("A run")
    graph = studio.need_graph("A run")
    thread_id = path_id(request, "thread_id") if "thread_id" in request.path_params else None
    run = run_request(studio, thread_id, await _body(request))
    await run_in_threadpool(_need_checkpoint, studio, run)

    def work() -> Any:
        kwargs: dict[str, Any] = {
            "interrupt_before": run.interrupt_before,
            "interrupt_after": run.interrupt_after,
        }
        if run.context is not None:
            kwargs["context"] = run.context
        return graph.invoke(run.input, run.config, **kwargs)

    try:
        result = await run_in_threadpool(work)
    except Exception as exc:
        return JsonResponse({"__error__": {"error": type(exc).__name__, "message": str(exc)}}, 500)
    return JsonResponse(result)


# --------------------------------------------------------------------------- store
def _store(studio: Studio) -> Any:
    if studio.store is None:
        raise StudioError(
            "No store: start the studio with --store FILE (SqliteStore) or --store URL (PostgresStore).",
            404,
        )
    return studio.store


async def _store_call(method: Any, *args: Any, **kwargs: Any) -> Any:
    """``method(*args, **kwargs)`` in a worker thread; the store refusing its arguments
    (an empty or reserved namespace, a bad filter) is a 422 naming why."""
    try:
        return await run_in_threadpool(method, *args, **kwargs)
    except (ValueError, TypeError) as exc:
        raise StudioError(f"The store refused the request: {exc}", 422) from exc


def _item_json(item: Any) -> dict[str, Any]:
    out = {
        "namespace": list(item.namespace),
        "key": item.key,
        "value": jsonable(item.value),
        "created_at": jsonable(item.created_at),
        "updated_at": jsonable(item.updated_at),
    }
    if getattr(item, "score", None) is not None:
        out["score"] = item.score
    return out


async def store_namespaces(request: Request) -> Response:
    store = _store(_studio(request))
    body = await _body(request)
    found = await _store_call(
        store.list_namespaces,
        prefix=text_list(body, "prefix") or None,
        suffix=text_list(body, "suffix") or None,
        max_depth=whole(body, "max_depth", None, minimum=1, maximum=MAX_LIMIT),
        limit=whole(body, "limit", 100, minimum=1, maximum=MAX_LIMIT),
        offset=whole(body, "offset", 0),
    )
    return JsonResponse({"namespaces": [list(ns) for ns in found]})


async def store_search(request: Request) -> Response:
    store = _store(_studio(request))
    body = await _body(request)
    items = await _store_call(
        store.search,
        text_list(body, "namespace_prefix") or (),
        query=text(body, "query"),
        filter=mapping(body, "filter"),
        limit=whole(body, "limit", 10, minimum=1, maximum=MAX_LIMIT),
        offset=whole(body, "offset", 0),
    )
    return JsonResponse({"items": [_item_json(i) for i in items]})


async def store_item(request: Request) -> Response:
    studio = _studio(request)
    store = _store(studio)
    if request.method == "GET":
        query = dict(request.query_params.items())
        namespace = tuple(
            p for p in identifier(query.get("namespace", ""), "namespace").split(".") if p
        )
        key = identifier(query.get("key", ""), "key")
        item = await _store_call(store.get, namespace, key)
        if item is None:
            raise StudioError("No such item in the store.", 404)
        return JsonResponse(_item_json(item))
    studio.need_writes("Changing the store")
    body = await _body(request)
    namespace = text_list(body, "namespace") or ()
    if "key" not in body:
        raise StudioError("Name the item: 'key' is missing.", 422)
    key = identifier(body["key"], "key")
    if request.method == "PUT":
        value = mapping(body, "value")
        if value is None:
            raise StudioError("'value' must be a JSON object (the item to store).", 422)
        await _store_call(store.put, namespace, key, value)
    else:
        await _store_call(store.delete, namespace, key)
    return Response(status_code=204)


async def ok(request: Request) -> Response:
    return JsonResponse({"ok": True})


async def info(request: Request) -> Response:
    from stategraph import __version__

    studio = _studio(request)
    return JsonResponse(
        {
            "version": __version__,
            "server": "stategraph studio",
            "flags": {"assistants": True, "crons": False, "store": studio.store is not None},
            "read_only": not studio.allow_writes,
        }
    )


def api_routes() -> list[Route]:
    """The API's routes."""
    return [
        Route("/ok", ok),
        Route("/info", info),
        Route("/assistants/search", assistants_search, methods=["POST"]),
        Route("/assistants/{assistant_id}", assistant_get),
        Route("/assistants/{assistant_id}/graph", assistant_graph),
        Route("/assistants/{assistant_id}/schemas", assistant_schemas),
        Route("/threads", threads_create, methods=["POST"]),
        Route("/threads/search", threads_search, methods=["POST"]),
        Route("/threads/{thread_id}", thread_get, methods=["GET"]),
        Route("/threads/{thread_id}", thread_delete, methods=["DELETE"]),
        Route("/threads/{thread_id}/state", state_get, methods=["GET"]),
        Route("/threads/{thread_id}/state", state_update, methods=["POST"]),
        Route("/threads/{thread_id}/state/checkpoint", state_at_checkpoint, methods=["POST"]),
        Route("/threads/{thread_id}/state/{checkpoint_id}", state_get, methods=["GET"]),
        Route("/threads/{thread_id}/history", history, methods=["GET", "POST"]),
        Route("/threads/{thread_id}/runs/stream", runs_stream, methods=["POST"]),
        Route("/threads/{thread_id}/runs/wait", runs_wait, methods=["POST"]),
        Route("/runs/stream", runs_stream, methods=["POST"]),
        Route("/runs/wait", runs_wait, methods=["POST"]),
        Route("/store/namespaces", store_namespaces, methods=["POST"]),
        Route("/store/items/search", store_search, methods=["POST"]),
        Route("/store/items", store_item, methods=["GET", "PUT", "DELETE"]),
    ]
