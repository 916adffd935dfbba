"""``RemoteGraph``: a graph served over LangGraph Server's HTTP API, used like a local one.

``RemoteGraph("agent", url="http://127.0.0.1:2024")`` talks to any server that speaks
that API (``stategraph studio``, LangGraph Server): ``invoke``/``stream`` run it,
``get_state``/``get_state_history``/``update_state`` read and change its threads,
``get_graph`` fetches its drawing. It can also be a node of a local graph: an interrupt
inside the remote graph then pauses the local one.

By default it uses a small HTTP client built on the standard library
(:mod:`stategraph.pregel._remote_client`); LangGraph's SDK clients (``get_client`` /
``get_sync_client``) can be passed as ``client=`` / ``sync_client=`` instead.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import Any

from stategraph.config import RunnableConfig
from stategraph.drawing.graph import Edge, Graph, Node
from stategraph.errors import GraphInterrupt
from stategraph.pregel._remote_client import AsyncHttpClient, HttpClient, RemoteError, StreamPart
from stategraph.types import Command, Interrupt, PregelTask, Send, StateSnapshot

__all__ = ["RemoteGraph", "RemoteError", "StreamPart"]

_INTERRUPT = "__interrupt__"
_DROPPED_CONFIGURABLE = ("checkpoint_map", "checkpoint_id", "checkpoint_ns")
_PRIMITIVES = (str, int, float, bool, type(None))


def _sanitize(value: Any) -> tuple[bool, Any]:
    """``(ok, json_value)``: primitives, lists and str-keyed dicts of them."""
    if isinstance(value, _PRIMITIVES):
        return True, value
    if isinstance(value, (list, tuple)):
        return True, [v for ok, v in map(_sanitize, value) if ok]
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            ok, clean = _sanitize(v)
            if ok and isinstance(k, str):
                out[k] = clean
        return True, out
    return False, None


def _merge_configs(base: Mapping[str, Any] | None, extra: Mapping[str, Any] | None) -> dict:
    out: dict[str, Any] = dict(base or {})
    for key, value in (extra or {}).items():
        if key in ("configurable", "metadata") and isinstance(value, Mapping):
            out[key] = {**(out.get(key) or {}), **value}
        elif key == "tags" and value:
            out[key] = [*(out.get(key) or []), *value]
        else:
            out[key] = value
    return out


_V3_SUPPORTED_KWARGS = frozenset({"metadata", "headers"})
"""Keyword arguments a v3 remote run stream takes besides input and config."""


def _merge_tracing_headers(headers: Mapping[str, str] | None) -> dict[str, str]:
    """``headers`` plus LangSmith's trace headers of the current run, when there is one."""
    out = dict(headers or {})
    try:
        from langsmith.run_helpers import (  # type: ignore[import-not-found]
            get_current_run_tree,
        )
    except ImportError:
        return out
    run_tree = get_current_run_tree()
    if run_tree is not None:
        out.update(run_tree.to_headers())
    return out


def _interrupt_of(item: Any) -> Interrupt:
    if isinstance(item, Interrupt):
        return item
    if isinstance(item, Mapping):
        return Interrupt(
            item.get("value"),
            item.get("id") or "placeholder-id",
            response_schema=item.get("response_schema"),
        )
    return Interrupt(item)


def _command_body(cmd: Command) -> dict[str, Any]:
    body: dict[str, Any] = {}
    if cmd.resume is not None:
        body["resume"] = cmd.resume
    if cmd.update is not None:
        body["update"] = cmd.update
    if cmd.goto:
        gotos = cmd.goto if isinstance(cmd.goto, (list, tuple)) else [cmd.goto]
        body["goto"] = [
            {"node": g.node, "input": g.arg} if isinstance(g, Send) else g for g in gotos
        ]
    return body


