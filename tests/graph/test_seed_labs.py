"""The seed labs (recorded results of LangGraph 1.2.16) and the seed end-to-end example.

Each lab is the seed's code with the import prefix changed, run through the sync and
the async API, and compared with the recorded result.
"""

import operator
from typing import Annotated, Literal, Optional

import pytest
from typing_extensions import TypedDict

from stategraph.errors import GraphRecursionError, InvalidUpdateError
from stategraph.graph import END, START, StateGraph
from stategraph.graph.message import add_messages
from stategraph.types import Command, RetryPolicy, Send

RECORDED = {
    "minimal": {"text": " hello ", "result": "HELLO"},
    "parallel": {"merged": ["A", "B"], "join_total": 2, "without_reducer": "InvalidUpdateError"},
    "messages": {"count": 1, "same_id_content": "corrected"},
    "dispatch": {"squares": [4, 9, 16]},
    "retry": {"attempts_including_first": 3},
    "recursion": {"unbounded_loop": "GraphRecursionError"},
    "streaming": [{"inc": {"count": 1}}],
}


def lab_minimal(run):
    class State(TypedDict):
        text: str
        result: str

    def normalize(state):
        return {"result": state["text"].strip().upper()}

    builder = StateGraph(State)
    builder.add_node("normalize", normalize)
    builder.add_edge(START, "normalize")
    builder.add_edge("normalize", END)
    graph = builder.compile()
    result = run.invoke(graph, {"text": " hello "})
    assert result == {"text": " hello ", "result": "HELLO"}
    return result


def lab_parallel(run):
    class State(TypedDict):
        items: Annotated[list[str], operator.add]
        total: int

    def make_graph(schema):
        b = StateGraph(schema)
        b.add_node("a", lambda s: {"items": ["A"]})
        b.add_node("b", lambda s: {"items": ["B"]})
        b.add_node("join", lambda s: {"total": len(s["items"])})
        b.add_edge(START, "a")
        b.add_edge(START, "b")
        b.add_edge(["a", "b"], "join")
        b.add_edge("join", END)
        return b.compile()

    result = run.invoke(make_graph(State), {"items": []})
    assert sorted(result["items"]) == ["A", "B"]
    assert result["total"] == 2

    class BadState(TypedDict):
        items: list[str]
        total: int

    with pytest.raises(InvalidUpdateError):
        run.invoke(make_graph(BadState), {"items": []})
    conflict = "InvalidUpdateError"
    return {
        "merged": sorted(result["items"]),
        "join_total": result["total"],
        "without_reducer": conflict,
    }


def lab_messages(run):
    first = add_messages([], [{"role": "user", "content": "old", "id": "m1"}])
    second = add_messages(first, [{"role": "user", "content": "corrected", "id": "m1"}])
    assert len(second) == 1
    assert second[0].content == "corrected"
    return {"count": len(second), "same_id_content": second[0].content}


def lab_dispatch(run):
    class State(TypedDict):
        numbers: list[int]
        squares: Annotated[list[int], operator.add]

    class Job(TypedDict):
        number: int

    def route(state):
        return [Send("square", {"number": n}) for n in state["numbers"]]

    def square(state: Job):
        return {"squares": [state["number"] ** 2]}

    b = StateGraph(State)
    b.add_node("square", square)
    b.add_conditional_edges(START, route, ["square"])
    b.add_edge("square", END)
    result = run.invoke(b.compile(), {"numbers": [2, 3, 4], "squares": []})
    assert sorted(result["squares"]) == [4, 9, 16]
    return {"squares": sorted(result["squares"])}


def lab_retry(run):
    class State(TypedDict):
        ok: bool

    attempts = {"count": 0}

    def flaky(state):
        attempts["count"] += 1
        if attempts["count"] < 3:
            raise ConnectionError("simulated temporary outage")
        return {"ok": True}

    b = StateGraph(State)
    b.add_node(
        "flaky",
        flaky,
        retry_policy=RetryPolicy(
            initial_interval=0.001,
            max_interval=0.001,
            max_attempts=3,
            jitter=False,
            retry_on=ConnectionError,
        ),
    )
    b.add_edge(START, "flaky")
    b.add_edge("flaky", END)
    assert run.invoke(b.compile(), {})["ok"] is True
    assert attempts["count"] == 3
    return {"attempts_including_first": attempts["count"]}


def lab_recursion(run):
    class State(TypedDict):
        count: int

    b = StateGraph(State)
    b.add_node("loop", lambda s: {"count": s["count"] + 1})
    b.add_edge(START, "loop")
    b.add_edge("loop", "loop")
    try:
        run.invoke(b.compile(), {"count": 0}, {"recursion_limit": 3})
    except GraphRecursionError:
        return {"unbounded_loop": "GraphRecursionError"}
    raise AssertionError("loop should reach recursion limit")


