"""Moved to :mod:`stategraph.observe._typed_output`: this path re-exports it."""

from __future__ import annotations

from stategraph.observe._typed_output import V2Parts, class_builder

__all__ = ["V2Parts", "class_builder"]
