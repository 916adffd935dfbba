"""A client of the example server, with LangGraph's own Python SDK (``pip install
langgraph-sdk``): ``python client.py http://127.0.0.1:2024``."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from langgraph_sdk import get_client


async def main(url: str = "http://127.0.0.1:2024", token: str = "alice-secret") -> dict[str, Any]:
    client = get_client(url=url, headers={"Authorization": f"Bearer {token}"})
    thread = await client.threads.create(metadata={"topic": "rooms"})
    question = None
    async for part in client.runs.stream(
        thread["thread_id"],
        "assistant",
        input={"messages": [{"role": "user", "content": "Book me a room at 10."}]},
        stream_mode="updates",
    ):
        if part.event == "updates" and "__interrupt__" in part.data:
            question = part.data["__interrupt__"][0]["value"]["question"]
    final = await client.runs.wait(thread["thread_id"], "assistant", command={"resume": "yes"})
    bookings = await client.store.search_items(["bookings"])
    report = {
        "question": question,
        "answer": final["messages"][-1]["content"],
        "bookings": [item["value"] for item in bookings["items"]],
        "status": (await client.threads.get(thread["thread_id"]))["status"],
    }
    print(report)
    return report


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:]))
