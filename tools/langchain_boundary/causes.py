"""The known causes of differences, each with a *neutralizer*.

A neutralizer rewrites the recorded lines of both libraries so that one known
difference disappears (drop the duplicated model run, drop a metadata key LangGraph
omits...). :func:`explain` applies them to a differing scenario: the scenario is
*explained* when it matches once its causes are neutralized, and its causes are the
smallest set of neutralizers needed. So every cause listed for a scenario is checked,
not asserted: a cause that stops applying, or a difference no cause explains, shows.

Each cause names the item of issue 22 it belongs to; RUNTIME_DIFFS.md has the
diagnosis (what LangGraph emits, what we emit, the code responsible, the fix).
Neutralizers are deliberately narrow (by event kind, run name, metadata key), but a
few can only be coarse (e.g. "LangChain runs are orphaned" ignores parent links and
the order of runs within a step): they are used only where needed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, Iterable

from cause_base import (
    Cause,
    Item,
    Line,
    Rewrite,
    _drop_parents,
    _is_run,
    _metadata,
    _sub_text,
    _walk,
    neutralize,
)

__all__ = ["CAUSES", "Cause", "explain", "neutralize"]


CAUSES: list[Cause] = []


def _register(key: str, title: str, **options: Any) -> Callable[[Rewrite], Rewrite]:
    def register(fn: Rewrite) -> Rewrite:
        CAUSES.append(Cause(key, title, fn, **options))
        return fn

    return register


# ---------------------------------------------------------------- item 5

_SEQ_TAG = re.compile(r"^seq:step:\d+$")


@_register("item5-thread-id", "item 5: model-call metadata carries thread_id=None without a thread")
def _thread_id(part: str, item: Item, side: str, ctx: dict[str, Any]) -> Item:
    def drop(value: Any) -> Any:
        if isinstance(value, dict) and "thread_id" in value and value["thread_id"] is None:
            return {k: v for k, v in value.items() if k != "thread_id"}
        return value

    return _walk(item, drop)


# ---------------------------------------------------------------- item 1


@_register(
    "item1-lc-runs-orphaned",
    "item 1: LangChain runs made inside a node (models, chains, prompts, parsers, tools "
    "called by node code) have no parent run; LangGraph nests them under the node",
    flat=("tracer",),
)
def _orphaned(part: str, item: Item, side: str, ctx: dict[str, Any]) -> Item:
    if part == "events" and isinstance(item, dict):
        item = {k: v for k, v in item.items() if k != "parent_ids"}
    return item


_LC_RUN_ID = re.compile(r"lc_run--#\d+")


def _model_scan(part: str, items: list[Any], side: str, ctx: dict[str, Any]) -> None:
    own: dict[str, int] = ctx.setdefault("own", {})
    ctx["copies"] = any(
        isinstance(i, dict)
        and i.get("event") == "on_chat_model_start"
        and i.get("name") != "chat_model"
        for i in items
    )
    for item in items:
        if part == "tracer" and isinstance(item, dict) and item.get("run_type") == "llm":
            if item.get("outputs") not in ({}, None):
                own[str(item.get("name"))] = own.get(str(item.get("name")), 0) + 1


def _model_twice(part: str, item: Item, side: str, ctx: dict[str, Any]) -> Item | None:
    if not isinstance(item, dict):
        return item
    if part == "events" and str(item.get("event")).startswith("on_chat_model_"):
        if side == "stategraph" and item.get("name") == "chat_model" and ctx.get("copies"):
            return None
        item = {**item, "name": "<model>"}  # without a copy, LangChain's run is 'chat_model'
    if part == "tracer" and item.get("run_type") == "llm":
        own: dict[str, int] = ctx.get("own", {})
        name = str(item.get("name"))
        if side == "stategraph" and item.get("outputs") in ({}, None) and own.get(name, 0) > 0:
            own[name] -= 1
            return None  # the hook's copy (no outputs: LangChain's tracer cannot read it)
        meta = {k: v for k, v in _metadata(item).items() if k.startswith(("ls_", "lc_"))}
        return {**item, "inputs": "<prompts>", "outputs": "<model output>", "metadata": meta}
    if part == "events":
        item = _sub_text(item, _LC_RUN_ID, "lc_run--#")
    return item


CAUSES.append(
    Cause(
        "item1-model-reported-twice",
        "item 1: a LangChain chat model called in a node is reported twice: its own run "
        "(named 'chat_model' in events v2, orphaned in tracers) and a copy re-emitted from "
        "the model-call hook (own run id, no LangChain tags; in tracers no outputs and "
        "stategraph's messages as input; inside a subgraph only the copy)",
        rewrite=_model_twice,
        scan=_model_scan,
    )
)


def _no_seq_tags(value: Any) -> Any:
    if isinstance(value, dict) and isinstance(value.get("tags"), list):
        tags = [t for t in value["tags"] if not _SEQ_TAG.match(str(t))]
        if not tags and "langgraph_node" in value:  # messages-mode metadata: no key
            return {k: v for k, v in value.items() if k != "tags"}
        value = {**value, "tags": tags}
    return value


@_register(
    "item1-seq-tags",
    "item 1/2: model and tool runs lack LangGraph's seq:step:N tags (and the messages "
    "mode's metadata carries them where LangGraph leaves them out)",
)
def _seq_tags(part: str, item: Item, side: str, ctx: dict[str, Any]) -> Item:
    if part == "stream:messages":
        return _walk(item, _no_seq_tags)
    return _no_seq_tags(item)


_LC_RUN_SUFFIX = re.compile(r"(lc_run--#\d*)-\d+")


@_register(
    "item1-forced-streaming",
    "item 1: with any callback handler a LangChain model streams under the hood (the "
    "hook bridge is a streaming handler); LangGraph streams only for the messages mode "
    "and astream_events (tracers see tokens; message ids lose LangChain's '-0')",
)
def _forced_streaming(part: str, item: Item, side: str, ctx: dict[str, Any]) -> Item:
    if part != "tracer" or not isinstance(item, dict):
        return item
    item = {k: v for k, v in item.items() if k != "tokens"}
    return _sub_text(item, _LC_RUN_SUFFIX, r"\1")


@_register(
    "item1-inherited-metadata",
    "item 1: LangChain runs inside a node lack the metadata LangGraph passes down (ls_integration)",
)
def _inherited_metadata(part: str, item: Item, side: str, ctx: dict[str, Any]) -> Item:
    meta = _metadata(item)
    if part in ("events", "tracer") and meta.get("ls_integration") == "LIB":
        item = {**item, "metadata": {k: v for k, v in meta.items() if k != "ls_integration"}}
    return item


@_register(
    "item1-node-config-no-stream",
    "item 1: a model given the node's own config (model.invoke(msgs, config), the "
    "documented pattern) does not stream its tokens to astream_events (the config's "
    "callbacks lack the run's streaming handler)",
)
def _config_no_stream(part: str, item: Item, side: str, ctx: dict[str, Any]) -> Item | None:
    if part != "events" or not isinstance(item, dict):
        return item
    if item.get("event") == "on_chat_model_stream":
        return None
    return _sub_text(item, _LC_RUN_SUFFIX, r"\1")


_RUN_TYPE_EVENT = re.compile(r"^on_(prompt|parser)_(start|end|stream)$")


@_register(
    "item11-run-type-events",
    "item 11: prompt and parser runs (with_structured_output, LCEL) become on_chain_* "
    "events instead of on_prompt_* / on_parser_*",
)
def _run_type_events(part: str, item: Item, side: str, ctx: dict[str, Any]) -> Item:
    if part == "events" and isinstance(item, dict):
        match = _RUN_TYPE_EVENT.match(str(item.get("event")))
        if match:
            item = {**item, "event": f"on_chain_{match.group(2)}"}
    return item


@_register(
    "item1-messages-extra",
    "item 1 (found here): the messages mode emits whole (not streamed) messages that "
    "LangGraph does not: entrypoint.final(save=...) values, a Command(graph=PARENT) "
    "update's ToolMessage, @task results seen from the entrypoint",
)
def _messages_extra(part: str, item: Item, side: str, ctx: dict[str, Any]) -> Item | None:
    if part != "stream:messages" or not isinstance(item, dict):
        return item
    data = item.get("data")
    if isinstance(data, list) and len(data) == 2 and isinstance(data[0], dict):
        if not str(data[0].get("~cls", "")).endswith("Chunk"):
            return None  # whole messages are compared no further under this cause
    return item


# the configurable keys the scenarios pass (see scen_*.py)
_SCENARIO_CONFIGURABLE = ("user_id", "user_name", "max_results")


@_register(
    "item1-configurable-metadata",
    "item 1 (found here): run metadata copies every simple configurable value "
    "(user_id, max_results...); LangGraph with langchain-core 1.x copies only thread_id",
)
def _configurable_metadata(part: str, item: Item, side: str, ctx: dict[str, Any]) -> Item:
    def drop(value: Any) -> Any:
        if isinstance(value, dict) and any(k in value for k in _SCENARIO_CONFIGURABLE):
            return {k: v for k, v in value.items() if k not in _SCENARIO_CONFIGURABLE}
        return value

    if part in ("events", "tracer") and isinstance(item, dict) and "metadata" in item:
        return {**item, "metadata": drop(_metadata(item))}
    if part == "stream:messages":
        return _walk(item, drop)
    return item


_EXC_CLASS = re.compile(r"^([A-Za-z_.]+)\(")
_PARENT_GRAPH = re.compile(r"graph='[^']*'")


@_register(
    "item1-error-rendering",
    "item 1: tracers receive errors without their traceback (LangChain's tracer then "
    "renders the message twice), and a ParentCommand shows graph='__parent__' where "
    "LangGraph shows the namespace it resolved",
)
def _error_rendering(part: str, item: Item, side: str, ctx: dict[str, Any]) -> Item:
    if part == "tracer" and isinstance(item, dict) and isinstance(item.get("error"), str):
        match = _EXC_CLASS.match(item["error"])
        item = {**item, "error": match.group(1) if match else item["error"]}
    return item


@_register(
    "item2-pre-model-hook-input",
    "LangGraph quirk (not copied): with a pre_model_hook, LangGraph overwrites the "
    "messages of the agent node's input state with the hook's llm_input_messages, so "
    "the end events of the agent node and of call_model show that altered input; "
    "stategraph leaves the node's input as it was",
    runtime=False,
)
def _hook_input(part: str, item: Item, side: str, ctx: dict[str, Any]) -> Item:
    if (
        part == "events"
        and isinstance(item, dict)
        and item.get("event") == "on_chain_end"
        and item.get("name") in ("agent", "call_model")
    ):
        data = item.get("data")
        if isinstance(data, dict) and "input" in data:
            return {**item, "data": {k: v for k, v in data.items() if k != "input"}}
    return item


CAUSES.append(
    Cause(
        "lg-root-output-unfiltered",
        "LangGraph quirk (not copied): under astream_events the root run's output holds "
        "every state key, also those the output schema leaves out (llm_input_messages); "
        "stategraph reports the graph's real output",
        rewrite=lambda part, item, side, ctx: (
            _walk(
                item,
                lambda v: (
                    {k: x for k, x in v.items() if k != "llm_input_messages"}
                    if isinstance(v, dict)
                    else v
                ),
            )
            if part == "events"
            else item
        ),
        flat=("events",),
        runtime=False,
    )
)


# ---------------------------------------------------------------- item 2

_AGENT_CHAIN_RUNS = {"call_model", "acall_model", "RunnableSequence", "Prompt"}
_AGENT_NODES = {"agent", "generate_structured_response"}


def _inner_node_run(item: dict[str, Any]) -> bool:
    """LangGraph's run of a node's own function inside the node run (same name, no
    graph:step tag), as create_react_agent's nodes have."""
    meta = _metadata(item)
    tags = item.get("tags") or []
    return item.get("name") == meta.get("langgraph_node") and not any(
        str(t).startswith("graph:step:") for t in tags
    )


