"""ChatOpenAI / ChatAnthropic built from langchain-openai / langchain-anthropic arguments
(issue 22, item 10): they build the SDK's sync and async clients themselves."""

from __future__ import annotations

import asyncio

import pytest

openai = pytest.importorskip("openai")
anthropic = pytest.importorskip("anthropic")

from pydantic import SecretStr  # noqa: E402

from stategraph.models.anthropic import ChatAnthropic  # noqa: E402
from stategraph.models.openai import ChatOpenAI  # noqa: E402
from stategraph.testing.fake_servers import FakeAnthropicServer, FakeOpenAIServer  # noqa: E402


def test_chat_openai_builds_both_clients_from_the_langchain_arguments() -> None:
    with FakeOpenAIServer(["Hello there", "Hi again"]) as server:
        model = ChatOpenAI(
            model="gpt-test",
            base_url=server.base_url,
            api_key="sk-test",
            organization="org-1",
            temperature=0,
            max_tokens=7,
            timeout=9,
            max_retries=0,
            default_headers={"X-App": "demo"},
        )
        assert isinstance(model.client, openai.OpenAI)
        assert isinstance(model.async_client, openai.AsyncOpenAI)
        for client in (model.client, model.async_client):
            assert client.api_key == "sk-test"
            assert str(client.base_url).rstrip("/") == server.base_url.rstrip("/")
            assert client.organization == "org-1"
            assert client.max_retries == 0
            assert client.timeout == 9
            assert client.default_headers["X-App"] == "demo"
        assert model.invoke("hi").content == "Hello there"
        assert asyncio.run(model.ainvoke("hi")).content == "Hi again"
        first, second = server.requests
        assert first["model"] == second["model"] == "gpt-test"
        assert first["temperature"] == 0 and first["max_tokens"] == 7


def test_chat_openai_accepts_langchain_openai_aliases() -> None:
    with FakeOpenAIServer(["aliased"]) as server:
        model = ChatOpenAI(
            model_name="gpt-alias",
            openai_api_key=SecretStr("sk-secret"),
            openai_api_base=server.base_url,
            request_timeout=4,
            max_retries=0,
            max_completion_tokens=5,
            model_kwargs={"top_p": 0.5},
        )
        assert model.client.api_key == "sk-secret"
        assert model.client.timeout == 4
        assert model.invoke("hi").content == "aliased"
        body = server.requests[0]
        assert body["model"] == "gpt-alias"
        assert body["max_tokens"] == 5 and body["top_p"] == 0.5


def test_chat_openai_still_takes_a_ready_client() -> None:
    client = openai.OpenAI(api_key="k", base_url="http://127.0.0.1:9/v1")
    model = ChatOpenAI(client, model="gpt-test")
    assert model.client is client and model.async_client is None


def test_chat_openai_refuses_unclear_constructions() -> None:
    with pytest.raises(ValueError, match=r"ChatOpenAI needs the model name"):
        ChatOpenAI(api_key="k")
    client = openai.OpenAI(api_key="k", base_url="http://127.0.0.1:9/v1")
    with pytest.raises(TypeError, match=r"ready client and the client settings \['base_url'\]"):
        ChatOpenAI(client, model="m", base_url="http://elsewhere/v1")
    with pytest.raises(TypeError, match=r"both api_key= and openai_api_key="):
        ChatOpenAI(model="m", api_key="a", openai_api_key="b")
    with pytest.raises(TypeError, match=r"both model= and model_name="):
        ChatOpenAI(model="m", model_name="n", api_key="k")


def test_chat_anthropic_builds_both_clients_from_the_langchain_arguments() -> None:
    with FakeAnthropicServer(["Bonjour", "Encore"]) as server:
        model = ChatAnthropic(
            model="claude-test",
            anthropic_api_key="sk-ant",
            anthropic_api_url=server.base_url,
            max_tokens=33,
            default_request_timeout=8,
            max_retries=0,
            default_headers={"X-App": "demo"},
        )
        assert isinstance(model.client, anthropic.Anthropic)
        assert isinstance(model.async_client, anthropic.AsyncAnthropic)
        for client in (model.client, model.async_client):
            assert client.api_key == "sk-ant"
            assert client.timeout == 8 and client.max_retries == 0
            assert client.default_headers["X-App"] == "demo"
        assert model.invoke("hi").content == "Bonjour"
        assert asyncio.run(model.ainvoke("hi")).content == "Encore"
        body = server.requests[0]
        assert body["model"] == "claude-test"
        assert body["max_tokens"] == 33


def test_chat_anthropic_defaults_and_errors() -> None:
    model = ChatAnthropic(model="claude-test", api_key="k", base_url="http://127.0.0.1:9")
    assert model.params["max_tokens"] == 1024
    with pytest.raises(ValueError, match=r"ChatAnthropic needs the model name"):
        ChatAnthropic(api_key="k")
    client = anthropic.Anthropic(api_key="k")
    with pytest.raises(TypeError, match=r"ready client and the client settings \['api_key'\]"):
        ChatAnthropic(client, model="m", api_key="other")
