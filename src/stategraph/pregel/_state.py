"""Reading and editing saved state: ``get_state``, history, ``update_state``.

:class:`StateMixin` holds the public methods; the work is in
:mod:`stategraph.pregel._pregel.state_read` (snapshots) and
:mod:`stategraph.pregel._pregel.state_edit` (updates), written once as generators of
saver effects that a sync or an async driver performs. The methods import them when
called: building or running a graph needs neither, so ``import stategraph.pregel``
does not load them (issue 23).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from stategraph.types import StateSnapshot, StateUpdate

__all__ = ["StateMixin"]


class StateMixin:
    """State inspection and editing for :class:`~stategraph.pregel.main.Pregel`."""

    # ------------------------------------------------------------------ helpers
    # ------------------------------------------------------------------ get_state
    def get_state(self, config: Mapping[str, Any], *, subgraphs: bool = False) -> StateSnapshot:
        """The state of the thread at its latest checkpoint (or ``checkpoint_id``)."""
        from stategraph.pregel._pregel.state_read import (
            _drive,
            _get_state_gen,
            _graph,
            _require_saver,
        )

        saver = _require_saver(_graph(self), config)
        return _drive(_get_state_gen(_graph(self), saver, config, subgraphs), saver)

    async def aget_state(
        self, config: Mapping[str, Any], *, subgraphs: bool = False
    ) -> StateSnapshot:
        """Async twin of :meth:`get_state`."""
        from stategraph.pregel._pregel.state_read import (
            _adrive,
            _get_state_gen,
            _graph,
            _require_saver,
        )

        saver = _require_saver(_graph(self), config)
        return await _adrive(_get_state_gen(_graph(self), saver, config, subgraphs), saver)

    def get_state_history(
        self,
        config: Mapping[str, Any],
        *,
        filter: dict[str, Any] | None = None,
        before: Mapping[str, Any] | None = None,
        limit: int | None = None,
    ) -> Iterator[StateSnapshot]:
        """The snapshots of the thread, newest first."""
        from stategraph.pregel._pregel.state_read import (
            _drive,
            _graph,
            _require_saver,
            _snapshot_gen,
            _state_config,
            _target,
        )

        saver = _require_saver(_graph(self), config)
        graph, cfg = _target(_graph(self), _state_config(config), required=False)
        for tup in saver.list(cfg, filter=filter, before=before, limit=limit):
            yield _drive(_snapshot_gen(graph, saver, tup.config, tup, False), saver)

    async def aget_state_history(
        self,
        config: Mapping[str, Any],
        *,
        filter: dict[str, Any] | None = None,
        before: Mapping[str, Any] | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[StateSnapshot]:
        """Async twin of :meth:`get_state_history`."""
        from stategraph.pregel._pregel.state_read import (
            _adrive,
            _graph,
            _require_saver,
            _snapshot_gen,
            _state_config,
            _target,
        )

        saver = _require_saver(_graph(self), config)
        graph, cfg = _target(_graph(self), _state_config(config), required=False)
        async for tup in saver.alist(cfg, filter=filter, before=before, limit=limit):
            yield await _adrive(_snapshot_gen(graph, saver, tup.config, tup, False), saver)

    # ------------------------------------------------------------------ update_state
    def update_state(
        self,
        config: Mapping[str, Any],
        values: dict[str, Any] | Any | None,
        as_node: str | None = None,
        task_id: str | None = None,
    ) -> dict[str, Any]:
        """Write ``values`` as if node ``as_node`` returned them; returns the new config.

        The update goes through the reducers and decides ``next`` like the node's own
        return would. Updating a past checkpoint forks: the new checkpoint's parent is
        the one named and the old branch stays readable.
        """
        from stategraph.pregel._pregel.state_edit import _update_gen
        from stategraph.pregel._pregel.state_read import _drive, _graph, _require_saver
        from stategraph.pregel._state_lease import update_lease
        from stategraph.types import StateUpdate

        saver = _require_saver(_graph(self), config)
        with update_lease(saver, config) as token:
            gen = _update_gen(_graph(self), saver, config, [StateUpdate(values, as_node, task_id)])
            return cast("dict[str, Any]", _drive(gen, saver, token))

    async def aupdate_state(
        self,
        config: Mapping[str, Any],
        values: dict[str, Any] | Any | None,
        as_node: str | None = None,
        task_id: str | None = None,
    ) -> dict[str, Any]:
        """Async twin of :meth:`update_state`."""
        from stategraph.pregel._pregel.state_edit import _update_gen
        from stategraph.pregel._pregel.state_read import _adrive, _graph, _require_saver
        from stategraph.pregel._state_lease import aupdate_lease
        from stategraph.types import StateUpdate

        saver = _require_saver(_graph(self), config)
        async with aupdate_lease(saver, config) as token:
            gen = _update_gen(_graph(self), saver, config, [StateUpdate(values, as_node, task_id)])
            return cast("dict[str, Any]", await _adrive(gen, saver, token))

    def bulk_update_state(
        self, config: Mapping[str, Any], supersteps: Sequence[Sequence[StateUpdate]]
    ) -> dict[str, Any]:
        """Apply several updates, one checkpoint per superstep; returns the last config."""
        from stategraph.pregel._pregel.state_edit import _check_supersteps, _update_gen
        from stategraph.pregel._pregel.state_read import _drive, _graph, _require_saver
        from stategraph.pregel._state_lease import update_lease

        _check_supersteps(supersteps)
        saver = _require_saver(_graph(self), config)
        cfg: Mapping[str, Any] = config
        with update_lease(saver, config) as token:  # one lease over every superstep
            for updates in supersteps:
                cfg = _drive(_update_gen(_graph(self), saver, cfg, list(updates)), saver, token)
        return dict(cfg)

    async def abulk_update_state(
        self, config: Mapping[str, Any], supersteps: Sequence[Sequence[StateUpdate]]
    ) -> dict[str, Any]:
        """Async twin of :meth:`bulk_update_state`."""
        from stategraph.pregel._pregel.state_edit import _check_supersteps, _update_gen
        from stategraph.pregel._pregel.state_read import _adrive, _graph, _require_saver
        from stategraph.pregel._state_lease import aupdate_lease

        _check_supersteps(supersteps)
        saver = _require_saver(_graph(self), config)
        cfg: Mapping[str, Any] = config
        async with aupdate_lease(saver, config) as token:  # one lease over every superstep
            for updates in supersteps:
                gen = _update_gen(_graph(self), saver, cfg, list(updates))
                cfg = await _adrive(gen, saver, token)
        return dict(cfg)