@_register(
    "item2-agent-chain-runs",
    "item 2: create_react_agent's model call is not wrapped in LangGraph's chain runs "
    "(call_model > RunnableSequence > Prompt + model)",
)
def _agent_chains(part: str, item: Item, side: str, ctx: dict[str, Any]) -> Item | None:
    if not _is_run(item, part):
        return item
    dropped: set[str] = ctx.setdefault("dropped", set())
    in_agent = _metadata(item).get("langgraph_node") in _AGENT_NODES
    if in_agent and (item.get("name") in _AGENT_CHAIN_RUNS or _inner_node_run(item)):
        if part == "events":
            dropped.add(item.get("run_id"))
        return None
    return _drop_parents(item, dropped)


def _tool_key(item: dict[str, Any]) -> str:
    meta = {k: v for k, v in _metadata(item).items() if k != "checkpoint_ns"}
    core = {
        k: v for k, v in item.items() if k in ("event", "run_type", "data", "inputs", "outputs")
    }
    return json.dumps([core, meta], sort_keys=True)


@_register(
    "item2-tool-run-twice",
    "item 2: a LangChain tool run by ToolNode is reported twice: its own run (named "
    "'tool' in events v2, orphaned) and a copy re-emitted from the tool-call hook (the "
    "copy reports ToolNode's processed output and no interrupt; a tool called directly "
    "in a node is reported only as the orphaned 'tool' run)",
)
def _tool_twice(part: str, item: Item, side: str, ctx: dict[str, Any]) -> Item | None:
    if not _is_run(item, part):
        return item
    is_tool = str(item.get("event")).startswith("on_tool_") or item.get("run_type") == "tool"
    if not is_tool:
        return item
    data = item.get("data")
    error = data.get("error") if isinstance(data, dict) else item.get("error")
    if "GraphInterrupt" in json.dumps(error):
        return None  # LangChain's own run fails with the interrupt; the copy does not
    if side == "stategraph" and part == "tracer" and not item.get("error"):
        if item.get("outputs") in ({}, None):
            return None  # the copy of a call that interrupted: started, never ended
    item = {k: v for k, v in item.items() if k not in ("parent_ids", "run_id", "~root")}
    item["metadata"] = {k: v for k, v in _metadata(item).items() if k != "checkpoint_ns"}
    if part == "events":
        item["name"] = "<tool>"
    if isinstance(data, dict):
        data = {k: v for k, v in data.items() if k != "tool_call_id"}
        if "error" in data:
            data["error"] = "<tool error>"
        item["data"] = data
    if item.get("error"):
        item["error"] = "<tool error>"

    def unnamed(value: Any) -> Any:
        if isinstance(value, dict) and value.get("~cls") == "ToolMessage":
            return {k: v for k, v in value.items() if k != "name"}
        return value

    item = _walk(item, unnamed)
    seen: set[str] = ctx.setdefault("seen", set())
    key = _tool_key(item)
    if key in seen:
        return None
    seen.add(key)
    return item


