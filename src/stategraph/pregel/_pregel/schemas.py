"""A graph's schemas (input, output, context, config) and its drawing."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from stategraph.pregel._pregel.base import PregelBase
from stategraph.pregel._schema import context_jsonschema, fields_model, graph_name, io_model
from stategraph.warnings import LangGraphDeprecatedSinceV10, warn_deprecated

if TYPE_CHECKING:
    from stategraph.drawing._graph import Graph
    from stategraph.pregel._roles import PregelGraph


class SchemaMixin(PregelBase):
    """Schemas and drawings of a :class:`~stategraph.pregel.Pregel` graph."""

    def get_name(self, suffix: str | None = None, *, name: str | None = None) -> str:
        """The graph's name, with ``suffix`` appended in the name's style
        (``LangGraph`` -> ``LangGraphInput``, ``my_graph`` -> ``my_graph_input``)."""
        return graph_name(name or self.name or type(self).__name__, suffix)

    @property
    def InputType(self) -> Any:
        """The type of the input value when the graph has a single input channel."""
        return _io_type(self.channels, self.input_channels, update=True)

    @property
    def OutputType(self) -> Any:
        """The type of the output value when the graph has a single output channel."""
        return _io_type(self.channels, self.output_channels, update=False)

    def get_input_schema(self, config: Mapping[str, Any] | None = None) -> Any:
        """A pydantic model of the input: the input channel's type, or one optional
        field per input channel."""
        return io_model(self.get_name("Input"), self.channels, self.input_channels, update=True)

    def get_output_schema(self, config: Mapping[str, Any] | None = None) -> Any:
        """A pydantic model of the output: the output channel's type, or one optional
        field per output channel."""
        return io_model(self.get_name("Output"), self.channels, self.output_channels, update=False)

    @property
    def input_schema(self) -> Any:
        """The pydantic model of the graph's input (see :meth:`get_input_schema`)."""
        return self.get_input_schema()

    @property
    def output_schema(self) -> Any:
        """The pydantic model of the graph's output (see :meth:`get_output_schema`)."""
        return self.get_output_schema()

    def get_input_jsonschema(self, config: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """JSON schema of the input."""
        return cast("dict[str, Any]", self.get_input_schema(config).model_json_schema())

    def get_output_jsonschema(self, config: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """JSON schema of the output."""
        return cast("dict[str, Any]", self.get_output_schema(config).model_json_schema())

    def get_context_jsonschema(self) -> dict[str, Any] | None:
        """JSON schema of the ``context_schema`` (``None`` when the graph has none)."""
        return context_jsonschema(self.context_schema)

    def config_schema(self, *, include: Sequence[str] | None = None) -> Any:
        """Deprecated: a model whose ``configurable`` field is the context schema.

        Use :meth:`get_context_jsonschema`.
        """
        warn_deprecated(
            LangGraphDeprecatedSinceV10,
            "`config_schema` is deprecated. Use `get_context_jsonschema` for the relevant "
            "schema instead.",
        )
        return self._config_model()

    def get_config_jsonschema(self, *, include: Sequence[str] | None = None) -> dict[str, Any]:
        """Deprecated: JSON schema of :meth:`config_schema`. Use
        :meth:`get_context_jsonschema`."""
        warn_deprecated(
            LangGraphDeprecatedSinceV10,
            "`get_config_jsonschema` is deprecated. Use `get_context_jsonschema` instead.",
        )
        return cast("dict[str, Any]", self._config_model().model_json_schema())

    def _config_model(self) -> Any:
        fields: dict[str, tuple[Any, Any]] = {}
        if self.context_schema is not None:
            fields["configurable"] = (self.context_schema, None)
        return fields_model(self.get_name("Config"), fields)

    def get_graph(
        self, config: Mapping[str, Any] | None = None, *, xray: int | bool = False
    ) -> Graph:
        """The graph's structure as a drawable :class:`~stategraph.drawing.Graph`.

        Render it with ``draw_mermaid()``, ``draw_ascii()``, ``draw_svg()`` or
        ``draw_png()``. ``xray=True`` draws subgraphs inside their nodes (an int: that
        many levels deep).
        """
        from stategraph.pregel._draw import draw_pregel

        return draw_pregel(cast("PregelGraph", self), xray=xray)

    async def aget_graph(
        self, config: Mapping[str, Any] | None = None, *, xray: int | bool = False
    ) -> Graph:
        """Async twin of :meth:`get_graph`."""
        return self.get_graph(config, xray=xray)

    def _repr_mimebundle_(
        self, include: Any = None, exclude: Any = None, **kwargs: Any
    ) -> dict[str, str]:
        """Notebook display: the graph drawn inline (SVG), with its Mermaid source."""
        from stategraph.drawing._notebook import mimebundle

        return mimebundle(self.get_graph(), title=f"{type(self).__name__} '{self.name}'")


def _io_type(channels: Mapping[str, Any], io_channels: str | Sequence[str], *, update: bool) -> Any:
    """The type of an input (``update``: what the channel takes) or output value: that
    of the one channel ``io_channels`` names (``None`` if there is no such channel), or
    ``dict`` for a list of channels."""
    if not isinstance(io_channels, str):
        return dict
    channel = channels.get(io_channels)
    if channel is None:
        return None
    return channel.UpdateType if update else channel.ValueType
