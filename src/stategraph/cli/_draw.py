"""``stategraph draw module:graph``: print or save a drawing of a graph."""

from __future__ import annotations

import argparse
import sys

from stategraph.cli._errors import EXIT_MISSING_DEPENDENCY, EXIT_OK, EXIT_USAGE, CliError
from stategraph.cli._loading import load_graph

__all__ = ["HELP", "DESCRIPTION", "add_arguments", "run"]

FORMATS = ("mermaid", "ascii", "svg", "png", "json")


HELP = "draw a graph (Mermaid, ASCII, SVG, PNG or JSON)"

DESCRIPTION = "Draw the graph named by module:attribute (or path/to/file.py:attribute)."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the arguments of ``stategraph draw``."""
    parser.add_argument("graph", help="module:attribute of a compiled graph or StateGraph")
    parser.add_argument(
        "--format",
        "-f",
        choices=FORMATS,
        default="mermaid",
        help="output format (default: mermaid)",
    )
    parser.add_argument(
        "--xray",
        nargs="?",
        const=True,
        default=False,
        type=_xray,
        metavar="DEPTH",
        help="draw subgraphs inside their nodes (all levels, or DEPTH levels)",
    )
    parser.add_argument(
        "--json",
        action="store_const",
        const="json",
        dest="format",
        help="the graph's nodes and edges as JSON (same as --format json)",
    )
    parser.add_argument("--output", "-o", metavar="FILE", help="write to FILE instead of stdout")


def _xray(text: str) -> int:
    try:
        depth = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--xray takes a number of levels, got {text!r}") from None
    if depth < 0:
        raise argparse.ArgumentTypeError("--xray depth cannot be negative")
    return depth


def run(args: argparse.Namespace) -> int:
    """Draw the graph."""
    graph = load_graph(args.graph)
    drawing = graph.get_graph(xray=args.xray)
    if args.format == "png":
        try:
            data = drawing.draw_png()
        except ImportError as exc:
            raise CliError(str(exc), EXIT_MISSING_DEPENDENCY) from exc
        if args.output:
            _write(args.output, data)
        elif sys.stdout.isatty():
            raise CliError(
                "PNG is binary: save it with --output FILE (or redirect stdout).", EXIT_USAGE
            )
        else:
            sys.stdout.buffer.write(data)
            sys.stdout.flush()
        return EXIT_OK
    if args.format == "mermaid":
        text = drawing.draw_mermaid()
    elif args.format == "ascii":
        text = drawing.draw_ascii() + "\n"
    elif args.format == "svg":
        text = drawing.draw_svg()
    else:
        import json

        from stategraph.cli._output import to_jsonable

        text = json.dumps(to_jsonable(drawing.to_json()), indent=2) + "\n"
    if args.output:
        _write(args.output, text.encode("utf-8"))
    else:
        sys.stdout.write(text)
    return EXIT_OK


def _write(path: str, data: bytes) -> None:
    """Save the drawing; a path that cannot be written is a one-line error."""
    try:
        with open(path, "wb") as f:
            f.write(data)
    except OSError as exc:
        raise CliError(f"Cannot write {path}: {exc.strerror or exc}.", EXIT_USAGE) from exc
