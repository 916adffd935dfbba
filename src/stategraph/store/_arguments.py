"""Checks shared by a store's dict arguments (``index=`` and ``ttl=``)."""

from __future__ import annotations

__all__ = ["check_config_keys"]


def check_config_keys(config: object, label: str, known: frozenset[str], example: str) -> None:
    """Refuse a ``config`` that is not a dict (:class:`TypeError`, showing ``example``)
    or that has keys outside ``known`` (:class:`ValueError`). ``label`` names the config
    in messages (``"TTL"``); in lower case it is the argument's name (``ttl=``)."""
    if not isinstance(config, dict):
        raise TypeError(
            f"{label.lower()} must be a dict like {example}, got {type(config).__name__}."
        )
    unknown = set(config) - known
    if unknown:
        raise ValueError(
            f"Unknown {label} config keys {sorted(unknown)}; supported: {sorted(known)}."
        )
