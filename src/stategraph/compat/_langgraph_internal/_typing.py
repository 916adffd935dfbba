"""``langgraph._internal._typing`` names used by libraries built on LangGraph."""

from __future__ import annotations

from typing_extensions import TypedDict

__all__ = ["DeprecatedKwargs"]


class DeprecatedKwargs(TypedDict, total=False):
    """The keyword arguments a function still accepts only to warn about them (none are
    declared: ``**kwargs: Unpack[DeprecatedKwargs]`` takes arbitrary names)."""
