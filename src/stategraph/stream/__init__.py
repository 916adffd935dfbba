"""Streaming v3: run objects with typed projections, built from protocol events.

``graph.stream_events(input, config, version="v3")`` returns a
:class:`GraphRunStream` (``await graph.astream_events(..., version="v3")`` an
:class:`AsyncGraphRunStream`) whose projections (``values``, ``messages``,
``lifecycle``, ``subgraphs``, and those of the transformers you add) are
:class:`StreamChannel` s. Write your own projections with :class:`StreamTransformer`.
"""

from stategraph.stream._chat_stream import AsyncChatModelStream, ChatModelStream
from stategraph.stream._types import ProtocolEvent, StreamTransformer
from stategraph.stream.run_stream import (
    AsyncGraphRunStream,
    AsyncSubgraphRunStream,
    GraphRunStream,
    SubgraphRunStream,
)
from stategraph.stream.stream_channel import StreamChannel
from stategraph.stream.transformers import (
    CheckpointsTransformer,
    CustomTransformer,
    DebugTransformer,
    LifecyclePayload,
    LifecycleTransformer,
    MessagesTransformer,
    SubgraphStatus,
    SubgraphTransformer,
    TasksTransformer,
    UpdatesTransformer,
    ValuesTransformer,
)

__all__ = [
    "AsyncChatModelStream",
    "AsyncGraphRunStream",
    "AsyncSubgraphRunStream",
    "ChatModelStream",
    "CheckpointsTransformer",
    "CustomTransformer",
    "DebugTransformer",
    "GraphRunStream",
    "LifecyclePayload",
    "LifecycleTransformer",
    "MessagesTransformer",
    "ProtocolEvent",
    "StreamChannel",
    "StreamTransformer",
    "SubgraphRunStream",
    "SubgraphStatus",
    "SubgraphTransformer",
    "TasksTransformer",
    "UpdatesTransformer",
    "ValuesTransformer",
]
