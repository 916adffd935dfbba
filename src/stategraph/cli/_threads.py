"""``stategraph threads``: the threads of a checkpoint database."""

from __future__ import annotations

import argparse
import json
from typing import Any

from stategraph.cli._checkpoints import list_threads, pending_interrupts, pending_nodes
from stategraph.cli._errors import EXIT_OK, EXIT_USAGE, CliError
from stategraph.cli._numbers import whole_number
from stategraph.cli._output import print_json, print_table
from stategraph.cli._savers import add_saver_arguments, open_saver

__all__ = ["HELP", "DESCRIPTION", "add_arguments", "run", "parse_filters"]

HELP = "list the threads of a checkpoint database"

DESCRIPTION = "List threads, newest first, with their latest checkpoint."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of ``stategraph threads``."""
    add_saver_arguments(parser)
    parser.add_argument(
        "--filter",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="keep threads with a checkpoint whose metadata has KEY equal to VALUE "
        "(VALUE is read as JSON when it parses, e.g. step=3; repeatable)",
    )
    parser.add_argument("--limit", type=whole_number(1), metavar="N", help="show at most N threads")
    parser.add_argument("--json", action="store_true", help="print JSON")


def parse_filters(items: list[str]) -> dict[str, Any]:
    """``["k=v", ...]`` as a metadata filter; values are JSON when they parse."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise CliError(f"--filter expects KEY=VALUE, got {item!r}.", EXIT_USAGE)
        try:
            out[key] = json.loads(raw)
        except json.JSONDecodeError:
            out[key] = raw
    return out


def run(args: argparse.Namespace) -> int:
    """List threads."""
    filters = parse_filters(args.filter)
    with open_saver(args) as saver:
        threads = list_threads(saver, filters)
        if args.limit is not None:
            threads = threads[: args.limit]
        rows: list[dict[str, Any]] = []
        for t in threads:
            latest = t.latest
            meta = latest.metadata if latest else {}
            rows.append(
                {
                    "thread_id": t.thread_id,
                    "checkpoints": t.checkpoints,
                    "subgraph_namespaces": sorted(ns for ns in t.namespaces if ns),
                    "checkpoint_id": latest.config["configurable"]["checkpoint_id"]
                    if latest
                    else None,
                    "step": meta.get("step"),
                    "source": meta.get("source"),
                    "created_at": latest.checkpoint.get("ts") if latest else None,
                    "next": pending_nodes(latest.checkpoint) if latest else [],
                    "interrupts": len(pending_interrupts(latest.pending_writes)) if latest else 0,
                }
            )
    if args.json:
        print_json(rows)
        return EXIT_OK
    if not rows:
        print("No threads." + (" (none match the filter)" if filters else ""))
        return EXIT_OK
    print_table(
        ["THREAD", "CHECKPOINTS", "STEP", "SOURCE", "UPDATED", "NEXT", "INTERRUPTS"],
        [
            [
                r["thread_id"],
                r["checkpoints"],
                r["step"],
                r["source"],
                (r["created_at"] or "")[:19].replace("T", " "),
                ", ".join(r["next"]) or "-",
                r["interrupts"] or "-",
            ]
            for r in rows
        ],
    )
    return EXIT_OK
