"""The sync and async cursors of a StreamChannel read buffered items the same way:
every queued item first (also those pushed while the consumer holds one), then the
run's error if the channel failed, or the end if it closed."""

from __future__ import annotations

import asyncio

import pytest

from stategraph.stream.stream_channel import StreamChannel


def _channel(*, is_async: bool) -> StreamChannel[int]:
    channel: StreamChannel[int] = StreamChannel("numbers")
    channel._bind(is_async=is_async)
    return channel


def test_sync_cursor_gives_the_items_then_the_error() -> None:
    channel = _channel(is_async=False)
    cursor = iter(channel)
    channel.push(1)
    channel.push(2)
    assert next(cursor) == 1
    channel.push(3)  # pushed while the consumer holds an item: still delivered
    channel.fail(ValueError("boom"))
    assert next(cursor) == 2
    assert next(cursor) == 3
    with pytest.raises(ValueError, match="boom"):
        next(cursor)


def test_sync_cursor_asks_the_pump_for_more_until_closed() -> None:
    channel = _channel(is_async=False)
    produced = iter([10, 20])

    def pump() -> bool:
        item = next(produced, None)
        if item is None:
            channel.close()
            return False
        channel.push(item)
        return True

    channel._request_more = pump
    assert list(channel) == [10, 20]


def test_async_cursor_gives_the_items_then_the_error() -> None:
    async def main() -> list[int]:
        channel = _channel(is_async=True)
        cursor = channel.__aiter__()
        channel.push(1)
        channel.push(2)
        channel.fail(RuntimeError("late failure"))
        seen = [await cursor.__anext__(), await cursor.__anext__()]
        with pytest.raises(RuntimeError, match="late failure"):
            await cursor.__anext__()
        return seen

    assert asyncio.run(main()) == [1, 2]


def test_async_cursor_waits_for_pushes_then_ends_on_close() -> None:
    async def main() -> list[int]:
        channel = _channel(is_async=True)

        async def produce() -> None:
            for n in (5, 6):
                await asyncio.sleep(0)
                channel.push(n)
            channel.close()

        seen: list[int] = []

        async def consume() -> None:
            async for n in channel:
                seen.append(n)

        consumer = asyncio.create_task(consume())
        await asyncio.sleep(0)  # the consumer subscribes before anything is pushed
        await produce()
        await consumer
        return seen

    assert asyncio.run(main()) == [5, 6]
