"""Per-token cost of ``stream_mode="messages"``.

    python -m bench.tokens [--tokens N] [--repeat R]

One node calls a chat model that streams N pre-built chunks. Three timings (median of
R runs, interleaved):

* ``no listener``: ``graph.invoke`` — the model's ``invoke`` finds no handler and
  folds its chunks (the cost of the chunks themselves);
* ``stream=updates``: ``graph.stream(stream_mode="updates")`` — still no handler;
* ``stream=messages``: every chunk goes through the model-call hook, the ``messages``
  emitter and the stream queue to the caller.

The per-token overhead is (messages - no listener) / N.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Iterator
from typing import Any

from stategraph.graph import START, StateGraph
from stategraph.graph.message import MessagesState
from stategraph.messages import AIMessageChunk
from stategraph.models import ChatModel


class PrebuiltChunks(ChatModel):
    """Streams the same N chunks every call (their construction is not timed)."""

    def __init__(self, count: int) -> None:
        super().__init__()
        self.chunks = [AIMessageChunk("tok ", id="r") for _ in range(count)]

    def _stream(self, messages: list[Any], **options: Any) -> Iterator[AIMessageChunk]:
        return iter(self.chunks)


def build(model: ChatModel) -> Any:
    def node(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("n", node)
    builder.add_edge(START, "n")
    return builder.compile()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args(argv)
    graph = build(PrebuiltChunks(args.tokens))
    request = {"messages": [("user", "go")]}

    def plain() -> None:
        graph.invoke(request)

    def updates() -> None:
        for _ in graph.stream(request, stream_mode="updates"):
            pass

    def messages() -> None:
        count = sum(1 for _ in graph.stream(request, stream_mode="messages"))
        assert count == args.tokens, count

    cases = {"no listener": plain, "stream=updates": updates, "stream=messages": messages}
    times: dict[str, list[float]] = {name: [] for name in cases}
    for fn in cases.values():
        fn()  # warm up
    for _ in range(args.repeat):
        for name, fn in cases.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    medians = {name: statistics.median(values) * 1000 for name, values in times.items()}
    for name, ms in medians.items():
        print(f"{name:16} {ms:9.2f} ms   ({ms * 1000 / args.tokens:6.2f} us/token)")
    overhead = (medians["stream=messages"] - medians["no listener"]) * 1000 / args.tokens
    print(f"per-token overhead of stream_mode='messages': {overhead:.2f} us")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