# ---------------------------------------------------------------- item 4

CAUSES.append(
    Cause(
        "item4-dispatch-custom-event",
        "item 4: langchain-core's dispatch_custom_event / adispatch_custom_event in a node "
        "fails (no parent run id); LangGraph emits on_custom_event and the run completes",
        swallows="Unable to dispatch an adhoc event without a parent run id",
    )
)


# ---------------------------------------------------------------- item 6

_TASK_KEYS = (
    "checkpoint_ns",
    "langgraph_checkpoint_ns",
    "langgraph_node",
    "langgraph_path",
    "langgraph_step",
    "langgraph_triggers",
)


@_register(
    "item6-task-attribution",
    "item 6: a model called inside a @task is attributed to the entrypoint (metadata "
    "and parent run), not to the task as in LangGraph",
)
def _task_attribution(part: str, item: Item, side: str, ctx: dict[str, Any]) -> Item:
    def strip(meta: Any) -> Any:
        if isinstance(meta, dict) and "langgraph_node" in meta:
            return {k: v for k, v in meta.items() if k not in _TASK_KEYS}
        return meta

    if part == "stream:messages":
        return _walk(item, strip)
    if (
        part == "events"
        and isinstance(item, dict)
        and str(item.get("event")).startswith("on_chat_model")
    ):
        return {
            **{k: v for k, v in item.items() if k != "parent_ids"},
            "metadata": strip(_metadata(item)),
        }
    if part == "tracer" and isinstance(item, dict) and item.get("run_type") == "llm":
        return {**item, "metadata": strip(_metadata(item))}
    return item


