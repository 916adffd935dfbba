"""The examples of seed 004: the end-to-end graph of part 10, and those of parts 7 and 8."""

from __future__ import annotations

from typing import Any, Literal, Optional

from typing_extensions import TypedDict

from stategraph.checkpoint.memory import InMemorySaver
from stategraph.graph import END, START, StateGraph
from stategraph.types import Command, Interrupt, interrupt

from ._support import Runner, cfg, shape, xxh

KNOWN = "LangGraph 使用图、状态和节点组织 Agent 执行。"
CONFIRMED = "已获得人工确认，可以继续处理。"
DECLINED = "人工未确认，停止处理。"
QUESTION = {"type": "clarification", "message": "这个问题需要人工补充上下文，是否继续？"}


class State(TypedDict):
    question: str
    route: Optional[Literal["known", "unknown"]]
    answer: Optional[str]
    approved: Optional[bool]


def classify(state: State) -> Command[Literal["known_answer", "ask_human"]]:
    if "LangGraph" in state["question"]:
        return Command(update={"route": "known"}, goto="known_answer")
    return Command(update={"route": "unknown"}, goto="ask_human")


def known_answer(state: State) -> dict[str, Any]:
    return {"answer": KNOWN}


def ask_human(state: State) -> dict[str, Any]:
    approved = interrupt(QUESTION)
    if approved:
        return {"approved": True, "answer": CONFIRMED}
    return {"approved": False, "answer": DECLINED}


def build() -> Any:
    builder = StateGraph(State)
    builder.add_node("classify", classify)
    builder.add_node("known_answer", known_answer)
    builder.add_node("ask_human", ask_human)
    builder.add_edge(START, "classify")
    builder.add_edge("known_answer", END)
    builder.add_edge("ask_human", END)
    return builder.compile(checkpointer=InMemorySaver())


def question(text: str) -> State:
    return {"question": text, "route": None, "answer": None, "approved": None}


def test_known_question_is_answered_directly(runner: Runner) -> None:
    graph = build()
    config = cfg("demo-thread-001")
    result = runner.invoke(graph, question("LangGraph 中的 State 是什么？"), config)
    assert result == {
        "question": "LangGraph 中的 State 是什么？",
        "route": "known",
        "answer": KNOWN,
        "approved": None,
    }
    snapshot = runner.get_state(graph, config)
    assert snapshot.next == ()
    assert snapshot.interrupts == ()


def test_unknown_question_interrupts_then_resumes(runner: Runner) -> None:
    graph = build()
    config = cfg("demo-thread-002")
    text = "请处理一个需要人工确认的问题"
    paused = runner.invoke(graph, question(text), config)
    snapshot = runner.get_state(graph, config)
    assert snapshot.next == ("ask_human",)
    expected = Interrupt(value=QUESTION, id=xxh(f"ask_human:{snapshot.tasks[0].id}"))
    assert paused == {
        "question": text,
        "route": "unknown",
        "answer": None,
        "approved": None,
        "__interrupt__": [expected],
    }
    assert snapshot.interrupts == (expected,)

    result = runner.invoke(graph, Command(resume=True), config)
    assert result == {"question": text, "route": "unknown", "answer": CONFIRMED, "approved": True}
    assert runner.get_state(graph, config).next == ()
    assert shape(runner.history(graph, config)) == [
        ("loop", 2, ()),
        ("loop", 1, ("ask_human",)),
        ("loop", 0, ("classify",)),
        ("input", -1, ("__start__",)),
    ]


def test_unknown_question_declined(runner: Runner) -> None:
    graph = build()
    config = cfg("declined")
    runner.invoke(graph, question("需要确认"), config)
    result = runner.invoke(graph, Command(resume=False), config)
    assert result["approved"] is False
    assert result["answer"] == DECLINED


def test_stream_of_both_paths(runner: Runner) -> None:
    graph = build()
    known = runner.stream(graph, question("LangGraph?"), cfg("stream-known"))
    assert known == [{"classify": {"route": "known"}}, {"known_answer": {"answer": KNOWN}}]
    config = cfg("stream-unknown")
    human = runner.stream(graph, question("?"), config)
    task_id = runner.get_state(graph, config).tasks[0].id
    assert human == [
        {"classify": {"route": "unknown"}},
        {"__interrupt__": (Interrupt(value=QUESTION, id=xxh(f"ask_human:{task_id}")),)},
    ]
    assert runner.stream(graph, Command(resume=True), config) == [
        {"ask_human": {"approved": True, "answer": CONFIRMED}}
    ]


