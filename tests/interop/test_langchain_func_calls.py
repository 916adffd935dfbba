"""LangChain models called inside ``@task`` functions (issue 22 item 6): the call, not
the entrypoint, is what they are attributed to, whether a tracer listens or not; each
retried attempt of a call is a run of its own.

The expected values are what LangGraph 1.2.22 reports for the same workflows (observed
side by side by tools/langchain_boundary), written here in our own terms.
"""

from __future__ import annotations

import asyncio
from typing import Any
from uuid import UUID

from langchain_core import messages as lc
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

from stategraph.func import entrypoint, task
from stategraph.types import RetryPolicy


def words(*texts: str) -> GenericFakeChatModel:
    return GenericFakeChatModel(messages=iter([lc.AIMessage(t) for t in texts]))


def model_workflow(model: Any) -> Any:
    @task
    def call_model(question: str) -> str:
        return str(model.invoke(question).content)

    @entrypoint()
    def workflow(question: str) -> str:
        return call_model(question).result()

    return workflow


def test_messages_mode_attributes_a_model_in_a_task_to_the_task_without_a_tracer() -> None:
    workflow = model_workflow(words("answer now"))

    chunks = list(workflow.stream("why?", stream_mode="messages"))

    assert "".join(c.content for c, _ in chunks) == "answer now"
    for _, meta in chunks:
        assert meta["langgraph_node"] == "call_model"
        assert meta["langgraph_triggers"] == ("__pregel_push",)
        assert meta["langgraph_path"][0] == "__pregel_push"
        assert meta["langgraph_path"][1] == ("__pregel_pull", "workflow")
        ns = meta["langgraph_checkpoint_ns"]
        assert ns.startswith("workflow:") and "|call_model:" in ns
        # LangChain copies the config's checkpoint namespace: the call's, not the caller's
        assert meta["checkpoint_ns"] == ns


def test_a_traced_model_in_a_task_carries_the_call_checkpoint_namespace() -> None:
    seen: list[dict[str, Any]] = []

    class Meta(BaseCallbackHandler):
        def on_chat_model_start(self, serialized: Any, messages: Any, **kw: Any) -> None:
            seen.append(dict(kw.get("metadata") or {}))

    workflow = model_workflow(words("fine"))
    assert workflow.invoke("q", {"callbacks": [Meta()]}) == "fine"

    (meta,) = seen
    assert meta["langgraph_node"] == "call_model"
    assert meta["checkpoint_ns"] == meta["langgraph_checkpoint_ns"]
    assert "|call_model:" in meta["checkpoint_ns"]


def test_a_message_a_task_returns_is_streamed_once_as_the_task_output_with_its_id() -> None:
    @task
    def make_reply(text: str) -> lc.AIMessage:
        return lc.AIMessage(f"echo {text}")

    @entrypoint()
    def workflow(text: str) -> Any:
        return make_reply(text).result()

    out = list(workflow.stream("hi", stream_mode=["messages", "updates"]))

    messages = [data for mode, data in out if mode == "messages"]
    assert len(messages) == 1
    message, meta = messages[0]
    assert message.content == "echo hi"
    assert meta["langgraph_node"] == "make_reply"
    # the id is given when the call finishes, so the call's update already shows it
    update = next(data for mode, data in out if mode == "updates" and "make_reply" in data)
    assert message.id is not None and update["make_reply"].id == message.id


def test_entrypoint_final_save_is_not_streamed_as_a_message() -> None:
    @entrypoint()
    def workflow(text: str) -> Any:
        reply = lc.AIMessage(f"shown {text}", id="shown")
        kept = lc.AIMessage("kept for next time", id="kept")
        return entrypoint.final(value=reply, save=kept)

    messages = [m for m, _ in workflow.stream("x", stream_mode="messages")]
    assert [m.id for m in messages] == ["shown"]


class Attempts(BaseCallbackHandler):
    """Records the chain runs named ``name``: how each ended."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.runs: dict[UUID, str] = {}

    def on_chain_start(self, serialized: Any, inputs: Any, **kw: Any) -> None:
        if kw.get("name") == self.name:
            self.runs[kw["run_id"]] = "started"

    def on_chain_end(self, outputs: Any, **kw: Any) -> None:
        if kw["run_id"] in self.runs:
            self.runs[kw["run_id"]] = "ended"

    def on_chain_error(self, error: BaseException, **kw: Any) -> None:
        if kw["run_id"] in self.runs:
            self.runs[kw["run_id"]] = f"failed: {error}"


def test_each_retried_attempt_of_a_task_is_a_run_of_its_own() -> None:
    calls = []
    policy = RetryPolicy(initial_interval=0.001, jitter=False, retry_on=ConnectionError)

    @task(retry_policy=policy)
    def flaky(text: str) -> str:
        calls.append(text)
        if len(calls) < 3:
            raise ConnectionError(f"down {len(calls)}")
        return "up"

    @entrypoint()
    def workflow(text: str) -> str:
        return flaky(text).result()

    handler = Attempts("flaky")
    assert workflow.invoke("q", {"callbacks": [handler]}) == "up"
    assert list(handler.runs.values()) == ["failed: down 1", "failed: down 2", "ended"]


def test_each_retried_attempt_of_an_async_task_is_a_run_of_its_own() -> None:
    calls = []
    policy = RetryPolicy(initial_interval=0.001, jitter=False, retry_on=ConnectionError)

    @task(retry_policy=policy)
    async def flaky(text: str) -> str:
        calls.append(text)
        if len(calls) < 2:
            raise ConnectionError("down")
        return "up"

    @entrypoint()
    async def workflow(text: str) -> str:
        return await flaky(text)

    handler = Attempts("flaky")
    assert asyncio.run(workflow.ainvoke("q", {"callbacks": [handler]})) == "up"
    assert list(handler.runs.values()) == ["failed: down", "ended"]