@_register(
    "item6-tool-in-task",
    "item 6: a LangChain tool invoked inside an entrypoint or @task is reported as an "
    "orphaned tool run; LangGraph reports no run for it",
)
def _tool_in_task(part: str, item: Item, side: str, ctx: dict[str, Any]) -> Item | None:
    if side != "stategraph" or not _is_run(item, part):
        return item
    is_tool = str(item.get("event")).startswith("on_tool_") or item.get("run_type") == "tool"
    orphan = item.get("name") == "tool" if part == "events" else bool(item.get("~root"))
    if (
        is_tool
        and orphan
        and _metadata(item).get("langgraph_triggers") in (["__start__"], ["__pregel_push"])
    ):
        return None
    return item


def _ends_only(value: Any) -> Any:
    if isinstance(value, str) and value.count("|") >= 1:
        segments = value.split("|")
        return f"{segments[0]}|{segments[-1]}"
    return value


def _graph_in_task(part: str, item: Item, side: str, ctx: dict[str, Any]) -> Item | None:
    if not isinstance(item, dict):
        return item
    if part.startswith("stream:") and isinstance(item.get("ns"), list):
        return {**item, "ns": item["ns"][:1]}
    if part in ("events", "tracer") and "metadata" in item and ctx.get("inner_root"):
        meta = _metadata(item)
        if item.get("name") == "LangGraph" and "langgraph_node" in meta:
            return None  # the inner graph's own root run (LangGraph nests it in the task)
        if item.get("event") == "on_chain_stream" and "|" in str(
            meta.get("langgraph_checkpoint_ns")
        ):
            return None
        meta = {
            k: (str(v).split("|")[0] if k == "checkpoint_ns" else _ends_only(v))
            for k, v in meta.items()
        }
        return {**item, "metadata": meta}
    return item


