"""``stategraph resume module:graph THREAD --value JSON``: answer an interrupt and run on."""

from __future__ import annotations

import argparse
import json
from typing import Any

from stategraph.cli._errors import (
    EXIT_GRAPH_ERROR,
    EXIT_INTERRUPTED,
    EXIT_NOT_FOUND,
    EXIT_OK,
    EXIT_USAGE,
    CliError,
)
from stategraph.cli._loading import load_graph
from stategraph.cli._output import print_json, short
from stategraph.cli._savers import add_saver_arguments, has_saver, open_saver

__all__ = ["HELP", "DESCRIPTION", "add_arguments", "run"]

HELP = "resume a paused thread with a value"

DESCRIPTION = (
    "Resume THREAD of the graph with Command(resume=VALUE) and run until it "
    "finishes or pauses again. Exit code 4 when it pauses again."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of ``stategraph resume``."""
    parser.add_argument("graph", help="module:attribute of the graph")
    parser.add_argument("thread", help="thread id")
    value = parser.add_mutually_exclusive_group(required=True)
    value.add_argument("--value", metavar="JSON", help='the answer, as JSON (e.g. true, "yes")')
    value.add_argument("--text", metavar="TEXT", help="the answer, as a plain string")
    parser.add_argument(
        "--interrupt-id",
        metavar="ID",
        help="answer this interrupt (when several are waiting) instead of the first",
    )
    parser.add_argument("--checkpoint", metavar="ID", help="resume from this checkpoint")
    add_saver_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print JSON")


def _answer(args: argparse.Namespace) -> Any:
    if args.text is not None:
        return args.text
    try:
        return json.loads(args.value)
    except json.JSONDecodeError as exc:
        raise CliError(
            f"--value must be JSON ({exc.msg}): quote strings, e.g. --value '\"yes\"', "
            "or use --text yes.",
            EXIT_USAGE,
        ) from exc


def _resume(graph: Any, args: argparse.Namespace) -> int:
    from stategraph.types import Command

    conf: dict[str, Any] = {"thread_id": args.thread}
    if args.checkpoint:
        conf["checkpoint_id"] = args.checkpoint
    config = {"configurable": conf}
    before = graph.get_state(config)
    if not before.values and not before.next and before.created_at is None:
        raise CliError(f"No thread '{args.thread}' in this database.", EXIT_NOT_FOUND)
    waiting = [i for t in before.tasks for i in t.interrupts]
    if not waiting:
        raise CliError(
            f"Thread '{args.thread}' is not waiting on an interrupt (next: "
            f"{', '.join(before.next) or 'nothing'}).",
            EXIT_USAGE,
        )
    answer = _answer(args)
    if args.interrupt_id:
        if args.interrupt_id not in {i.id for i in waiting}:
            ids = ", ".join(str(i.id) for i in waiting)
            raise CliError(f"No interrupt '{args.interrupt_id}' is waiting (waiting: {ids}).")
        command: Any = Command(resume={args.interrupt_id: answer})
    else:
        command = Command(resume=answer)
    try:
        graph.invoke(command, config)
    except Exception as exc:
        raise CliError(
            f"The graph failed while resuming: {type(exc).__name__}: {exc}", EXIT_GRAPH_ERROR
        ) from exc
    after = graph.get_state({"configurable": {"thread_id": args.thread}})
    interrupts = [
        {"node": t.name, "id": i.id, "value": i.value} for t in after.tasks for i in t.interrupts
    ]
    values = after.values
    if args.json:
        print_json({"values": values, "next": list(after.next), "interrupts": interrupts})
    else:
        if interrupts:
            print("paused again")
            for item in interrupts:
                print(f"  {item['node']}: {short(item['value'], 100)}  (id {item['id']})")
        else:
            print("finished" if not after.next else f"stopped before: {', '.join(after.next)}")
        if isinstance(values, dict):
            for key, value in values.items():
                print(f"  {key}: {short(value, 100)}")
        else:
            print(f"  {short(values, 100)}")
    return EXIT_INTERRUPTED if interrupts else EXIT_OK


def run(args: argparse.Namespace) -> int:
    """Resume the thread."""
    graph = load_graph(args.graph)
    if has_saver(args):
        with open_saver(args, writable=True) as saver:
            return _resume(graph.copy(checkpointer=saver), args)
    if graph.checkpointer in (None, False, True):
        raise CliError(
            "The graph has no checkpointer: name the database with --sqlite FILE or "
            "--postgres DSN.",
            EXIT_USAGE,
        )
    return _resume(graph, args)
