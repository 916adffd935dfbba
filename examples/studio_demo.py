"""A database to explore with ``stategraph studio``.

Run ``python examples/studio_demo.py [FILE]``: it writes a SQLite checkpoint file (and a
store file beside it) holding a few threads of an article-writing graph, then prints
the command that opens them in the studio:

* ``waiting``: paused in ``review``, waiting for an approval (``{"approved": true}``);
* ``failed``: ``publish`` raised, its error is saved with the thread;
* ``published``: ran to the end; its ``research`` node is a subgraph, so the thread has
  subgraph checkpoints too (every thread does);
* ``rejected``: answered with a rejection, then its state was updated by hand.

The graph itself is ``graph`` in this file: the studio loads it as
``examples/studio_demo.py:graph`` to draw it and act on the threads.
"""

from __future__ import annotations

import operator
import sys
import tempfile
from pathlib import Path
from typing import Annotated, Any

from typing_extensions import TypedDict

from stategraph.checkpoint.sqlite import SqliteSaver
from stategraph.graph import END, START, StateGraph
from stategraph.store.sqlite import SqliteStore
from stategraph.types import Command, interrupt

APPROVAL_SCHEMA = {
    "type": "object",
    "properties": {"approved": {"type": "boolean"}, "comment": {"type": "string"}},
    "required": ["approved"],
    "additionalProperties": False,
}
"""What an answer to the review must look like (the studio checks it before resuming)."""


class Article(TypedDict, total=False):
    topic: str
    sources: Annotated[list[str], operator.add]
    draft: str
    approved: bool
    comment: str
    status: str


class Research(TypedDict, total=False):
    topic: str
    sources: Annotated[list[str], operator.add]


def search(state: Research) -> dict[str, Any]:
    return {"sources": [f"encyclopedia: {state['topic']}"]}


def interview(state: Research) -> dict[str, Any]:
    return {"sources": [f"expert on {state['topic']}"]}


_research = StateGraph(Research)
_research.add_node("search", search)
_research.add_node("interview", interview)
_research.add_edge(START, "search")
_research.add_edge("search", "interview")
_research.add_edge("interview", END)
research = _research.compile(name="research")


def write(state: Article) -> dict[str, Any]:
    sources = ", ".join(state.get("sources") or [])
    return {"draft": f"{state['topic']}: a short article citing {sources}."}


def review(state: Article) -> dict[str, Any]:
    answer = interrupt(
        {"question": "Publish this draft?", "draft": state["draft"]},
        response_schema=APPROVAL_SCHEMA,
    )
    return {"approved": bool(answer["approved"]), "comment": answer.get("comment", "")}


def publish(state: Article) -> dict[str, Any]:
    if "forbidden" in state["topic"]:
        raise RuntimeError(f"the press refused the topic {state['topic']!r}")
    return {"status": "published" if state.get("approved") else "rejected"}


builder = StateGraph(Article)
builder.add_node("research", research)
builder.add_node("write", write)
builder.add_node("review", review)
builder.add_node("publish", publish)
builder.add_edge(START, "research")
builder.add_edge("research", "write")
builder.add_edge("write", "review")
builder.add_edge("review", "publish")
builder.add_edge("publish", END)
graph = builder.compile(name="article")


def build(path: str) -> dict[str, Any]:
    """Write the demo threads into the SQLite file ``path`` (and ``path`` + ``.store``)."""
    Path(path).unlink(missing_ok=True)
    store_path = path + ".store"
    Path(store_path).unlink(missing_ok=True)
    outcome: dict[str, Any] = {}
    with SqliteSaver.from_conn_string(path) as saver:
        app = builder.compile(checkpointer=saver, name="article")

        def config(thread: str, user: str) -> dict[str, Any]:
            return {"configurable": {"thread_id": thread}, "metadata": {"user": user}}

        app.invoke({"topic": "Tides"}, config("published", "ada"))
        app.invoke(
            Command(resume={"approved": True, "comment": "fine"}), config("published", "ada")
        )

        app.invoke({"topic": "Glaciers"}, config("rejected", "bob"))
        app.invoke(Command(resume={"approved": False}), config("rejected", "bob"))
        app.update_state(config("rejected", "bob"), {"comment": "needs sources"}, as_node="review")

        app.invoke({"topic": "forbidden lore"}, config("failed", "eve"))
        try:
            app.invoke(Command(resume={"approved": True}), config("failed", "eve"))
        except RuntimeError as exc:
            outcome["failed"] = str(exc)

        result = app.invoke({"topic": "Volcanoes"}, config("waiting", "ada"))
        outcome["waiting"] = result["__interrupt__"][0].value
        outcome["threads"] = ["published", "rejected", "failed", "waiting"]
    with SqliteStore.from_conn_string(store_path) as store:
        store.put(("users", "ada"), "profile", {"name": "Ada", "likes": ["tides", "volcanoes"]})
        store.put(("users", "bob"), "profile", {"name": "Bob", "likes": ["glaciers"]})
        store.put(("style",), "house", {"tone": "plain", "max_words": 400})
    outcome["store"] = store_path
    return outcome


def command(path: str) -> str:
    """The command that opens ``path`` in the studio."""
    return (
        f"stategraph studio {Path(__file__).resolve()}:graph --sqlite {path} "
        f"--store {path}.store --allow-writes"
    )


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Build the database (argv[0], or a temporary file) and print how to open it."""
    args = sys.argv[1:] if argv is None else argv
    path = args[0] if args else str(Path(tempfile.mkdtemp()) / "studio_demo.sqlite")
    outcome = build(path)
    print(f"Wrote {len(outcome['threads'])} threads to {path}: {', '.join(outcome['threads'])}")
    print("Open them with:")
    print(f"  {command(path)}")
    return {"path": path, **outcome}


if __name__ == "__main__":
    main()
