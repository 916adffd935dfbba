"""The studio's HTML pages: threads, one thread, the graph, the store."""

from __future__ import annotations

import json
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Route

from stategraph.cli._checkpoints import pending_interrupts, pending_nodes
from stategraph.studio._answers import example_answer
from stategraph.studio._context import Studio, StudioError
from stategraph.studio._html import h, page, pretty, thread_url, url
from stategraph.studio._params import check_json_depth, identifier, path_id, query_whole
from stategraph.studio._reading import checkpoint_view, namespaces_of, timeline

__all__ = ["page_routes", "PAGE_SIZE"]

PAGE_SIZE = 50


def _studio(request: Request) -> Studio:
    studio: Studio = request.app.state.studio
    return studio


def _filters(raw: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in raw.split(","):
        item = item.strip()
        if not item:
            continue
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise StudioError(f"Metadata filter expects key=value, got '{item}'.", 400)
        check_json_depth(value.encode(), f"The metadata filter of '{key.strip()}'")
        try:
            out[key.strip()] = json.loads(value)
        except (ValueError, RecursionError):
            out[key.strip()] = value.strip()
    return out


def _short_time(ts: str | None) -> str:
    return (ts or "")[:19].replace("T", " ")


# --------------------------------------------------------------------------- threads
def _threads_body(studio: Studio, search: str, meta: str, offset: int) -> str:
    filters = _filters(meta)
    rows, total = studio.index.page(search=search, filters=filters, offset=offset, limit=PAGE_SIZE)
    lines = []
    for row in rows:
        tup = studio.saver.get_tuple(
            {"configurable": {"thread_id": row.thread_id, "checkpoint_ns": ""}}
        )
        if tup is None:  # deleted since the index last looked
            studio.index.forget(row.thread_id)
            continue
        meta_d = dict(tup.metadata or {})
        waiting = len(pending_interrupts(tup.pending_writes))
        failed = any(ch == "__error__" for _t, ch, _v in tup.pending_writes or ())
        status = "interrupted" if waiting else "error" if failed else "idle"
        shown = {k: v for k, v in meta_d.items() if k not in ("step", "source", "parents")}
        lines.append(
            f'<tr class="thread-row" data-thread="{h(row.thread_id)}">'
            f'<td><a href="{h(thread_url(row.thread_id))}">{h(row.thread_id)}</a></td>'
            f'<td><span class="status {status}">{status}</span></td>'
            f"<td>{row.checkpoints}</td><td>{h(meta_d.get('step'))}</td>"
            f"<td>{h(meta_d.get('source'))}</td>"
            f"<td>{h(_short_time(tup.checkpoint.get('ts')))}</td>"
            f"<td>{h(', '.join(pending_nodes(tup.checkpoint)) or '-')}</td>"
            f'<td class="meta">{h(json.dumps(shown, default=repr)[:120])}</td></tr>'
        )
    pager = []
    if offset > 0:
        pager.append(
            f'<a id="prev-page" href="{h(url("/", q=search, meta=meta, offset=max(0, offset - PAGE_SIZE)))}">← newer</a>'
        )
    if offset + PAGE_SIZE < total:
        pager.append(
            f'<a id="next-page" href="{h(url("/", q=search, meta=meta, offset=offset + PAGE_SIZE))}">older →</a>'
        )
    shown_to = min(total, offset + PAGE_SIZE)
    return f"""<h1>Threads</h1>
<form class="filters" method="get" action="/">
<input type="search" name="q" placeholder="thread id contains…" value="{h(search)}">
<input type="text" name="meta" placeholder="metadata filter: user=ada, step=3" value="{h(meta)}">
<button type="submit">Filter</button></form>
<p class="count" id="thread-count">{total} thread(s){f", showing {offset + 1}-{shown_to}" if total else ""}, newest first</p>
<table class="threads"><thead><tr><th>Thread</th><th>Status</th><th>Checkpoints</th>
<th>Step</th><th>Source</th><th>Updated</th><th>Next</th><th>Metadata</th></tr></thead>
<tbody>{"".join(lines) or '<tr><td colspan="8">No threads.</td></tr>'}</tbody></table>
<p class="pager">{" ".join(pager)}</p>"""


async def threads_page(request: Request) -> Response:
    studio = _studio(request)
    q = request.query_params
    offset = query_whole(request, "offset", 0)
    body = await run_in_threadpool(_threads_body, studio, q.get("q", ""), q.get("meta", ""), offset)
    return HTMLResponse(page(studio, "Threads", body, active="threads"))


# --------------------------------------------------------------------------- one thread
TIMELINE_PAGE = 100


def _timeline_html(
    studio: Studio, thread_id: str, ns: str, selected: str, before: str | None
) -> str:
    rows = []
    page_ = timeline(studio.saver, studio.index, thread_id, ns, TIMELINE_PAGE, before)
    for entry in page_.entries:
        writes = "; ".join(
            f"{node}: {', '.join(chans) or '-'}" for node, chans in entry.writes.items()
        )
        flags = ""
        if entry.interrupts:
            flags += f'<span class="flag flag-interrupt" title="pending interrupts">interrupt {entry.interrupts}</span>'
        if entry.errors:
            flags += (
                f'<span class="flag flag-error" title="failed tasks">error {entry.errors}</span>'
            )
        fork = ""
        if studio.allow_writes and studio.graph is not None:
            fork = (
                f'<button class="fork" data-post="/studio/api/fork" '
                f'data-body="{h(json.dumps({"thread_id": thread_id, "checkpoint_id": entry.checkpoint_id, "checkpoint_ns": ns}))}">fork</button>'
            )
        cls = "selected" if entry.checkpoint_id == selected else ""
        link = thread_url(thread_id, checkpoint=entry.checkpoint_id, ns=ns)
        rows.append(
            f'<tr class="cp {cls}" data-checkpoint="{h(entry.checkpoint_id)}">'
            f"<td>{h(entry.step)}</td><td>{h(entry.source)}</td>"
            f'<td><a href="{h(link)}" title="{h(entry.checkpoint_id)}">{h(entry.checkpoint_id[-12:])}</a> {fork}</td>'
            f'<td class="time" title="{h(entry.created_at)}">{h(_short_time(entry.created_at)[11:])}</td>'
            f"<td>{h(writes)}</td>"
            f"<td>{h(', '.join(entry.next))} {flags}</td></tr>"
        )
    more = []
    if before:
        more.append(
            f'<a id="newer-checkpoints" href="{h(thread_url(thread_id, ns=ns))}">← newest</a>'
        )
    if page_.older:
        link = thread_url(thread_id, ns=ns, checkpoint=selected, before=page_.older)
        more.append(f'<a id="older-checkpoints" href="{h(link)}">older checkpoints →</a>')
    return (
        '<table class="timeline"><thead><tr><th>Step</th><th>Source</th><th>Checkpoint</th>'
        "<th>Time</th><th>Writes (node: channels)</th><th>Next</th></tr>"
        f"</thead><tbody>{''.join(rows)}</tbody></table>"
        f'<p class="pager">{" ".join(more)}</p>'
    )


def _diff_html(diff: list[tuple[str, str, Any, Any]]) -> str:
    if not diff:
        return '<p class="muted">No change against the parent checkpoint.</p>'
    names = {"+": "added", "~": "changed", "-": "removed"}
    rows = "".join(
        f'<tr class="diff-{names[kind]}"><td>{names[kind]}</td><td class="key">{h(key)}</td>'
        f"<td>{pretty(old) if kind != '+' else ''}</td><td>{pretty(new) if kind != '-' else ''}</td></tr>"
        for kind, key, old, new in diff
    )
    return (
        '<table class="diff" id="diff"><thead><tr><th></th><th>Key</th><th>Before</th>'
        f"<th>After</th></tr></thead><tbody>{rows}</tbody></table>"
    )


def _interrupts_html(studio: Studio, thread_id: str, view: Any, schemas: dict[str, Any]) -> str:
    if not view.interrupts:
        return ""
    can_answer = studio.allow_writes and studio.graph is not None
    items = []
    for item in view.interrupts:
        schema = schemas.get(item["id"])
        form = ""
        if can_answer:
            form = (
                f'<form class="json-form answer" data-post="/studio/api/answer" '
                f'data-extra="{h(json.dumps({"thread_id": thread_id, "interrupt_id": item["id"], "checkpoint_id": view.checkpoint_id, "checkpoint_ns": view.checkpoint_ns}))}">'
                f'<label>Answer (JSON)</label><textarea name="value" rows="3">{h(json.dumps(example_answer(schema)))}</textarea>'
                '<button type="submit">Resume</button><div class="form-error" role="alert"></div></form>'
            )
        items.append(
            f'<div class="interrupt" data-interrupt="{h(item["id"])}"><h4>{h(item["node"])} '
            f"<small>{h(item['id'])}</small></h4>{pretty(item['value'])}"
            + (
                f"<details><summary>response schema</summary>{pretty(schema)}</details>"
                if schema
                else ""
            )
            + form
            + "</div>"
        )
    return f'<section class="interrupts"><h3>Pending interrupts</h3>{"".join(items)}</section>'


def _actions_html(studio: Studio, thread_id: str, view: Any) -> str:
    if not (studio.allow_writes and studio.graph is not None):
        reason = "read-only" if not studio.allow_writes else "no graph loaded"
        return f'<p class="muted">Actions are off ({reason}).</p>'
    nodes = [n for n in studio.graph.nodes if not n.startswith("__")]
    options = "".join(f'<option value="{h(n)}">{h(n)}</option>' for n in nodes)
    extra = json.dumps(
        {
            "thread_id": thread_id,
            "checkpoint_id": view.checkpoint_id,
            "checkpoint_ns": view.checkpoint_ns,
        }
    )
    return f"""<section class="actions">
<form class="json-form update" data-post="/studio/api/update" data-extra="{h(extra)}">
<h3>Update state</h3><label>as node <select name="as_node"><option value="">(none)</option>{options}</select></label>
<label>Values (JSON)</label><textarea name="values" rows="3">{{}}</textarea>
<button type="submit">Update</button><div class="form-error" role="alert"></div></form>
<form class="run-form" data-thread="{h(thread_id)}" data-assistant="{h(studio.assistant_id)}">
<h3>Start a run</h3><label>Input (JSON, null to continue)</label><textarea name="input" rows="3">null</textarea>
<label>Stream modes</label><div class="modes">
{"".join(f'<label><input type="checkbox" name="mode" value="{m}" {"checked" if m in ("updates",) else ""}>{m}</label>' for m in ("values", "updates", "messages", "custom", "debug"))}
</div><button type="submit">Run</button><div class="form-error" role="alert"></div>
<ol class="events" id="events"></ol><p class="run-status" id="run-status"></p></form></section>"""


def _thread_body(
    studio: Studio, thread_id: str, checkpoint_id: str | None, ns: str, before: str | None
) -> str:
    view = checkpoint_view(studio.saver, studio.index, thread_id, checkpoint_id, ns)
    if view is None:
        raise StudioError(f"No thread '{thread_id}' (or no such checkpoint) in this database.", 404)
    namespaces = namespaces_of(studio.index, thread_id)
    ns_links = "".join(
        f'<a class="ns {"active" if n == ns else ""}" href="{h(thread_url(thread_id, ns=n))}">{h(n or "(root)")}</a>'
        for n in ["", *namespaces]
    )
    schemas: dict[str, Any] = {}
    drawing = ""
    if studio.graph is not None:
        config = {
            "configurable": {
                "thread_id": thread_id,
                "checkpoint_ns": ns,
                "checkpoint_id": view.checkpoint_id,
            }
        }
        try:
            snap = studio.graph.get_state(config, subgraphs=True) if not ns else None
        except Exception:  # a checkpoint the graph cannot read: show the saved data only
            snap = None
        if snap is not None:
            for task in snap.tasks:
                for intr in task.interrupts:
                    schemas[intr.id] = intr.response_schema
                    for item in view.interrupts:
                        if item["id"] == intr.id:
                            item["node"] = task.name
        try:
            drawing = studio.graph.get_graph(xray=1).draw_svg(state=snap)
        except Exception as exc:  # drawing is a help, never a reason to fail the page
            drawing = f'<p class="muted">No drawing: {h(type(exc).__name__)}: {h(exc)}</p>'
    errors = "".join(
        f'<div class="task-error"><b>{h(e["node"])}</b> {pretty(e["error"])}</div>'
        for e in view.errors
    )
    pending = "".join(
        f"<tr><td>{h(w['node'])}</td><td>{h(w['channel'])}</td><td>{pretty(w['value'])}</td></tr>"
        for w in view.pending_writes
    )
    parent = (
        f'<a href="{h(thread_url(thread_id, checkpoint=view.parent_id, ns=ns))}">{h(view.parent_id)}</a>'
        if view.parent_id
        else "none"
    )
    return f"""<h1>Thread <span id="thread-id">{h(thread_id)}</span></h1>
<p class="namespaces">Namespaces: {ns_links}</p>
<div class="columns"><section class="left"><h2>Timeline</h2>
{_timeline_html(studio, thread_id, ns, view.checkpoint_id, before)}</section>
<section class="right" id="checkpoint" data-checkpoint="{h(view.checkpoint_id)}">
<h2>Checkpoint {h(view.checkpoint_id)}</h2>
<p>step {h(view.step)} · source {h(view.source)} · {h(_short_time(view.created_at))} · parent {parent}</p>
<p>next: <b id="next-nodes">{h(", ".join(view.next) or "-")}</b></p>
{_interrupts_html(studio, thread_id, view, schemas)}
{f'<section class="errors"><h3>Failed tasks</h3>{errors}</section>' if errors else ""}
<h3>Changes against the parent</h3>{_diff_html(view.diff)}
<h3>State</h3><div id="state">{pretty(view.values)}</div>
<h3>Metadata</h3>{pretty(view.metadata)}
{f'<h3>Pending writes</h3><table class="pending"><thead><tr><th>Node</th><th>Channel</th><th>Value</th></tr></thead><tbody>{pending}</tbody></table>' if pending else ""}
{f'<h3>Graph</h3><div class="drawing">{drawing}</div>' if drawing else ""}
{_actions_html(studio, thread_id, view)}
</section></div>"""


async def thread_page(request: Request) -> Response:
    studio = _studio(request)
    thread_id = path_id(request, "thread_id")
    q = {k: identifier(v, k) for k, v in request.query_params.items()}
    body = await run_in_threadpool(
        _thread_body,
        studio,
        thread_id,
        q.get("checkpoint") or None,
        q.get("ns", ""),
        q.get("before") or None,
    )
    return HTMLResponse(page(studio, f"Thread {thread_id}", body, active="threads"))


# --------------------------------------------------------------------------- graph
async def graph_page(request: Request) -> Response:
    studio = _studio(request)
    if studio.graph is None:
        body = '<h1>Graph</h1><p class="muted">No graph loaded: start the studio with module:graph.</p>'
    else:
        svg = await run_in_threadpool(lambda: studio.graph.get_graph(xray=1).draw_svg())
        body = (
            f'<h1>Graph {h(getattr(studio.graph, "name", ""))}</h1><div class="drawing">{svg}</div>'
        )
    return HTMLResponse(page(studio, "Graph", body, active="graph"))


# --------------------------------------------------------------------------- store
def _store_body(studio: Studio, ns_text: str, query: str) -> str:
    if studio.store is None:
        return '<h1>Store</h1><p class="muted">No store: start the studio with --store FILE (SqliteStore) or --store URL (PostgresStore).</p>'
    namespaces = studio.store.list_namespaces(limit=500)
    ns_links = "".join(
        f'<li><a class="{"active" if ".".join(n) == ns_text else ""}" href="{h(url("/ui/store", ns=".".join(n)))}">{h(" / ".join(n))}</a></li>'
        for n in namespaces
    )
    prefix = tuple(p for p in ns_text.split(".") if p)
    items = studio.store.search(prefix, query=query or None, limit=100)
    rows = "".join(
        f'<tr class="item"><td>{h(" / ".join(i.namespace))}</td><td class="key">{h(i.key)}</td>'
        f"<td>{pretty(i.value)}</td><td>{h(_short_time(str(i.updated_at)))}</td></tr>"
        for i in items
    )
    return f"""<h1>Store</h1><div class="columns"><section class="left"><h2>Namespaces</h2>
<ul class="namespaces" id="store-namespaces">{ns_links or "<li>none</li>"}</ul></section>
<section class="right"><form class="filters" method="get" action="/ui/store">
<input type="hidden" name="ns" value="{h(ns_text)}">
<input type="search" name="q" placeholder="search items…" value="{h(query)}"><button>Search</button></form>
<table class="items" id="store-items"><thead><tr><th>Namespace</th><th>Key</th><th>Value</th><th>Updated</th></tr></thead>
<tbody>{rows or '<tr><td colspan="4">No items.</td></tr>'}</tbody></table></section></div>"""


async def store_page(request: Request) -> Response:
    studio = _studio(request)
    q = {k: identifier(v, k) for k, v in request.query_params.items()}
    body = await run_in_threadpool(_store_body, studio, q.get("ns", ""), q.get("q", ""))
    return HTMLResponse(page(studio, "Store", body, active="store"))


def page_routes() -> list[Route]:
    """The HTML pages."""
    return [
        Route("/", threads_page),
        Route("/ui/threads/{thread_id:path}", thread_page),
        Route("/ui/graph", graph_page),
        Route("/ui/store", store_page),
    ]
