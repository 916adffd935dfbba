"""``stategraph history THREAD``: the checkpoints of one thread, newest first."""

from __future__ import annotations

import argparse

from stategraph.cli._checkpoints import (
    pending_interrupts,
    pending_nodes,
    thread_checkpoints,
)
from stategraph.cli._errors import EXIT_NOT_FOUND, EXIT_OK, CliError
from stategraph.cli._numbers import whole_number
from stategraph.cli._output import is_internal_channel, print_json, print_table
from stategraph.cli._savers import add_saver_arguments, open_saver

__all__ = ["HELP", "DESCRIPTION", "add_arguments", "run"]

HELP = "list the checkpoints of a thread"

DESCRIPTION = "List the checkpoints of THREAD, newest first."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of ``stategraph history``."""
    parser.add_argument("thread", help="thread id")
    add_saver_arguments(parser)
    parser.add_argument(
        "--ns", default="", metavar="NAMESPACE", help="checkpoint namespace (a subgraph's)"
    )
    parser.add_argument(
        "--limit", type=whole_number(1), metavar="N", help="show at most N checkpoints"
    )
    parser.add_argument("--json", action="store_true", help="print JSON")


def run(args: argparse.Namespace) -> int:
    """List a thread's checkpoints."""
    rows = []
    with open_saver(args) as saver:
        for tup in thread_checkpoints(saver, args.thread, args.ns, args.limit):
            cp = tup.checkpoint
            meta = tup.metadata or {}
            parent = (tup.parent_config or {}).get("configurable", {}).get("checkpoint_id")
            rows.append(
                {
                    "checkpoint_id": tup.config["configurable"]["checkpoint_id"],
                    "parent_id": parent,
                    "step": meta.get("step"),
                    "source": meta.get("source"),
                    "created_at": cp.get("ts"),
                    "updated": sorted(
                        c for c in cp.get("updated_channels") or () if not is_internal_channel(c)
                    ),
                    "next": pending_nodes(cp),
                    "interrupts": [i["value"] for i in pending_interrupts(tup.pending_writes)],
                }
            )
    if not rows:
        where = f" in namespace '{args.ns}'" if args.ns else ""
        raise CliError(
            f"No checkpoints for thread '{args.thread}'{where} (list threads with: "
            "stategraph threads).",
            EXIT_NOT_FOUND,
        )
    if args.json:
        print_json(rows)
        return EXIT_OK
    print_table(
        ["CHECKPOINT", "STEP", "SOURCE", "CREATED", "UPDATED", "NEXT", "INTERRUPTS"],
        [
            [
                r["checkpoint_id"],
                r["step"],
                r["source"],
                (r["created_at"] or "")[:19].replace("T", " "),
                ", ".join(r["updated"]) or "-",
                ", ".join(r["next"]) or "-",
                len(r["interrupts"]) or "-",
            ]
            for r in rows
        ],
    )
    return EXIT_OK