def test_new_thread_does_not_find_the_old_interrupt(runner: Runner) -> None:
    graph = build()
    old = cfg("demo-thread-003")
    paused = runner.invoke(graph, question("需要确认"), old)
    old_id = paused["__interrupt__"][0].id

    new = cfg("another-thread")
    fresh = runner.get_state(graph, new)
    assert fresh.next == ()
    assert fresh.interrupts == ()
    assert fresh.values == {}

    again = runner.invoke(graph, question("需要确认"), new)
    assert [i.value for i in again["__interrupt__"]] == [QUESTION]
    assert again["__interrupt__"][0].id != old_id
    assert runner.invoke(graph, Command(resume=False), new)["answer"] == DECLINED

    # the old thread is untouched and still waits for its own answer
    old_state = runner.get_state(graph, old)
    assert old_state.next == ("ask_human",)
    assert [i.id for i in old_state.interrupts] == [old_id]
    assert runner.invoke(graph, Command(resume=True), old)["answer"] == CONFIRMED


def test_resume_on_a_fresh_thread_starts_a_new_run(runner: Runner) -> None:
    """As in LangGraph: with no saved state, Command(resume=...) runs from START."""

    class Counter(TypedDict, total=False):
        x: int

    seen: list[dict[str, Any]] = []

    def step(state: Counter) -> dict[str, int]:
        seen.append(dict(state))
        return {"x": state.get("x", 0) + 1}

    builder = StateGraph(Counter)
    builder.add_node("step", step)
    builder.add_edge(START, "step")
    graph = builder.compile(checkpointer=InMemorySaver())
    config = cfg("never-paused")
    assert runner.invoke(graph, Command(resume=True), config) == {"x": 1}
    assert seen == [{}]
    assert shape(runner.history(graph, config)) == [
        ("loop", 1, ()),
        ("loop", 0, ("step",)),
        ("input", -1, ("__start__",)),
    ]


def test_graph_draws_command_destinations() -> None:
    drawn = build().get_graph()
    assert set(drawn.nodes) == {"__start__", "classify", "known_answer", "ask_human", "__end__"}
    edges = {(e.source, e.target, e.conditional) for e in drawn.edges}
    assert edges == {
        ("__start__", "classify", False),
        ("classify", "known_answer", True),
        ("classify", "ask_human", True),
        ("known_answer", "__end__", False),
        ("ask_human", "__end__", False),
    }


# ----------------------------------------------------------------- part 7 examples


class ApprovalState(TypedDict):
    action: str
    approved: Optional[bool]
    result: Optional[str]


def approval_graph(executed: list[str]) -> Any:
    def review(state: ApprovalState) -> Command[Any]:
        approved = interrupt(
            {"type": "approval", "action": state["action"], "message": "是否批准执行该操作？"}
        )
        if approved:
            return Command(update={"approved": True}, goto="execute")
        return Command(update={"approved": False, "result": "操作被拒绝"}, goto=END)

    def execute(state: ApprovalState) -> dict[str, Any]:
        executed.append(state["action"])
        return {"result": f"已执行：{state['action']}"}

    builder = StateGraph(ApprovalState)
    builder.add_node("review", review)
    builder.add_node("execute", execute)
    builder.add_edge(START, "review")
    builder.add_edge("execute", END)
    return builder.compile(checkpointer=InMemorySaver())


def test_part7_approval_approved_and_rejected(runner: Runner) -> None:
    executed: list[str] = []
    graph = approval_graph(executed)
    start = {"action": "发送付款通知邮件", "approved": None, "result": None}
    config = cfg("approval-001")
    first = runner.invoke(graph, start, config)
    assert [i.value for i in first["__interrupt__"]] == [
        {"type": "approval", "action": "发送付款通知邮件", "message": "是否批准执行该操作？"}
    ]
    second = runner.invoke(graph, Command(resume=True), config)
    assert second == {
        "action": "发送付款通知邮件",
        "approved": True,
        "result": "已执行：发送付款通知邮件",
    }

    denied_cfg = cfg("approval-002")
    runner.invoke(graph, start, denied_cfg)
    denied = runner.invoke(graph, Command(resume=False), denied_cfg)
    assert denied == {"action": "发送付款通知邮件", "approved": False, "result": "操作被拒绝"}
    assert executed == ["发送付款通知邮件"]


class AgeState(TypedDict, total=False):
    age: int


