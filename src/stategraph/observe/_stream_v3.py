"""``stream_events(version="v3")`` / ``astream_events(version="v3")``: run objects
over the graph's own ``stream(..., version="v2", subgraphs=True)``."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from stategraph.stream import AsyncGraphRunStream, GraphRunStream, StreamTransformer
    from stategraph.stream._mux import StreamMux

__all__ = ["normalize_transformer_factories", "stream_v3", "astream_v3"]

_OWNED = ("stream_mode", "subgraphs")
_DEFAULTED = ("interrupt_before", "interrupt_after", "control")


def normalize_transformer_factories(
    transformers: Sequence[Any] | None,
) -> list[Callable[[tuple[str, ...]], StreamTransformer]]:
    """Check ``transformers`` (classes or factories called with a scope) and return
    factories; a transformer *instance* is rejected (one is needed per scope)."""
    if not transformers:
        return []  # (without importing the stream package: compiling stays light)
    from stategraph.stream import StreamTransformer

    factories: list[Callable[[tuple[str, ...]], StreamTransformer]] = []
    for item in transformers or ():
        if isinstance(item, StreamTransformer):
            raise TypeError(
                f"transformers=[...] got a pre-built instance of {type(item).__name__}; pass "
                "the class (or a factory taking the scope, e.g. functools.partial(Cls, "
                "option=...)): each subgraph handle builds its own."
            )
        if not callable(item):
            raise TypeError(
                f"transformers=[...] takes StreamTransformer classes or factories, got {item!r}."
            )
        factories.append(_scoped(item))
    return factories


def _scoped(factory: Any) -> Callable[[tuple[str, ...]], StreamTransformer]:
    def build(scope: tuple[str, ...]) -> StreamTransformer:
        try:
            made = factory(scope)
        except TypeError:
            made = factory()
            made.scope = tuple(scope)
        if getattr(made, "scope", None) != tuple(scope):
            made.scope = tuple(scope)
        return made

    build.__name__ = getattr(factory, "__name__", type(factory).__name__)
    return build


def _factories(graph: Any, transformers: Sequence[Any] | None) -> list[Any]:
    from stategraph.stream.transformers import (
        LifecycleTransformer,
        MessagesTransformer,
        SubgraphTransformer,
        ValuesTransformer,
    )

    builtin = [ValuesTransformer, MessagesTransformer, LifecycleTransformer, SubgraphTransformer]
    extra = [*getattr(graph, "stream_transformers", ()), *(transformers or ())]
    return [*builtin, *normalize_transformer_factories(extra)]


def _stream_kwargs(kwargs: dict[str, Any], modes: list[str]) -> dict[str, Any]:
    for name in _OWNED:
        if name in kwargs:
            raise TypeError(
                f"stream_events(version='v3') does not accept {name!r}: v3 chooses the stream "
                "modes from its transformers and always follows subgraphs. Register a "
                "transformer (e.g. UpdatesTransformer) to get another projection."
            )
    out = dict(kwargs)
    for name in _DEFAULTED:
        out.setdefault(name, None)
    out["stream_mode"] = modes
    out["subgraphs"] = True
    out["version"] = "v2"
    return out


def _modes(mux: Any) -> list[str]:
    modes: list[str] = []
    for transformer in mux._transformers:
        for mode in getattr(transformer, "required_stream_modes", ()) or ():
            if mode not in modes:
                modes.append(mode)
    return modes or ["values"]


def _setup(
    graph: Any, transformers: Sequence[Any] | None, kwargs: dict[str, Any], *, is_async: bool
) -> tuple[StreamMux, dict[str, Any]]:
    """What both entry points start with: the run object's mux of projections and the
    keyword arguments of the graph's ``stream``/``astream`` call that feeds it."""
    from stategraph.stream._mux import StreamMux

    mux = StreamMux(factories=_factories(graph, transformers), is_async=is_async)
    return mux, _stream_kwargs(kwargs, _modes(mux))


def stream_v3(
    graph: Any, input: Any, config: Any, transformers: Sequence[Any] | None, kwargs: dict[str, Any]
) -> GraphRunStream:
    """Build the sync run object; the graph starts when a projection is consumed."""
    from stategraph.stream import GraphRunStream

    mux, stream_kwargs = _setup(graph, transformers, kwargs, is_async=False)
    return GraphRunStream(iter(graph.stream(input, config, **stream_kwargs)), mux)


async def astream_v3(
    graph: Any, input: Any, config: Any, transformers: Sequence[Any] | None, kwargs: dict[str, Any]
) -> AsyncGraphRunStream:
    """Build the async run object; the graph starts when a projection is consumed."""
    from stategraph.stream import AsyncGraphRunStream

    mux, stream_kwargs = _setup(graph, transformers, kwargs, is_async=True)
    parts = graph.astream(input, config, **stream_kwargs)
    if inspect.iscoroutine(parts):
        parts = await parts
    return AsyncGraphRunStream(parts.__aiter__(), mux)
