"""Writers of StateGraph nodes: return values -> state writes, routes -> triggers."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from stategraph._context import CURRENT_TASK, STATE_EDIT
from stategraph._fields import object_update_items
from stategraph._sync_await import aresolve
from stategraph._sync_await import resolve as resolve_report
from stategraph.constants import END, TASKS
from stategraph.errors import (
    ErrorCode,
    InvalidUpdateError,
    ParentCommand,
    create_error_message,
)
from stategraph.graph._schema import ROOT
from stategraph.types import Command, Send

if TYPE_CHECKING:
    from stategraph.drawing._structure import Route
    from stategraph.pregel._task import Task

__all__ = ["branch_channel", "StateWriter", "EdgeWriter", "BranchWriter", "goto_writes"]


def branch_channel(node: str) -> str:
    """Name of the channel that triggers ``node`` when something routes to it."""
    return f"branch:to:{node}"


def goto_writes(goto: Any, nodes: Mapping[str, Any], source: str) -> list[tuple[str, Any]]:
    """Writes for ``Command.goto`` targets (names, ``Send`` s, ``END``)."""
    targets = goto if isinstance(goto, (list, tuple)) else [goto]
    writes: list[tuple[str, Any]] = []
    for target in targets:
        if isinstance(target, Send):
            if target.node not in nodes:
                raise InvalidUpdateError(
                    f"Node '{source}' sent Send({target.node!r}, ...) to a node that does not "
                    f"exist. Nodes: {', '.join(n for n in nodes if not n.startswith('__'))}."
                )
            writes.append((TASKS, target))
        elif target == END:
            continue
        elif isinstance(target, str):
            if target not in nodes:
                raise InvalidUpdateError(
                    f"Node '{source}' routed with Command(goto={target!r}), but there is no node "
                    f"'{target}'. Nodes: {', '.join(n for n in nodes if not n.startswith('__'))}."
                )
            writes.append((branch_channel(target), None))
        else:
            raise InvalidUpdateError(
                f"Node '{source}' returned Command(goto=...) with {target!r}; expected a node "
                "name, a Send, END, or a list of those."
            )
    return writes


class StateWriter:
    """Turns a node's return value into writes to state channels.

    Accepts a dict, ``None``, a dataclass/pydantic state object, a ``Command``, or a
    list mixing ``Command`` s and dicts. Keys no schema declares are dropped with a
    warning naming the node and key (an ``InvalidUpdateError`` under ``strict``).
    """

    __slots__ = ("destinations", "keys", "node", "nodes", "root", "strict", "warn_unknown")

    def __init__(
        self,
        node: str,
        keys: set[str],
        nodes: Mapping[str, Any],
        *,
        strict: bool,
        warn_unknown: bool = True,
        root: bool = False,
        destinations: Sequence[tuple[str, str | None]] = (),
    ) -> None:
        self.node = node
        self.keys = keys
        self.nodes = nodes
        self.strict = strict
        self.warn_unknown = warn_unknown
        self.root = root
        self.destinations = tuple(destinations)

    def static_routes(self) -> list[Route]:
        """The ``Command(goto=...)`` targets the node declares (for drawings)."""
        from stategraph.drawing._structure import Route

        return [
            Route(None if target == END else branch_channel(target), True, label)
            for target, label in self.destinations
        ]

    def _unknown(self, key: str) -> None:
        known = ", ".join(sorted(k for k in self.keys if not k.startswith("__")))
        edit = STATE_EDIT.get()
        origin = f"{edit} wrote" if edit is not None else f"Node '{self.node}' returned"
        message = (
            f"{origin} key '{key}', which no schema of the graph declares; "
            f"it is dropped. Declared keys: {known}. Check for a typo or add the key to the "
            "state schema."
        )
        if self.strict:
            raise InvalidUpdateError(
                create_error_message(message=message, error_code=ErrorCode.UNKNOWN_UPDATE_KEY)
            )
        if self.warn_unknown or edit is not None:
            warnings.warn(message, UserWarning, stacklevel=2)

    def _pairs(self, update: Any) -> list[tuple[str, Any]]:
        if type(update) is dict:
            # the common update: a plain dict of declared keys, taken as it is
            keys = self.keys
            if keys.issuperset(update):
                return list(update.items())
        if isinstance(update, Mapping):
            items: Sequence[tuple[str, Any]] = list(update.items())
        elif isinstance(update, (list, tuple)) and all(
            isinstance(t, tuple) and len(t) == 2 and isinstance(t[0], str) for t in update
        ):
            items = update
        else:
            obj_items = object_update_items(update)
            if obj_items is None:
                raise self._bad(update)
            items = obj_items
        out = []
        for key, value in items:
            if key in self.keys:
                out.append((key, value))
            else:
                self._unknown(key)
        return out

    def _bad(self, value: Any) -> InvalidUpdateError:
        return InvalidUpdateError(
            create_error_message(
                message=(
                    f"Node '{self.node}' returned {type(value).__name__} {value!r:.200}; expected "
                    "a dict of state updates, None, a state object, a Command, or a list of "
                    "Commands and dicts."
                ),
                error_code=ErrorCode.INVALID_GRAPH_NODE_RETURN_VALUE,
            )
        )

    def writes_for(self, output: Any) -> list[tuple[str, Any]]:
        """The writes ``output`` makes (raises for invalid return values)."""
        if output is None:
            return []
        if type(output) is dict and not self.root:
            return self._pairs(output)
        if isinstance(output, Command):
            if output.graph == Command.PARENT:
                _bubbling(output)
                raise ParentCommand(output)
            if output.update is None:
                writes = []
            elif self.root:
                writes = [(ROOT, output.update)]
            else:
                writes = self._pairs(output.update)
            if output.goto:
                writes.extend(goto_writes(output.goto, self.nodes, self.node))
            return writes
        if self.root:
            # the state is one bare value: the node returns the new value itself, or a
            # list of updates when the list holds Commands
            if isinstance(output, (list, tuple)) and any(isinstance(i, Command) for i in output):
                writes = []
                for item in output:
                    if isinstance(item, Command):
                        writes.extend(self.writes_for(item))
                    elif item is not None:
                        writes.append((ROOT, item))
                return writes
            return [(ROOT, output)]
        if isinstance(output, Mapping):
            return self._pairs(output)
        if isinstance(output, list):
            writes = []
            for item in output:
                if isinstance(item, (Command, Mapping)) or item is None:
                    writes.extend(self.writes_for(item))
                else:
                    raise self._bad(output)
            return writes
        if object_update_items(output) is not None:
            return self._pairs(output)
        raise self._bad(output)

    def __call__(self, task: Task, output: Any) -> None:
        task.writes.extend(self.writes_for(output))


class EdgeWriter:
    """Writes the trigger of each static successor (and barrier names)."""

    __slots__ = ("writes",)

    def __init__(self, writes: list[tuple[str, Any]]) -> None:
        self.writes = writes

    def static_routes(self) -> list[Route]:
        """The channels this writer always writes (for drawings)."""
        from stategraph.drawing._structure import Route

        return [
            Route(chan, value=value if isinstance(value, str) else None)
            for chan, value in self.writes
        ]

    def __call__(self, task: Task, output: Any) -> None:
        if isinstance(output, Command) and output.graph == Command.PARENT:
            return
        task.writes.extend(self.writes)


class BranchWriter:
    """Evaluates a conditional edge on the state including the node's own update."""

    __slots__ = (
        "ends",
        "managed",
        "mapper",
        "name",
        "nodes",
        "path",
        "path_map",
        "reads",
        "seq_step",
        "source",
    )

    def __init__(
        self,
        source: str,
        name: str,
        path: Any,
        path_map: dict[Any, str] | None,
        nodes: Mapping[str, Any],
        reads: list[str],
        mapper: Callable[[dict[str, Any]], Any] | None,
        managed: Mapping[str, Any] | None = None,
        ends: Sequence[str] | None = None,
    ) -> None:
        self.ends = list(ends) if ends is not None else None
        self.managed = dict(managed or {})
        self.source = source
        self.name = name
        self.path = path
        self.path_map = path_map
        self.nodes = nodes
        self.reads = reads
        self.mapper = mapper
        # position of the routing function in the node's sequence, as LangGraph tags
        # its trace run (``seq:step:N``); set by the compiler
        self.seq_step = 0

    def __call__(self, task: Task, output: Any) -> Any:
        if isinstance(output, Command) and output.graph == Command.PARENT:
            return None
        state = task.read(self.reads)
        if self.managed and task.scratchpad is not None:
            for key, spec in self.managed.items():
                state[key] = spec.get(task.scratchpad.step, task.scratchpad.stop)
        if self.mapper is not None:
            state = self.mapper(state)
        ctx = CURRENT_TASK.get()
        observed = None
        if ctx is not None and isinstance(ctx.run, tuple) and ctx.run[0].observers is not None:
            observed = ctx.run
            resolve_report(observed[0].observers.branch_started(*observed, self, self.label, state))
        if self.path.is_async:
            # the routing function is called only once this is awaited: a sync run
            # that cannot await it closes this coroutine and nothing is left pending
            return self._finish_async(task, state, ctx, observed)
        try:
            result = self.path(state, ctx) if ctx is not None else self.path.func(state)
        except Exception as exc:
            if observed is not None:
                resolve_report(observed[0].observers.branch_failed(*observed, self, exc))
            raise
        if observed is not None:
            resolve_report(observed[0].observers.branch_finished(*observed, self, result))
        task.writes.extend(self.resolve(result))
        return None

    @property
    def label(self) -> str:
        """The routing function's name (what its trace run is called); a lambda has
        none of its own and is called ``Unnamed``, as in LangGraph."""
        func = getattr(self.path, "func", self.path)
        name = str(getattr(func, "__name__", None) or self.name)
        return "Unnamed" if name == "<lambda>" else name

    async def _finish_async(self, task: Task, state: Any, ctx: Any, observed: Any) -> None:
        try:
            pending = self.path(state, ctx) if ctx is not None else self.path.func(state)
            result = await pending
        except Exception as exc:
            if observed is not None:
                await aresolve(observed[0].observers.branch_failed(*observed, self, exc))
            raise
        if observed is not None:
            await aresolve(observed[0].observers.branch_finished(*observed, self, result))
        task.writes.extend(self.resolve(result))

    def static_routes(self) -> list[Route]:
        """Every target the conditional edge can choose (for drawings).

        Labels come from ``path_map`` keys that differ from their target; a branch
        whose targets are unknown (no ``path_map``, no ``Literal`` annotation) has none.
        """
        from stategraph.drawing._structure import Route

        def channel(target: str) -> str | None:
            return None if target == END else branch_channel(target)

        if self.path_map is not None:
            return [
                Route(channel(target), True, None if key == target else str(key))
                for key, target in self.path_map.items()
            ]
        return [Route(channel(target), True) for target in self.ends or ()]

    def resolve(self, result: Any) -> list[tuple[str, Any]]:
        """Map the path function's result to trigger writes."""
        items = result if isinstance(result, (list, tuple)) else [result]
        writes: list[tuple[str, Any]] = []
        for item in items:
            if isinstance(item, Send):
                if item.node not in self.nodes:
                    raise InvalidUpdateError(
                        f"Conditional edge '{self.name}' from '{self.source}' returned "
                        f"Send({item.node!r}, ...) but there is no such node."
                    )
                writes.append((TASKS, item))
                continue
            target = item
            if self.path_map is not None:
                try:
                    target = self.path_map[item]
                except (KeyError, TypeError):
                    raise InvalidUpdateError(
                        f"Conditional edge '{self.name}' from '{self.source}' returned {item!r}, "
                        f"which is not in its path_map {list(self.path_map)!r}."
                    ) from None
            if target == END or target is None:
                continue
            if target not in self.nodes:
                raise InvalidUpdateError(
                    f"Conditional edge '{self.name}' from '{self.source}' returned {target!r}, "
                    f"which is not a node. Nodes: "
                    f"{', '.join(n for n in self.nodes if not n.startswith('__'))}."
                )
            writes.append((branch_channel(target), None))
        return writes


def _bubbling(command: Command[Any]) -> None:
    """Tell the ``messages`` stream that ``command``'s update leaves through the parent
    graph, so its messages are not sent as a node's output (as in LangGraph)."""
    ctx = CURRENT_TASK.get()
    run = ctx.run[0] if ctx is not None and isinstance(ctx.run, tuple) else None
    emitter = getattr(run, "messages", None)
    if emitter is not None and command.update is not None:
        emitter.bubbled(command.update)