def test_part7_validation_loop_asks_again_in_the_same_node(runner: Runner) -> None:
    asked: list[Any] = []

    def collect_age(state: AgeState) -> dict[str, int]:
        while True:
            age = interrupt("请输入年龄")
            asked.append(age)
            if isinstance(age, int) and 0 <= age <= 150:
                return {"age": age}

    builder = StateGraph(AgeState)
    builder.add_node("collect_age", collect_age)
    builder.add_edge(START, "collect_age")
    graph = builder.compile(checkpointer=InMemorySaver())
    config = cfg("age")
    first = runner.invoke(graph, {}, config)
    ns = f"collect_age:{runner.get_state(graph, config).tasks[0].id}"
    assert first["__interrupt__"] == [Interrupt(value="请输入年龄", id=xxh(ns))]
    second = runner.invoke(graph, Command(resume="abc"), config)
    assert second["__interrupt__"] == [Interrupt(value="请输入年龄", id=xxh(f"{ns}|1"))]
    third = runner.invoke(graph, Command(resume=200), config)
    assert third["__interrupt__"] == [Interrupt(value="请输入年龄", id=xxh(f"{ns}|2"))]
    assert runner.invoke(graph, Command(resume=30), config) == {"age": 30}
    # every resume replays the earlier answers in order
    assert asked == ["abc", "abc", 200, "abc", 200, 30]


class DecisionState(TypedDict, total=False):
    decision: str


def test_part7_invalid_decision_routes_back_to_review(runner: Runner) -> None:
    runs: list[str] = []

    def review(state: DecisionState) -> Command[Any]:
        runs.append("review")
        decision = interrupt({"type": "approval", "allowed_values": ["approve", "reject"]})
        if decision not in {"approve", "reject"}:
            return Command(goto="review")
        return Command(
            update={"decision": decision}, goto="execute" if decision == "approve" else END
        )

    def execute(state: DecisionState) -> dict[str, str]:
        runs.append("execute")
        return {}

    builder = StateGraph(DecisionState)
    builder.add_node("review", review)
    builder.add_node("execute", execute)
    builder.add_edge(START, "review")
    graph = builder.compile(checkpointer=InMemorySaver())
    config = cfg("decision")
    first = runner.invoke(graph, {}, config)
    second = runner.invoke(graph, Command(resume="maybe"), config)
    # a new review task: a new interrupt with a different id
    assert [i.value for i in second["__interrupt__"]] == [
        {"type": "approval", "allowed_values": ["approve", "reject"]}
    ]
    assert second["__interrupt__"][0].id != first["__interrupt__"][0].id
    assert runner.invoke(graph, Command(resume="approve"), config) == {"decision": "approve"}
    assert runs == ["review", "review", "review", "review", "execute"]


# ----------------------------------------------------------------- part 8 examples


class RiskState(TypedDict, total=False):
    risk_score: float
    approved: bool
    done: bool


def risk_graph(**compile_kw: Any) -> Any:
    def maybe_review(state: RiskState) -> dict[str, bool]:
        if state["risk_score"] >= 0.8:
            return {"approved": interrupt("高风险操作，请审批")}
        return {"approved": True}

    def execute(state: RiskState) -> dict[str, bool]:
        return {"done": state["approved"]}

    builder = StateGraph(RiskState)
    builder.add_node("maybe_review", maybe_review)
    builder.add_node("execute", execute)
    builder.add_edge(START, "maybe_review")
    builder.add_edge("maybe_review", "execute")
    return builder.compile(checkpointer=InMemorySaver(), **compile_kw)


def test_part8_dynamic_interrupt_depends_on_data(runner: Runner) -> None:
    graph = risk_graph()
    low = runner.invoke(graph, {"risk_score": 0.1}, cfg("low"))
    assert low == {"risk_score": 0.1, "approved": True, "done": True}
    config = cfg("high")
    high = runner.invoke(graph, {"risk_score": 0.9}, config)
    assert [i.value for i in high["__interrupt__"]] == ["高风险操作，请审批"]
    assert runner.invoke(graph, Command(resume=False), config) == {
        "risk_score": 0.9,
        "approved": False,
        "done": False,
    }


def test_part8_static_breakpoint_stops_every_time(runner: Runner) -> None:
    graph = risk_graph(interrupt_before=["execute"])
    for thread, score in (("bp-low", 0.1), ("bp-high", 0.9)):
        config = cfg(thread)
        result = runner.invoke(graph, {"risk_score": score}, config)
        if score >= 0.8:
            result = runner.invoke(graph, Command(resume=True), config)
        assert result == {"risk_score": score, "approved": True}
        assert "__interrupt__" not in result
        assert runner.get_state(graph, config).next == ("execute",)
        assert runner.invoke(graph, None, config) == {
            "risk_score": score,
            "approved": True,
            "done": True,
        }