def _inner_root_scan(part: str, items: list[Any], side: str, ctx: dict[str, Any]) -> None:
    ctx["inner_root"] = any(
        isinstance(i, dict) and i.get("name") == "LangGraph" and "langgraph_node" in _metadata(i)
        for i in items
    )


CAUSES.append(
    Cause(
        "item6-graph-in-task-ns",
        "item 6: a graph invoked inside a @task gets no namespace segment of its own with "
        "subgraphs=True (LangGraph: (entrypoint:<id>, task:<id>)); in events and traces it "
        "appears as a separate graph run instead of inside the task",
        rewrite=_graph_in_task,
        scan=_inner_root_scan,
    )
)


def _is_task_result(data: Any) -> bool:
    payload = data.get("payload", data) if isinstance(data, dict) else None
    result = payload.get("result") if isinstance(payload, dict) else None
    return isinstance(result, dict) and "__return__" in result


@_register(
    "item6-cached-task",
    "item 6: a cached @task is reported as run (task result, chain run) and its updates "
    "chunk lacks LangGraph's {'__metadata__': {'cached': True}}",
)
def _cached_task(part: str, item: Item, side: str, ctx: dict[str, Any]) -> Item | None:
    if not isinstance(item, dict):
        return item
    data = item.get("data")
    if part == "stream:updates" and isinstance(data, dict) and "__metadata__" in data:
        return {**item, "data": {k: v for k, v in data.items() if k != "__metadata__"}}
    chunk = data.get("chunk") if part == "events" and isinstance(data, dict) else None
    if isinstance(chunk, dict) and "__metadata__" in chunk:
        chunk = {k: v for k, v in chunk.items() if k != "__metadata__"}
        return {**item, "data": {**data, "chunk": chunk}}
    if part in ("stream:tasks", "stream:debug") and _is_task_result(data):
        return None
    if part == "events" and "event" in item:
        path = _metadata(item).get("langgraph_path")
        if isinstance(path, list) and path[:1] == ["__pregel_push"] and len(path) == 4:
            return None
    if part == "tracer" and "run_type" in item:
        path = _metadata(item).get("langgraph_path")
        if isinstance(path, list) and path[:1] == ["__pregel_push"] and len(path) == 4:
            return None
    return item


