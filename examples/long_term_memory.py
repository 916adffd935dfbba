"""Long-term memory with the store: facts remembered across threads, searched by meaning.

Run it with ``python examples/long_term_memory.py``. Checkpoints remember one thread
(a conversation); the *store* remembers across threads. ``remember`` writes facts
about the user under the namespace ``("users", user_id, "facts")``; ``answer`` (in a
new thread) searches them. The store is built with a small bag-of-words embedding so
``search(query=...)`` ranks by similarity; in an application pass a real embedding
model in ``index``.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from typing_extensions import TypedDict

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.graph import END, START, StateGraph
from stategraph.runtime import Runtime
from stategraph.store.memory import InMemoryStore

VOCABULARY = ["tea", "coffee", "drink", "cat", "pet", "oslo", "city", "live", "like"]


def embed(texts: list[str]) -> list[list[float]]:
    """Bag-of-words vectors over a tiny vocabulary (a stand-in for an embedding model)."""
    vectors = []
    for text in texts:
        words = re.findall(r"[a-z]+", text.lower())
        counts = [float(sum(w.startswith(root) for w in words)) for root in VOCABULARY]
        norm = math.sqrt(sum(c * c for c in counts)) or 1.0
        vectors.append([c / norm for c in counts])
    return vectors


@dataclass
class User:
    """Run-scoped context: who the graph works for (``invoke(..., context=User(...))``)."""

    user_id: str


class State(TypedDict, total=False):
    message: str
    answer: str


def remember(state: State, runtime: Runtime[User]) -> dict[str, Any]:
    """Store every "I ..." sentence of the message as a fact about the user."""
    assert runtime.store is not None
    namespace = ("users", runtime.context.user_id, "facts")
    for i, sentence in enumerate(re.split(r"[.!]\s*", state["message"])):
        if sentence.lower().startswith("i "):
            runtime.store.put(namespace, f"fact-{i}", {"text": sentence})
    return {}


def answer(state: State, runtime: Runtime[User]) -> dict[str, Any]:
    """Answer from the facts most similar to the question."""
    assert runtime.store is not None
    namespace = ("users", runtime.context.user_id, "facts")
    hits = runtime.store.search(namespace, query=state["message"], limit=1)
    if not hits:
        return {"answer": "I don't know anything about you yet."}
    return {"answer": f"You told me: {hits[0].value['text']}."}


def route(state: State) -> str:
    return "answer" if state["message"].rstrip().endswith("?") else "remember"


def build(store: InMemoryStore) -> Any:
    builder = StateGraph(State, context_schema=User)
    builder.add_node("remember", remember)
    builder.add_node("answer", answer)
    builder.add_conditional_edges(START, route, ["remember", "answer"])
    builder.add_edge("remember", END)
    builder.add_edge("answer", END)
    return builder.compile(checkpointer=InMemorySaver(), store=store)


def main() -> dict[str, Any]:
    store = InMemoryStore(index={"dims": len(VOCABULARY), "embed": embed, "fields": ["text"]})
    graph = build(store)
    ada = User("ada")
    graph.invoke(
        {"message": "I live in Oslo. I like tea more than coffee. I have a cat."},
        {"configurable": {"thread_id": "monday"}},
        context=ada,
    )
    # a new thread (no shared checkpoints), same user: the store still knows
    drink = graph.invoke(
        {"message": "Which drink do I like?"},
        {"configurable": {"thread_id": "tuesday"}},
        context=ada,
    )
    city = graph.invoke(
        {"message": "Where do I live?"}, {"configurable": {"thread_id": "wednesday"}}, context=ada
    )
    stranger = graph.invoke(
        {"message": "Where do I live?"},
        {"configurable": {"thread_id": "x"}},
        context=User("bob"),
    )
    report = {
        "facts": sorted(item.value["text"] for item in store.search(("users", "ada", "facts"))),
        "drink": drink["answer"],
        "city": city["answer"],
        "stranger": stranger["answer"],
    }
    print(json.dumps(report, indent=2))
    return report


if __name__ == "__main__":
    main()