def lab_streaming(run):
    class State(TypedDict):
        count: int

    b = StateGraph(State)
    b.add_node("inc", lambda s: {"count": s["count"] + 1})
    b.add_edge(START, "inc")
    b.add_edge("inc", END)
    events = run.stream(b.compile(), {"count": 0}, stream_mode="updates")
    assert events == [{"inc": {"count": 1}}]
    return events


LABS = {
    "minimal": lab_minimal,
    "parallel": lab_parallel,
    "messages": lab_messages,
    "dispatch": lab_dispatch,
    "retry": lab_retry,
    "recursion": lab_recursion,
    "streaming": lab_streaming,
}


@pytest.mark.parametrize("name", list(LABS))
def test_seed_lab_matches_recorded_result(run, name):
    assert LABS[name](run) == RECORDED[name]


def test_retry_lab_gives_up_after_max_attempts(run):
    class State(TypedDict):
        ok: bool

    attempts = {"count": 0}

    def always_down(state):
        attempts["count"] += 1
        raise ConnectionError("still down")

    b = StateGraph(State)
    policy = RetryPolicy(
        initial_interval=0.001,
        max_interval=0.001,
        max_attempts=3,
        jitter=False,
        retry_on=ConnectionError,
    )
    b.add_node("flaky", always_down, retry_policy=policy)
    b.add_edge(START, "flaky")
    with pytest.raises(ConnectionError, match="still down"):
        run.invoke(b.compile(), {})
    assert attempts["count"] == 3


def test_retry_lab_does_not_retry_other_errors(run):
    class State(TypedDict):
        ok: bool

    attempts = {"count": 0}

    def broken(state):
        attempts["count"] += 1
        raise KeyError("not transient")

    b = StateGraph(State)
    policy = RetryPolicy(
        initial_interval=0.001,
        max_interval=0.001,
        max_attempts=3,
        jitter=False,
        retry_on=ConnectionError,
    )
    b.add_node("flaky", broken, retry_policy=policy)
    b.add_edge(START, "flaky")
    with pytest.raises(KeyError):
        run.invoke(b.compile(), {})
    assert attempts["count"] == 1


# --------------------------------------------------------------------------- seed 004, part 10


class QAState(TypedDict):
    question: str
    route: Optional[Literal["known", "unknown"]]
    answer: Optional[str]
    approved: Optional[bool]


KNOWN_ANSWER = "LangGraph 使用图、状态和节点组织 Agent 执行。"


def classify(state: QAState) -> Command[Literal["known_answer", "ask_human"]]:
    if "LangGraph" in state["question"]:
        return Command(update={"route": "known"}, goto="known_answer")
    return Command(update={"route": "unknown"}, goto="ask_human")


def known_answer(state: QAState):
    return {"answer": KNOWN_ANSWER}


def ask_human(state: QAState):
    raise AssertionError("the known path must not reach ask_human")


def _qa_graph():
    builder = StateGraph(QAState)
    builder.add_node("classify", classify)
    builder.add_node("known_answer", known_answer)
    builder.add_node("ask_human", ask_human)
    builder.add_edge(START, "classify")
    builder.add_edge("known_answer", END)
    builder.add_edge("ask_human", END)
    return builder.compile()


QUESTION = {
    "question": "LangGraph 中的 State 是什么？",
    "route": None,
    "answer": None,
    "approved": None,
}


def test_end_to_end_known_path(run):
    result = run.invoke(_qa_graph(), dict(QUESTION))
    assert result == {
        "question": "LangGraph 中的 State 是什么？",
        "route": "known",
        "answer": KNOWN_ANSWER,
        "approved": None,
    }


def test_end_to_end_known_path_updates(run):
    chunks = run.stream(_qa_graph(), dict(QUESTION), stream_mode="updates")
    assert chunks == [
        {"classify": {"route": "known"}},
        {"known_answer": {"answer": KNOWN_ANSWER}},
    ]


def test_end_to_end_graph_structure():
    graph = _qa_graph()
    builder = graph.builder
    assert list(builder.nodes) == ["classify", "known_answer", "ask_human"]
    assert builder.edges == {(START, "classify"), ("known_answer", END), ("ask_human", END)}
    assert sorted(builder.channels) == ["answer", "approved", "question", "route"]
    mermaid = graph.get_graph().draw_mermaid()
    for edge in (
        "__start__ --> classify;",
        "classify -.-> known_answer;",
        "classify -.-> ask_human;",
        "known_answer --> __end__;",
        "ask_human --> __end__;",
    ):
        assert edge in mermaid
