"""The scenario registry: ``@scenario(features)`` adds a builder to :data:`SCENARIOS`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from observe import Scenario, Setup

__all__ = ["SCENARIOS", "scenario", "load_all"]

SCENARIOS: dict[str, Scenario] = {}


def scenario(*features: str) -> Callable[[Callable[[Any], Setup]], Callable[[Any], Setup]]:
    """Register ``build(ns) -> Setup`` under its function name, with its features."""

    def register(build: Callable[[Any], Setup]) -> Callable[[Any], Setup]:
        name = build.__name__
        if name in SCENARIOS:
            raise ValueError(f"two scenarios named {name!r}")
        if len(features) < 2:
            raise ValueError(f"scenario {name!r} must combine at least two features")
        SCENARIOS[name] = Scenario(name, list(features), build, (build.__doc__ or "").strip())
        return build

    return register


def load_all() -> dict[str, Scenario]:
    """Import every scenario module and return the registry."""
    import scen_agents  # noqa: F401
    import scen_func  # noqa: F401
    import scen_nodes  # noqa: F401

    return SCENARIOS
