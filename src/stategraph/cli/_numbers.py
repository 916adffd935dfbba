"""Numeric command-line options, checked by ``argparse`` before anything runs."""

from __future__ import annotations

import argparse
from collections.abc import Callable

__all__ = ["whole_number"]


def whole_number(minimum: int, maximum: int | None = None) -> Callable[[str], int]:
    """An ``argparse`` ``type=`` accepting whole numbers from ``minimum`` to ``maximum``;
    ``argparse`` reports anything else as an error naming the option (exit code 2)."""
    bounds = f"from {minimum} to {maximum}" if maximum is not None else f"of at least {minimum}"

    def parse(text: str) -> int:
        try:
            value = int(text.strip(), 10)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"expected a whole number {bounds}, got {text!r}"
            ) from None
        if value < minimum or (maximum is not None and value > maximum):
            raise argparse.ArgumentTypeError(f"expected a whole number {bounds}, got {value}")
        return value

    return parse
