"""The OpenAI-compatible client against a scripted chat-completions server on 127.0.0.1: the request it
sends, JSON replies, and every failure mapped to an LLMError saying whether a retry may help."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from llm_fakes import FakeChatServer, Scripted

from hermes_memory.errors import ConfigError
from hermes_memory.llm.client import LLMError, OpenAICompatibleClient, chat_completions_url
from hermes_memory.llm.structured import StructuredLLM

SCHEMA = {"type": "object", "required": ["answer"], "properties": {"answer": {"type": "string"}}}


@pytest.fixture
def server() -> Iterator[FakeChatServer]:
    fake = FakeChatServer().start()
    yield fake
    fake.stop()


def client_for(server: FakeChatServer, **kwargs: object) -> OpenAICompatibleClient:
    return OpenAICompatibleClient(server.url, "fake-model", **kwargs)  # type: ignore[arg-type]


def test_a_json_reply_comes_back_as_a_dict_and_the_request_asks_for_json(server: FakeChatServer) -> None:
    server.script.append(Scripted({"answer": "42"}))
    assert client_for(server).generate_structured("be brief", "what?", SCHEMA) == {"answer": "42"}
    (request,) = server.requests
    assert request["path"] == "/v1/chat/completions"
    body = request["body"]
    assert body["model"] == "fake-model"
    assert body["response_format"] == {"type": "json_object"}
    system, user = body["messages"]
    assert system["role"] == "system" and system["content"].startswith("be brief")
    assert '"required": ["answer"]' in system["content"]  # the schema travels in the prompt
    assert user == {"role": "user", "content": "what?"}
    assert "Authorization" not in request["headers"]


def test_the_api_key_is_read_from_the_named_environment_variable(
    server: FakeChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_LLM_KEY", "sk-test-123")
    server.script.append(Scripted({"answer": "ok"}))
    client_for(server, api_key_env="FAKE_LLM_KEY").generate_structured("s", "u", SCHEMA)
    assert server.requests[0]["headers"]["Authorization"] == "Bearer sk-test-123"


def test_a_missing_api_key_variable_is_a_non_retryable_error(
    server: FakeChatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FAKE_LLM_KEY", raising=False)
    with pytest.raises(LLMError) as info:
        client_for(server, api_key_env="FAKE_LLM_KEY").generate_structured("s", "u", SCHEMA)
    assert info.value.kind == "config" and not info.value.retryable
    assert "FAKE_LLM_KEY" in str(info.value)
    assert server.requests == []


def test_a_fenced_reply_is_accepted(server: FakeChatServer) -> None:
    server.script.append(Scripted('```json\n{"answer": "fenced"}\n```'))
    assert client_for(server).generate_structured("s", "u", SCHEMA) == {"answer": "fenced"}


@pytest.mark.parametrize(
    "answer",
    [
        Scripted("I think the answer is 42."),  # prose instead of JSON
        Scripted(body=b"<html>gateway</html>"),  # not a chat-completions response
        Scripted(body=b'{"choices": []}'),
    ],
)
def test_malformed_replies_are_retryable_reply_errors(server: FakeChatServer, answer: Scripted) -> None:
    server.script.append(answer)
    with pytest.raises(LLMError) as info:
        client_for(server).generate_structured("s", "u", SCHEMA)
    assert info.value.kind == "reply" and info.value.retryable


@pytest.mark.parametrize(
    ("status", "retryable"), [(500, True), (503, True), (429, True), (401, False), (400, False)]
)
def test_http_errors_say_whether_to_retry(server: FakeChatServer, status: int, retryable: bool) -> None:
    server.script.append(Scripted(status=status, body=b'{"error": {"message": "nope"}}'))
    with pytest.raises(LLMError) as info:
        client_for(server).generate_structured("s", "u", SCHEMA)
    assert info.value.kind == "http" and info.value.retryable is retryable
    assert str(status) in str(info.value)


def test_a_slow_server_times_out(server: FakeChatServer) -> None:
    server.script.append(Scripted({"answer": "late"}, delay=5.0))
    with pytest.raises(LLMError) as info:
        client_for(server, timeout_s=0.2).generate_structured("s", "u", SCHEMA)
    assert info.value.kind == "timeout" and info.value.retryable


def test_a_closed_port_is_a_retryable_connection_error() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = OpenAICompatibleClient(f"http://127.0.0.1:{port}", "m", timeout_s=2.0)
    with pytest.raises(LLMError) as info:
        client.generate_structured("s", "u", SCHEMA)
    assert info.value.kind == "connection" and info.value.retryable


def test_retry_after_invalid_json_then_refinement_over_http(server: FakeChatServer) -> None:
    server.script += [Scripted("not json at all"), Scripted({"wrong": 1}), Scripted({"answer": "fixed"})]
    result = StructuredLLM(client_for(server), max_retries=3).generate("s", "u", SCHEMA)
    assert result == {"answer": "fixed"}
    prompts = server.user_prompts()
    assert prompts[:2] == ["u", "u"]  # the non-JSON reply was retried as is
    assert "missing required key 'answer'" in prompts[2]  # the wrong schema was refined


@pytest.mark.parametrize(
    ("base", "url"),
    [
        ("http://h:1", "http://h:1/v1/chat/completions"),
        ("http://h:1/", "http://h:1/v1/chat/completions"),
        ("http://h:1/v1", "http://h:1/v1/chat/completions"),
        ("https://h/openai/v1/", "https://h/openai/v1/chat/completions"),
        ("http://h:1/v1/chat/completions", "http://h:1/v1/chat/completions"),
    ],
)
def test_the_endpoint_is_derived_from_the_base_url(base: str, url: str) -> None:
    assert chat_completions_url(base) == url


@pytest.mark.parametrize("base", ["ftp://h", "h:1", ""])
def test_a_non_http_base_url_is_a_config_error(base: str) -> None:
    with pytest.raises(ConfigError, match=r"llm\.base_url"):
        OpenAICompatibleClient(base, "m")