def _part(chunk: Any) -> tuple[str, Any, Any]:
    if isinstance(chunk, Mapping):
        return str(chunk.get("event")), chunk.get("data"), chunk.get("id")
    event, data = chunk.event, chunk.data
    return event, data, getattr(chunk, "id", None)


class RemoteGraph:
    """A graph deployed behind LangGraph Server's HTTP API, with the local graph methods.

    ``assistant_id`` names the assistant (or graph id) on the server. Give ``url``
    (plus ``api_key`` / ``headers``) to use the built-in HTTP client, or SDK-shaped
    ``client`` (async) / ``sync_client`` objects. ``config`` is merged into every call.
    """

    def __init__(
        self,
        assistant_id: str,
        /,
        *,
        url: str | None = None,
        api_key: str | None = None,
        headers: Mapping[str, str] | None = None,
        client: Any = None,
        sync_client: Any = None,
        config: Mapping[str, Any] | None = None,
        name: str | None = None,
        distributed_tracing: bool = False,
    ) -> None:
        self.assistant_id = assistant_id
        self.name = name or assistant_id
        self.config: dict[str, Any] = dict(config or {})
        self.distributed_tracing = distributed_tracing
        self.url = url
        if client is None and url is not None:
            client = AsyncHttpClient(url, api_key=api_key, headers=headers)
        if sync_client is None and url is not None:
            sync_client = HttpClient(url, api_key=api_key, headers=headers)
        self.client = client
        self.sync_client = sync_client

    # ------------------------------------------------------------------ plumbing
    @property
    def graph_id(self) -> str:
        """The assistant (or graph) id on the server; same as ``assistant_id``."""
        return self.assistant_id

    @graph_id.setter
    def graph_id(self, value: str) -> None:
        self.assistant_id = value

    def _sync(self) -> Any:
        if self.sync_client is None:
            raise ValueError(
                f"RemoteGraph '{self.name}' has no sync client: pass url=... or sync_client=..."
            )
        return self.sync_client

    def _async(self) -> Any:
        if self.client is None:
            raise ValueError(
                f"RemoteGraph '{self.name}' has no async client: pass url=... or client=..."
            )
        return self.client

    def copy(self, update: Mapping[str, Any] | None = None) -> RemoteGraph:
        """A shallow copy with attributes from ``update`` replaced."""
        new = object.__new__(RemoteGraph)
        new.__dict__.update(self.__dict__)
        new.__dict__.update(update or {})
        return new

    def with_config(self, config: Mapping[str, Any] | None = None, **kwargs: Any) -> RemoteGraph:
        """A copy whose config is this one's merged with ``config`` (and keyword items)."""
        return self.copy({"config": _merge_configs(self.config, {**(config or {}), **kwargs})})

    def _sanitize_config(self, config: Mapping[str, Any]) -> dict[str, Any]:
        """The part of a config the server can take: JSON values only, no checkpoint keys."""
        out: dict[str, Any] = {}
        if "recursion_limit" in config:
            out["recursion_limit"] = config["recursion_limit"]
        if "tags" in config:
            out["tags"] = [t for t in config["tags"] or () if isinstance(t, str)]
        if "metadata" in config:
            out["metadata"] = _sanitize(config["metadata"] or {})[1]
        if "configurable" in config:
            configurable = {
                k: v
                for k, v in (config["configurable"] or {}).items()
                if isinstance(k, str) and k not in _DROPPED_CONFIGURABLE and not k.startswith("__")
            }
            out["configurable"] = _sanitize(configurable)[1]
        return out

    def _thread_args(
        self, config: Mapping[str, Any] | None, what: str
    ) -> tuple[dict[str, Any], str, dict[str, Any] | None]:
        merged = _merge_configs(self.config, config)
        conf = merged.get("configurable") or {}
        thread_id = conf.get("thread_id")
        if not thread_id:
            raise ValueError(
                f"RemoteGraph.{what} needs config['configurable']['thread_id'] "
                "(the thread on the server)."
            )
        checkpoint = None
        if conf.get("checkpoint_id"):
            checkpoint = {
                k: conf[k]
                for k in ("thread_id", "checkpoint_ns", "checkpoint_id", "checkpoint_map")
                if k in conf
            }
        return merged, str(thread_id), checkpoint

    # ------------------------------------------------------------------ state
    def _snapshot(self, state: Mapping[str, Any]) -> StateSnapshot:
        tasks = []
        interrupts: list[Interrupt] = []
        for task in state.get("tasks") or ():
            task_interrupts = tuple(_interrupt_of(i) for i in task.get("interrupts") or ())
            interrupts.extend(task_interrupts)
            child = task.get("state")
            if isinstance(child, Mapping) and "values" in child:
                child_state: Any = self._snapshot(child)
            elif task.get("checkpoint"):
                child_state = {"configurable": task["checkpoint"]}
            else:
                child_state = None
            tasks.append(
                PregelTask(
                    id=task["id"],
                    name=task["name"],
                    path=(),
                    error=task.get("error"),
                    interrupts=task_interrupts,
                    state=child_state,
                    result=task.get("result"),
                )
            )
        parent = state.get("parent_checkpoint")
        return StateSnapshot(
            values=state.get("values"),
            next=tuple(state.get("next") or ()),
            config={"configurable": state.get("checkpoint")},
            metadata=state.get("metadata"),
            created_at=state.get("created_at"),
            parent_config={"configurable": parent} if parent else None,
            tasks=tuple(tasks),
            interrupts=tuple(interrupts),
        )

    def get_state(self, config: Mapping[str, Any], *, subgraphs: bool = False) -> StateSnapshot:
        """The thread's state at its latest checkpoint (or the one the config names)."""
        _, thread_id, checkpoint = self._thread_args(config, "get_state")
        state = self._sync().threads.get_state(
            thread_id=thread_id, checkpoint=checkpoint, subgraphs=subgraphs
        )
        return self._snapshot(state)

    async def aget_state(
        self, config: Mapping[str, Any], *, subgraphs: bool = False
    ) -> StateSnapshot:
        """Async twin of :meth:`get_state`."""
        _, thread_id, checkpoint = self._thread_args(config, "aget_state")
        state = await self._async().threads.get_state(
            thread_id=thread_id, checkpoint=checkpoint, subgraphs=subgraphs
        )
        return self._snapshot(state)

    def _history_args(
        self, config: Mapping[str, Any], filter: Any, before: Any, limit: Any, what: str
    ) -> dict[str, Any]:
        _, thread_id, checkpoint = self._thread_args(config, what)
        if isinstance(before, Mapping):
            before = (before.get("configurable") or {}).get("checkpoint_id") and dict(
                before["configurable"]
            )
        return {
            "thread_id": thread_id,
            "limit": limit if limit is not None else 10,
            "before": before,
            "metadata": filter,
            "checkpoint": checkpoint,
        }

    def get_state_history(
        self,
        config: Mapping[str, Any],
        *,
        filter: Mapping[str, Any] | None = None,
        before: Mapping[str, Any] | None = None,
        limit: int | None = None,
    ) -> Iterator[StateSnapshot]:
        """The thread's checkpoints, newest first (``limit`` defaults to the server's 10)."""
        args = self._history_args(config, filter, before, limit, "get_state_history")
        for state in self._sync().threads.get_history(**args):
            yield self._snapshot(state)

    async def aget_state_history(
        self,
        config: Mapping[str, Any],
        *,
        filter: Mapping[str, Any] | None = None,
        before: Mapping[str, Any] | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[StateSnapshot]:
        """Async twin of :meth:`get_state_history`."""
        args = self._history_args(config, filter, before, limit, "aget_state_history")
        for state in await self._async().threads.get_history(**args):
            yield self._snapshot(state)

    def update_state(
        self,
        config: Mapping[str, Any],
        values: dict[str, Any] | Any | None,
        as_node: str | None = None,
        task_id: str | None = None,
    ) -> dict[str, Any]:
        """Write ``values`` as if ``as_node`` returned them; returns the new checkpoint's config."""
        _, thread_id, checkpoint = self._thread_args(config, "update_state")
        resp = self._sync().threads.update_state(
            thread_id=thread_id, values=values, as_node=as_node, checkpoint=checkpoint
        )
        return {"configurable": resp["checkpoint"]}

    async def aupdate_state(
        self,
        config: Mapping[str, Any],
        values: dict[str, Any] | Any | None,
        as_node: str | None = None,
        task_id: str | None = None,
    ) -> dict[str, Any]:
        """Async twin of :meth:`update_state`."""
        _, thread_id, checkpoint = self._thread_args(config, "aupdate_state")
        resp = await self._async().threads.update_state(
            thread_id=thread_id, values=values, as_node=as_node, checkpoint=checkpoint
        )
        return {"configurable": resp["checkpoint"]}

    # ------------------------------------------------------------------ drawing
    @staticmethod
    def _graph_of(data: Mapping[str, Any]) -> Graph:
        graph = Graph()
        for item in data.get("nodes") or ():
            node_data = item.get("data")
            name = node_data.get("name") if isinstance(node_data, Mapping) else None
            graph.nodes[item["id"]] = Node(
                id=item["id"],
                name=name or item["id"],
                data=node_data,
                metadata=item.get("metadata"),
            )
        for edge in data.get("edges") or ():
            graph.edges.append(
                Edge(
                    source=edge["source"],
                    target=edge["target"],
                    data=edge.get("data"),
                    conditional=bool(edge.get("conditional", False)),
                )
            )
        return graph

    def get_graph(
        self, config: Mapping[str, Any] | None = None, *, xray: int | bool = False
    ) -> Graph:
        """The server's drawing of the graph (``xray`` expands subgraphs)."""
        return self._graph_of(self._sync().assistants.get_graph(self.assistant_id, xray=xray))

    async def aget_graph(
        self, config: Mapping[str, Any] | None = None, *, xray: int | bool = False
    ) -> Graph:
        """Async twin of :meth:`get_graph`."""
        data = await self._async().assistants.get_graph(self.assistant_id, xray=xray)
        return self._graph_of(data)

    # ------------------------------------------------------------------ running
    def _tracing_headers(self, headers: Mapping[str, str] | None) -> dict[str, str] | None:
        if not self.distributed_tracing:
            return dict(headers) if headers else None
        return _merge_tracing_headers(headers)

    # ------------------------------------------------------------------ v3 run streams
    def _reject_v3_unsupported(
        self,
        *,
        control: Any,
        transformers: Any,
        interrupt_before: Any,
        interrupt_after: Any,
        extra_kwargs: Mapping[str, Any],
    ) -> None:
        """Refuse the arguments a remote v3 run stream cannot honour, before any request."""
        for name, value in (
            ("control", control),
            ("transformers", transformers),
            ("interrupt_before", interrupt_before),
            ("interrupt_after", interrupt_after),
        ):
            if value:
                raise NotImplementedError(
                    f"RemoteGraph.stream_events(version='v3') cannot take `{name}=`: the "
                    "remote protocol has no such option; use stream() for it."
                )
        unknown = sorted(set(extra_kwargs) - _V3_SUPPORTED_KWARGS)
        if unknown:
            raise NotImplementedError(
                f"RemoteGraph.stream_events(version='v3') cannot take {', '.join(unknown)}: "
                f"only {', '.join(sorted(_V3_SUPPORTED_KWARGS))} go with a v3 run."
            )

    def _v3_args(
        self, input: Any, config: Mapping[str, Any] | None, kwargs: dict[str, Any]
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        self._reject_v3_unsupported(
            control=kwargs.pop("control", None),
            transformers=kwargs.pop("transformers", None),
            interrupt_before=kwargs.pop("interrupt_before", None),
            interrupt_after=kwargs.pop("interrupt_after", None),
            extra_kwargs=kwargs,
        )
        from stategraph.pregel._remote_run_stream import translate_command_input

        translate_command_input(input)  # refuses goto/update before any request
        merged = _merge_configs(self.config, config)
        conf = dict(merged.get("configurable") or {})
        thread_id = conf.pop("thread_id", None)
        merged["configurable"] = conf
        open_args = {
            "thread_id": thread_id,
            "assistant_id": self.assistant_id,
            "headers": self._tracing_headers(kwargs.get("headers")),
        }
        run_args = {
            "input": input,
            "config": self._sanitize_config(merged),
            "metadata": kwargs.get("metadata"),
        }
        return open_args, run_args

    def stream_events(
        self, input: Any, config: Mapping[str, Any] | None = None, *, version: str = "v3",
        **kwargs: Any,
    ) -> Any:  # fmt: skip
        """A v3 run stream of the remote run (``with ... as run: for event in run``).

        Needs LangGraph's SDK client as ``sync_client`` (its ``threads.stream``): the
        built-in client speaks the run-streaming API, which :meth:`stream` uses.
        """
        if version != "v3":
            raise NotImplementedError(
                f"RemoteGraph.stream_events(version={version!r}) is not implemented: use "
                "version='v3', or stream()."
            )
        open_args, run_args = self._v3_args(input, config, dict(kwargs))
        client = self._sync()
        opener = getattr(getattr(client, "threads", None), "stream", None)
        if opener is None:
            raise ValueError(
                "stream_events(version='v3') needs LangGraph's SDK client: pass "
                "sync_client=langgraph_sdk.get_sync_client(url=...)."
            )
        from stategraph.pregel._remote_run_stream import RemoteGraphRunStream

        return RemoteGraphRunStream(sync_client=client, sdk_thread=opener(**open_args), **run_args)

    async def astream_events(
        self, input: Any, config: Mapping[str, Any] | None = None, *, version: str = "v3",
        **kwargs: Any,
    ) -> Any:  # fmt: skip
        """Async twin of :meth:`stream_events` (needs the SDK's async client as ``client``)."""
        if version != "v3":
            raise NotImplementedError(
                f"RemoteGraph.astream_events(version={version!r}) is not implemented: use "
                "version='v3', or astream()."
            )
        open_args, run_args = self._v3_args(input, config, dict(kwargs))
        client = self._async()
        opener = getattr(getattr(client, "threads", None), "stream", None)
        if opener is None:
            raise ValueError(
                "astream_events(version='v3') needs LangGraph's SDK client: pass "
                "client=langgraph_sdk.get_client(url=...)."
            )
        from stategraph.pregel._remote_run_stream import AsyncRemoteGraphRunStream

        return AsyncRemoteGraphRunStream(client=client, sdk_thread=opener(**open_args), **run_args)

    def _run_args(
        self,
        input: Any,
        config: Mapping[str, Any] | None,
        context: Any,
        stream_mode: Any,
        interrupt_before: Any,
        interrupt_after: Any,
        subgraphs: bool,
        headers: Mapping[str, str] | None,
        kwargs: Mapping[str, Any],
    ) -> tuple[dict[str, Any], _StreamShape]:
        merged = _merge_configs(self.config, config)
        conf = dict(merged.get("configurable") or {})
        thread_id = conf.pop("thread_id", None)
        caller_ns = conf.get("checkpoint_ns") or ""
        merged["configurable"] = conf
        modes = [stream_mode] if isinstance(stream_mode, str) else list(stream_mode)
        server_modes = ["messages-tuple" if m == "messages" else m for m in modes]
        if "updates" not in server_modes:
            server_modes.append("updates")
        args: dict[str, Any] = {
            "thread_id": thread_id,
            "assistant_id": self.assistant_id,
            "input": None,
            "command": None,
            "stream_mode": server_modes,
            "config": self._sanitize_config(merged),
            "context": context,
            "interrupt_before": interrupt_before,
            "interrupt_after": interrupt_after,
            "stream_subgraphs": bool(subgraphs),
            "if_not_exists": "create" if thread_id else None,
            "headers": self._tracing_headers(headers),
            **kwargs,
        }
        if isinstance(input, Command):
            args["command"] = _command_body(input)
        else:
            args["input"] = input
        shape = _StreamShape(
            modes=modes,
            single=isinstance(stream_mode, str),
            subgraphs=subgraphs,
            caller_ns=tuple(caller_ns.split("|")) if caller_ns else (),
        )
        return args, shape

    def stream(
        self,
        input: Any,
        config: Mapping[str, Any] | None = None,
        *,
        context: Any = None,
        stream_mode: str | Sequence[str] = "updates",
        interrupt_before: Sequence[str] | str | None = None,
        interrupt_after: Sequence[str] | str | None = None,
        subgraphs: bool = False,
        headers: Mapping[str, str] | None = None,
        **kwargs: Any,
    ) -> Iterator[Any]:
        """Run the graph on the server and yield its chunks, shaped as a local graph's.

        Called as a subgraph (the config carries a ``checkpoint_ns``), an interrupt of
        the remote run raises :class:`~stategraph.errors.GraphInterrupt` here.
        """
        args, shape = self._run_args(
            input, config, context, stream_mode, interrupt_before, interrupt_after,
            subgraphs, headers, kwargs,
        )  # fmt: skip
        for chunk in self._sync().runs.stream(**args):
            yield from shape.emit(chunk)
        shape.finish()

    async def astream(
        self,
        input: Any,
        config: Mapping[str, Any] | None = None,
        *,
        context: Any = None,
        stream_mode: str | Sequence[str] = "updates",
        interrupt_before: Sequence[str] | str | None = None,
        interrupt_after: Sequence[str] | str | None = None,
        subgraphs: bool = False,
        headers: Mapping[str, str] | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[Any]:
        """Async twin of :meth:`stream`."""
        args, shape = self._run_args(
            input, config, context, stream_mode, interrupt_before, interrupt_after,
            subgraphs, headers, kwargs,
        )  # fmt: skip
        async for chunk in self._async().runs.stream(**args):
            for out in shape.emit(chunk):
                yield out
        shape.finish()

    def invoke(
        self,
        input: Any,
        config: Mapping[str, Any] | None = None,
        *,
        context: Any = None,
        interrupt_before: Sequence[str] | str | None = None,
        interrupt_after: Sequence[str] | str | None = None,
        headers: Mapping[str, str] | None = None,
        **kwargs: Any,
    ) -> Any:
        """Run the graph on the server; returns the last state values (with
        ``__interrupt__`` when the run paused)."""
        result = _Result()
        for chunk in self.stream(
            input, config, context=context, stream_mode="values",
            interrupt_before=interrupt_before, interrupt_after=interrupt_after,
            headers=headers, **kwargs,
        ):  # fmt: skip
            result.add(chunk)
        return result.value

    async def ainvoke(
        self,
        input: Any,
        config: Mapping[str, Any] | None = None,
        *,
        context: Any = None,
        interrupt_before: Sequence[str] | str | None = None,
        interrupt_after: Sequence[str] | str | None = None,
        headers: Mapping[str, str] | None = None,
        **kwargs: Any,
    ) -> Any:
        """Async twin of :meth:`invoke`."""
        result = _Result()
        async for chunk in self.astream(
            input, config, context=context, stream_mode="values",
            interrupt_before=interrupt_before, interrupt_after=interrupt_after,
            headers=headers, **kwargs,
        ):  # fmt: skip
            result.add(chunk)
        return result.value

    # a RemoteGraph is a node function: (state, config) -> the remote run's output
    def _node_input(self, input: Any, pending: Sequence[Interrupt]) -> Any:
        """What a node run sends: the state, or the answer to the remote's interrupt.

        When the remote thread waits on an interrupt, the node asks the same question
        locally with :func:`~stategraph.types.interrupt`: while the local graph has no
        answer this pauses it again; once it resumes, the answer goes to the remote run.
        """
        if not pending:
            return input
        from stategraph.types import interrupt

        return Command(resume=interrupt(pending[0].value))

    def _pending(self, state: Mapping[str, Any] | None) -> list[Interrupt]:
        if not state:
            return []
        return [
            _interrupt_of(i) for t in state.get("tasks") or () for i in t.get("interrupts") or ()
        ]

    def __call__(self, input: Any, config: RunnableConfig) -> Any:
        """Run as a node of a local graph: the remote thread is the local thread's id."""
        _, thread_id, _ = self._thread_args(config, "a node run")
        try:
            state = self._sync().threads.get_state(thread_id=thread_id)
        except RemoteError as exc:
            if exc.status != 404:
                raise
            state = None
        return self.invoke(self._node_input(input, self._pending(state)), config)

    async def __stategraph_async_twin__(self, input: Any, config: RunnableConfig) -> Any:
        """The node's async twin, awaited in async runs."""
        _, thread_id, _ = self._thread_args(config, "a node run")
        try:
            state = await self._async().threads.get_state(thread_id=thread_id)
        except RemoteError as exc:
            if exc.status != 404:
                raise
            state = None
        return await self.ainvoke(self._node_input(input, self._pending(state)), config)


@dataclasses.dataclass
class _Result:
    """The output of ``invoke``: the last values, plus interrupts sent after them."""

    value: Any = None

    def add(self, chunk: Any) -> None:
        if isinstance(chunk, Mapping) and set(chunk) == {_INTERRUPT}:
            base = dict(self.value) if isinstance(self.value, Mapping) else {}
            base[_INTERRUPT] = chunk[_INTERRUPT]
            self.value = base
        else:
            self.value = chunk


@dataclasses.dataclass
class _StreamShape:
    """Turns server events into the chunks a local ``stream`` call would yield."""

    modes: list[str]
    single: bool
    subgraphs: bool
    caller_ns: tuple[str, ...]
    interrupts: list[Interrupt] = dataclasses.field(default_factory=list)

    def finish(self) -> None:
        """Called once the server closed the stream: the remote run has ended (and
        saved its last checkpoint). A remote interrupt seen while running as a
        subgraph is raised now, not when its event arrives, so that the next call
        (a resume) reads the paused thread rather than racing its last save."""
        if self.interrupts:
            raise GraphInterrupt(list(self.interrupts))

    def emit(self, chunk: Any) -> Iterator[Any]:
        event, data, ident = _part(chunk)
        mode, *ns_parts = event.split("|")
        if mode == "error":
            message = data.get("message", data) if isinstance(data, Mapping) else data
            raise RemoteError(f"The remote run failed: {message}")
        if mode in ("metadata", "end"):
            return
        ns = tuple(ns_parts)
        if (
            self.caller_ns
            and not ns
            and mode == "updates"
            and isinstance(data, Mapping)
            and data.get(_INTERRUPT)
        ):
            self.interrupts.extend(_interrupt_of(i) for i in data[_INTERRUPT])
            return
        if mode not in self.modes:
            return
        if ns and not self.subgraphs:
            return
        if mode == "messages" and isinstance(data, list):
            data = tuple(data)
        full_ns = self.caller_ns + ns
        if self.subgraphs:
            yield (full_ns, data) if self.single else (full_ns, mode, data)
        elif self.single:
            yield data
        else:
            yield StreamPart(mode, data, ident)