def _payload(item: Any) -> Any:
    data = item.get("data") if isinstance(item, dict) else None
    return data.get("payload", data) if isinstance(data, dict) else None


def _entrypoint_scan(part: str, items: list[Any], side: str, ctx: dict[str, Any]) -> None:
    names: set[str] = ctx.setdefault("entrypoints", set())
    for item in items:
        payload = _payload(item)
        if isinstance(payload, dict) and payload.get("triggers") == ["__start__"]:
            names.add(str(payload.get("name")))


def _entrypoint_result(part: str, item: Item, side: str, ctx: dict[str, Any]) -> Item:
    if part not in ("stream:tasks", "stream:debug") or not isinstance(item, dict):
        return item
    data = item.get("data")
    payload = _payload(item)
    if not isinstance(payload, dict) or not isinstance(data, dict):
        return item
    entrypoints: set[str] = ctx.get("entrypoints", set())
    if "result" in payload and str(payload.get("name")) in entrypoints and payload["result"]:
        payload = {**payload, "result": "<entrypoint result>"}
        data = {**data, "payload": payload} if "payload" in data else payload
        return {**item, "data": data}
    return item


CAUSES.append(
    Cause(
        "item6-entrypoint-result",
        "item 6 (found here): the tasks/debug result of an entrypoint returning a dict is "
        "the dict itself, and of one returning a list its items merged (LangGraph: "
        "{'__end__': value}, as for any other return value)",
        rewrite=_entrypoint_result,
        scan=_entrypoint_scan,
    )
)


CAUSES.append(
    Cause(
        "concurrent-event-order",
        "events of tasks running at the same time (a functional entrypoint and its "
        "tasks, parallel async branches) interleave in another order; LangGraph's own "
        "order varies from run to run there (the recording keeps every variant seen)",
        flat=("events",),
    )
)


# ---------------------------------------------------------------- item 7

_MASKED_ID = re.compile(r"^#\d*$")


@_register(
    "item7-message-ids",
    "item 7 (deliberate): add_messages gives ids to copies; LangGraph sets them on the "
    "node's own message objects, so observers holding those (tracer outputs, updates "
    "chunks of a resumed or parent-command run) show the id",
    runtime=False,
)
def _message_ids(part: str, item: Item, side: str, ctx: dict[str, Any]) -> Item:
    def drop(value: Any) -> Any:
        if (
            isinstance(value, dict)
            and str(value.get("~cls", "")).endswith("Message")
            and _MASKED_ID.match(str(value.get("id", "")))
        ):
            return {k: v for k, v in value.items() if k != "id"}
        return value

    return _walk(item, drop)


