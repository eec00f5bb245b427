"""HAEMA's N:M reconstruction: N memories in, M consolidated statements with their sources out; an
empty or incomplete answer is refined once; when the LLM is off or fails the memories come back
unchanged."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from llm_fakes import ScriptedLLM

from hermes_memory import MemoryAPI
from hermes_memory.llm import wiring
from hermes_memory.llm.client import LLMError
from hermes_memory.llm.reconstruction import reconstruct
from hermes_memory.llm.structured import StructuredLLM

# The LLM on, with a scripted client patched in where the configured one would be built.
LLM_ON: dict[str, Any] = {
    "tier3.embedding_model": "hashing",
    "tier3.backend": "memory",
    "llm.enabled": True,
    "llm.base_url": "http://127.0.0.1:9/v1",
    "llm.model": "fake",
}

MEMORIES = [
    "(2021-03-01) Caroline lives in Boston",
    "(2022-07-15) Caroline moved to Denver",
    "(2022-07-15)   Caroline moved to Denver  ",  # a duplicate, differently spaced
    "(2023-01-02) Caroline adopted a dog named Rex",
]
GOOD = {
    "memories": [
        {"text": "Caroline lived in Boston until July 2022, then moved to Denver", "sources": [1, 2]},
        {"text": "Caroline adopted a dog named Rex in January 2023", "sources": [3]},
    ],
    "coverage": "complete",
}


def run(client: ScriptedLLM, memories: list[str] = MEMORIES, query: str = "Where does Caroline live?") -> Any:
    return reconstruct(StructuredLLM(client, max_retries=2), query, memories)


def test_n_memories_become_m_statements_with_sources() -> None:
    client = ScriptedLLM(GOOD)
    result = run(client)
    assert not result.fallback and result.coverage == "complete"
    assert result.memories == (
        "Caroline lived in Boston until July 2022, then moved to Denver",
        "Caroline adopted a dog named Rex in January 2023",
    )
    assert [s.sources for s in result.statements] == [(0, 1), (2,)]  # 0-based into the deduplicated input
    prompt = client.calls[0].user
    assert "<query>\nWhere does Caroline live?\n</query>" in prompt
    assert "[2] (2022-07-15) Caroline moved to Denver\n[3] (2023-01-02)" in prompt  # duplicate dropped


def test_an_incomplete_reconstruction_is_refined_once() -> None:
    incomplete = {"memories": [{"text": "Caroline lives in Denver"}], "coverage": "incomplete"}
    client = ScriptedLLM(incomplete, GOOD)
    result = run(client)
    assert not result.fallback and len(result.statements) == 2
    assert '"incomplete"' in client.calls[1].user and "<validation_errors>" in client.calls[1].user


def test_a_source_outside_the_inputs_is_refined() -> None:
    bad = {"memories": [{"text": "x", "sources": [9]}], "coverage": "complete"}
    client = ScriptedLLM(bad, GOOD)
    assert not run(client).fallback
    assert "9 is not a memory number (1..3)" in client.calls[1].user


@pytest.mark.parametrize(
    "failure",
    [
        {"memories": [], "coverage": "complete"},  # empty, also after refinement
        {"memories": [{"text": "x"}], "coverage": "incomplete"},
        {"memories": "Caroline lives in Denver"},  # wrong schema
        LLMError("timed out", kind="timeout", retryable=True),
        LLMError("not JSON", kind="reply", retryable=True),
    ],
)
def test_failure_returns_the_memories_unchanged(failure: Any, caplog: pytest.LogCaptureFixture) -> None:
    client = ScriptedLLM(default=failure)
    with caplog.at_level(logging.WARNING, logger="hermes_memory.llm.reconstruction"):
        result = run(client)
    assert result.fallback and result.reason
    assert result.memories == (
        "(2021-03-01) Caroline lives in Boston",
        "(2022-07-15) Caroline moved to Denver",
        "(2023-01-02) Caroline adopted a dog named Rex",
    )
    assert [s.sources for s in result.statements] == [(0,), (1,), (2,)]
    assert any("returning the memories unchanged" in r.getMessage() for r in caplog.records)


def test_without_an_llm_nothing_is_called_and_nothing_changes() -> None:
    result = reconstruct(None, "q", ["a memory"])
    assert result.fallback and result.reason == "llm disabled" and result.memories == ("a memory",)


def test_no_memories_means_no_call() -> None:
    client = ScriptedLLM(GOOD)
    result = run(client, memories=["  ", ""])
    assert result.statements == () and not result.fallback
    assert client.calls == []


# -- through MemoryAPI ----------------------------------------------------------------------------


@pytest.fixture
def api_and_client(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[MemoryAPI, ScriptedLLM]]:
    client = ScriptedLLM(default={"facts": []})
    monkeypatch.setattr(wiring, "llm_client", lambda config, hermes_home=None: client)
    api = MemoryAPI(hermes_home=tmp_path, **LLM_ON)
    yield api, client
    api.close()


def test_api_reconstructs_what_recall_returns(api_and_client: tuple[MemoryAPI, ScriptedLLM]) -> None:
    api, client = api_and_client
    for when, text in [
        ("2021-03-01T10:00:00", "I live in Boston."),
        ("2022-07-15T09:00:00", "I moved to Denver!"),
    ]:
        assert api.remember_message(text, "life", when, speaker="Caroline")["success"]
    assert api.flush(60)["data"]["drained"]
    client.calls.clear()
    client.replies.append(
        {"memories": [{"text": "Caroline moved from Boston to Denver in July 2022", "sources": [1]}],
         "coverage": "complete"}
    )  # fmt: skip
    env = api.reconstruct("Where does Caroline live?", limit=5)
    assert env["success"], env
    data = env["data"]
    assert data["memories"][0]["text"] == "Caroline moved from Boston to Denver in July 2022"
    assert not data["fallback"] and data["sources"]
    assert {"id", "text", "tier", "timestamp"} <= set(data["sources"][0])
    (call,) = client.calls
    assert "Denver" in call.user and "(2022-07-15)" in call.user  # recalled hits carry their dates


def test_api_reconstructs_given_memories_and_validates_them(
    api_and_client: tuple[MemoryAPI, ScriptedLLM],
) -> None:
    api, client = api_and_client
    client.replies.append(GOOD)
    env = api.reconstruct("Where does Caroline live?", MEMORIES)
    assert env["success"] and len(env["data"]["memories"]) == 2 and env["data"]["sources"] == []
    bad = api.reconstruct("q", [1, 2])  # type: ignore[list-item]
    assert not bad["success"] and bad["meta"]["error_type"] == "invalid_input"
