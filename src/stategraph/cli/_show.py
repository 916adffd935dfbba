"""``stategraph show THREAD``: one checkpoint in full (values, next, interrupts, changes)."""

from __future__ import annotations

import argparse
from typing import Any

from stategraph.cli._checkpoints import (
    changes,
    find_checkpoint,
    pending_interrupts,
    pending_nodes,
    state_values,
)
from stategraph.cli._errors import EXIT_OK
from stategraph.cli._loading import load_graph
from stategraph.cli._output import print_json, short
from stategraph.cli._savers import add_saver_arguments, open_saver

__all__ = ["HELP", "DESCRIPTION", "add_arguments", "run", "describe"]

HELP = "show a checkpoint: values, next nodes, interrupts, changes"

DESCRIPTION = "Show the latest checkpoint of THREAD (or the one given with --checkpoint)."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of ``stategraph show``."""
    parser.add_argument("thread", help="thread id")
    add_saver_arguments(parser)
    parser.add_argument("--checkpoint", metavar="ID", help="checkpoint id (default: the latest)")
    parser.add_argument("--ns", default="", metavar="NAMESPACE", help="checkpoint namespace")
    parser.add_argument(
        "--graph",
        metavar="MODULE:ATTR",
        help="read the state through the graph (exact next tasks, typed values)",
    )
    parser.add_argument("--full", action="store_true", help="do not shorten long values")
    parser.add_argument("--json", action="store_true", help="print JSON")


def describe(saver: Any, args: argparse.Namespace) -> dict[str, Any]:
    """Everything ``show`` prints, as data."""
    tup = find_checkpoint(saver, args.thread, args.checkpoint, args.ns)
    conf = tup.config["configurable"]
    parent_id = (tup.parent_config or {}).get("configurable", {}).get("checkpoint_id")
    meta = dict(tup.metadata or {})
    info: dict[str, Any] = {
        "thread_id": args.thread,
        "checkpoint_ns": conf.get("checkpoint_ns", ""),
        "checkpoint_id": conf["checkpoint_id"],
        "parent_id": parent_id,
        "step": meta.get("step"),
        "source": meta.get("source"),
        "created_at": tup.checkpoint.get("ts"),
        "metadata": {k: v for k, v in meta.items() if k not in ("step", "source", "parents")},
    }
    if args.graph:
        graph = load_graph(args.graph).copy(checkpointer=saver)
        snap = graph.get_state(tup.config)
        values = snap.values if isinstance(snap.values, dict) else {"(root)": snap.values}
        info["values"] = values
        info["next"] = list(snap.next)
        info["interrupts"] = [
            {"node": t.name, "id": i.id, "value": i.value} for t in snap.tasks for i in t.interrupts
        ]
        parent_values: dict[str, Any] = {}
        if snap.parent_config:
            parent = graph.get_state(snap.parent_config)
            if isinstance(parent.values, dict):
                parent_values = parent.values
    else:
        info["values"] = state_values(tup.checkpoint)
        info["next"] = pending_nodes(tup.checkpoint)
        info["interrupts"] = pending_interrupts(tup.pending_writes)
        parent_values = {}
        if parent_id:
            parent = saver.get_tuple(tup.parent_config)
            if parent is not None:
                parent_values = state_values(parent.checkpoint)
    info["changes"] = [
        {"change": kind, "key": key, "old": old, "new": new}
        for kind, key, old, new in changes(info["values"], parent_values)
    ]
    return info


def run(args: argparse.Namespace) -> int:
    """Show one checkpoint."""
    with open_saver(args) as saver:
        info = describe(saver, args)
    if args.json:
        print_json(info)
        return EXIT_OK
    width = 10_000 if args.full else 100
    ns = f"  namespace {info['checkpoint_ns']}" if info["checkpoint_ns"] else ""
    print(
        f"thread {info['thread_id']}{ns}  checkpoint {info['checkpoint_id']}  "
        f"step {info['step']}  source {info['source']}  {(info['created_at'] or '')[:19]}"
    )
    if info["parent_id"]:
        print(f"parent {info['parent_id']}")
    print("\nvalues")
    if not info["values"]:
        print("  (empty)")
    for key, value in info["values"].items():
        print(f"  {key}: {short(value, width)}")
    print(f"\nnext: {', '.join(info['next']) or '(nothing: the run is finished)'}")
    if info["interrupts"]:
        print("\ninterrupts")
        for item in info["interrupts"]:
            where = item.get("node") or f"task {item.get('task_id')}"
            print(f"  {where}: {short(item['value'], width)}  (id {item.get('id')})")
    print("\nchanged since " + ("the parent checkpoint" if info["parent_id"] else "the start"))
    if not info["changes"]:
        print("  (nothing)")
    for c in info["changes"]:
        if c["change"] == "+":
            print(f"  + {c['key']}: {short(c['new'], width)}")
        elif c["change"] == "-":
            print(f"  - {c['key']} (was {short(c['old'], width)})")
        else:
            print(f"  ~ {c['key']}: {short(c['old'], width // 2)} -> {short(c['new'], width // 2)}")
    if not args.graph:
        print(
            "\n(next nodes and values read from the checkpoint; add --graph MODULE:ATTR "
            "to read them through the graph)"
        )
    return EXIT_OK