CAUSES.append(
    Cause(
        "item7-ids-reused",
        "item 7: two runs of one graph without a checkpointer reuse the same task and "
        "namespace ids (LangGraph: fresh ids per run)",
        per_step_ids=True,
    )
)


# ---------------------------------------------------------------- item 8


@_register(
    "item8-lambda-name",
    "item 8: a lambda routing function is named '<lambda>' in events and traces "
    "(LangGraph: 'Unnamed')",
)
def _lambda_name(part: str, item: Item, side: str, ctx: dict[str, Any]) -> Item:
    if _is_run(item, part) and item.get("name") == "<lambda>":
        return {**item, "name": "Unnamed"}
    return item


@_register(
    "item8-remaining-steps",
    "item 8: under astream_events LangGraph's runs get langchain-core's default "
    "recursion_limit (25), so RemainingSteps differs",
)
def _remaining_steps(part: str, item: Item, side: str, ctx: dict[str, Any]) -> Item:
    if part != "events":
        return item

    def drop(value: Any) -> Any:
        if isinstance(value, dict) and "remaining_steps" in value:
            return {k: v for k, v in value.items() if k != "remaining_steps"}
        return value

    return _walk(item, drop)


# ---------------------------------------------------------------- concurrency

CAUSES.append(
    Cause(
        "async-completion-order",
        "stategraph: the results of concurrent async tasks are streamed in an order that "
        "varies from run to run (LangGraph: the same order every run)",
        flat=(
            "stream:updates",
            "stream:tasks",
            "stream:debug",
            "stream:values",
            "stream:messages",
            "stream:checkpoints",
        ),
    )
)


# ---------------------------------------------------------------- order

# a neutralizer sees the items as the ones before it left them: the tool-in-task one
# must see stategraph's orphaned tool runs before the tool-run-twice one renames them
_FIRST = ("item6-tool-in-task",)
CAUSES.sort(key=lambda c: 0 if c.key in _FIRST else 1)


# ---------------------------------------------------------------- explaining


def _canonical(parts: dict[str, list[list[Line]]], side: str, causes: list[Cause]) -> Any:
    return {
        part: [neutralize(part, variant, side, causes) for variant in variants]
        for part, variants in parts.items()
    }


def _matches(ref: dict[str, Any], cand: dict[str, Any], causes: list[Cause]) -> bool:
    from compare import compare_parts

    return not compare_parts(
        _canonical(ref, "langgraph", causes), _canonical(cand, "stategraph", causes)
    )


def _swallowed(cand: dict[str, Any]) -> list[str]:
    text = json.dumps(cand)
    return [c.key for c in CAUSES if c.swallows and c.swallows in text]


def explain(
    ref: dict[str, Any], cand: dict[str, Any], prefer: Iterable[str] = ()
) -> list[str] | None:
    """The keys of the causes explaining why ``cand`` differs from ``ref`` (the parts of
    one scenario), or ``None`` when the known causes do not explain it all.

    When several sets of causes would explain it, those in ``prefer`` (the scenario's
    expected causes) are kept over others: a reordering that the expected
    ``concurrent-event-order`` explains is not blamed on a cause that happens to drop
    the reordered events."""
    swallowed = _swallowed(cand)
    if swallowed:
        return swallowed
    if not _matches(ref, cand, CAUSES):
        return None
    needed = list(CAUSES)
    # try to do without the coarse causes first (those that flatten a part), so a
    # scenario is explained by the most specific causes that suffice
    preferred = set(prefer)
    for one in sorted(CAUSES, key=lambda c: (c.key in preferred, not c.flat, CAUSES.index(c))):
        trial = [c for c in needed if c is not one]
        if _matches(ref, cand, trial):
            needed = trial
    return [c.key for c in needed]
