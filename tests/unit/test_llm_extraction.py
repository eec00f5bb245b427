"""LLM extraction on top of the rule-based one, through MemoryAPI ingestion: extra facts, entities and
relations when the LLM answers well; retries and refinement when it does not; and on timeout or
persistent garbage the turn is still fully ingested with the rule-based knowledge (warning logged,
audited, nothing lost). Off by default: no LLM request at all."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from llm_fakes import FakeChatServer, Scripted, ScriptedLLM

from hermes_memory import MemoryAPI
from hermes_memory.llm import wiring
from hermes_memory.llm.client import LLMError
from hermes_memory.llm.extraction import (
    DEFAULT_CONFIDENCE,
    CircuitBreaker,
    Drafts,
    EntityDraft,
    FactDraft,
    RelationDraft,
)

USER = "I live in Boston. My dog Rex loves the snow and I go skiing in the Alps every winter."
ASSISTANT = "That sounds lovely! Say hi to Rex."
RULE_FACTS = {
    "Caroline lives in Boston",
    "Caroline has a dog named Rex",
    "Caroline goes skiing in the Alps every winter",
}
REPLY: dict[str, Any] = {
    "facts": [
        {
            "content": "Caroline enjoys winter sports",
            "subject": "Caroline",
            "predicate": "enjoys",
            "object": "winter sports",
            "category": "preference",
            "confidence": 0.8,
            "message": 1,
        },
        # the rules already have these two: an exact restatement and a near-duplicate
        {"content": "Caroline lives in Boston.", "subject": "Caroline", "predicate": "lives in",
         "object": "Boston", "category": "user"},
        {"content": "Caroline goes skiing in the Alps every single winter", "subject": "Caroline",
         "predicate": "goes_skiing", "object": "Alps", "category": "event"},
        # not grounded in the turn: nobody called Melanie takes part or is mentioned
        {"content": "Melanie is a ski instructor", "subject": "Melanie", "predicate": "is_a",
         "object": "ski instructor", "category": "user"},
    ],
    "entities": [{"name": "Mel", "type": "person"}, {"name": "Zurich", "type": "place"}],
    "relations": [{"subject": "Mel", "predicate": "friend of", "object": "Caroline", "confidence": 0.7}],
}  # fmt: skip

LLM_OVERRIDES = {"llm.enabled": True, "llm.base_url": "http://127.0.0.1:9/v1", "llm.model": "fake"}
BASE = {"tier3.embedding_model": "hashing", "tier3.backend": "memory"}


def open_api(tmp_path: Path, **overrides: Any) -> MemoryAPI:
    return MemoryAPI(hermes_home=tmp_path, **{**BASE, **overrides})


@pytest.fixture
def scripted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[MemoryAPI, ScriptedLLM]]:
    """A MemoryAPI with the LLM on, wired (through the real config path) to a scripted client."""
    client = ScriptedLLM(default={"facts": []})
    monkeypatch.setattr(wiring, "llm_client", lambda config, hermes_home=None: client)
    api = open_api(tmp_path, **LLM_OVERRIDES)
    # The LLM must never run inside the turn's write transaction (it would block remember_turn).
    client.on_call = lambda: in_tx.append(api.tier2.db.in_transaction)
    in_tx: list[bool] = []
    yield api, client
    assert not any(in_tx)
    api.close()


def ingest(api: MemoryAPI, user: str = USER, assistant: str = ASSISTANT) -> None:
    sent = api.remember_turn(
        user, assistant, "s1", "2023-05-08T10:00:00", user_name="Caroline", assistant_name="Mel"
    )
    assert sent["success"]
    assert api.flush(60)["data"]["drained"]


def facts(api: MemoryAPI) -> list[dict[str, Any]]:
    return [dict(r) for r in api.tier2.db.query("SELECT * FROM facts ORDER BY id")]


def by_extractor(api: MemoryAPI, extractor: str) -> set[str]:
    return {f["content"] for f in facts(api) if f["extractor"] == extractor}


def llm_audit(api: MemoryAPI) -> list[dict[str, Any]]:
    return [e.to_dict() for e in api.tier2.audit.entries(action="llm_extract")]


def test_the_llm_adds_grounded_new_knowledge_next_to_the_rule_based(
    scripted: tuple[MemoryAPI, ScriptedLLM],
) -> None:
    api, client = scripted
    client.replies.append(REPLY)
    ingest(api)
    assert by_extractor(api, "rules-v1") >= RULE_FACTS
    assert by_extractor(api, "llm:fake") == {"Caroline enjoys winter sports"}
    extra = next(f for f in facts(api) if f["extractor"] == "llm:fake")
    user_episode = api.get_latest(2)["data"][0]
    assert extra["source_episodes"] == f'["{user_episode["uuid"]}"]'  # message 1 = the user's message
    assert (extra["category"], extra["predicate"], extra["confidence"]) == ("preference", "enjoys", 0.8)
    # restatements were merged, not duplicated
    boston = [f for f in facts(api) if f["content"].rstrip(".") == "Caroline lives in Boston"]
    assert len(boston) == 1
    names = {e["name"] for e in api.entity_query()["data"]}
    # Zurich is not in the turn; Mel is the assistant (assistant_name), never a person of the user's world
    assert "Mel" not in names and "Zurich" not in names
    friend = [r for r in api.tier2.relations.all() if r.relation_type == "friend_of"]
    assert friend == []
    (entry,) = llm_audit(api)
    assert entry["success"] and entry["diff"]["facts"] == 1 and entry["diff"]["skipped"] >= 3
    # the prompt showed the model what the rules had found, and the numbered messages
    prompt = client.calls[0].user
    assert "- Caroline lives in Boston" in prompt and f"[1] Caroline (user): {USER}" in prompt


def test_llm_facts_never_supersede_a_fact(scripted: tuple[MemoryAPI, ScriptedLLM]) -> None:
    api, client = scripted
    client.replies.append(
        {"facts": [{"content": "Caroline lives in Denver", "subject": "Caroline", "predicate": "lives_in",
                    "object": "Denver", "category": "user"}]}
    )  # fmt: skip
    ingest(api)
    rows = {f["content"]: f for f in facts(api)}
    assert rows["Caroline lives in Denver"]["extractor"] == "llm:fake"
    assert rows["Caroline lives in Boston"]["superseded_at"] is None  # the LLM guess closed nothing


def test_invalid_json_is_retried(scripted: tuple[MemoryAPI, ScriptedLLM]) -> None:
    api, client = scripted
    client.replies += [LLMError("the reply is not valid JSON", kind="reply", retryable=True), REPLY]
    ingest(api)
    assert len(client.calls) == 2
    assert by_extractor(api, "llm:fake") == {"Caroline enjoys winter sports"}


def test_a_wrong_schema_is_refined_once(scripted: tuple[MemoryAPI, ScriptedLLM]) -> None:
    api, client = scripted
    wrong = {"facts": [{"content": "Caroline enjoys winter sports", "subject": "Caroline",
                        "predicate": "enjoys", "category": "hobbies", "message": 7}]}  # fmt: skip
    client.replies += [wrong, REPLY]
    ingest(api)
    assert len(client.calls) == 2
    refinement = client.calls[1].user
    assert "'hobbies' is not one of" in refinement
    assert by_extractor(api, "llm:fake") == {"Caroline enjoys winter sports"}


def test_a_bad_message_number_is_refined_too(scripted: tuple[MemoryAPI, ScriptedLLM]) -> None:
    api, client = scripted
    wrong = {"facts": [{**REPLY["facts"][0], "message": 7}]}
    client.replies += [wrong, REPLY]
    ingest(api)
    assert "7 is not a message number (1..2)" in client.calls[1].user


@pytest.mark.parametrize(
    ("failure", "calls", "kind"),
    [
        (LLMError("timed out after 20s", kind="timeout", retryable=True), 4, "timeout"),
        ({"garbage": True}, 2, "schema"),  # persistent wrong schema: one refinement, then give up
        (LLMError("not JSON", kind="reply", retryable=True), 4, "reply"),
    ],
)
def test_a_failing_llm_leaves_the_rule_based_turn_intact(
    scripted: tuple[MemoryAPI, ScriptedLLM],
    caplog: pytest.LogCaptureFixture,
    failure: Any,
    calls: int,
    kind: str,
) -> None:
    api, client = scripted
    client.default = failure
    with caplog.at_level(logging.WARNING, logger="hermes_memory.llm.extraction"):
        ingest(api)
    assert len(client.calls) == calls  # max_retries (3) retries, or one refinement
    assert api.tier2.ingest_queue.count() == 0
    assert len(api.get_latest(10)["data"]) == 2  # both messages stored
    assert by_extractor(api, "rules-v1") >= RULE_FACTS
    assert by_extractor(api, "llm:fake") == set()
    (record,) = [r for r in caplog.records if "LLM extraction failed" in r.getMessage()]
    assert record.levelno == logging.WARNING and kind in record.getMessage()
    (entry,) = llm_audit(api)
    assert not entry["success"] and entry["diff"]["fallback"].startswith(kind)


def test_after_a_timeout_the_llm_is_skipped_for_a_while(scripted: tuple[MemoryAPI, ScriptedLLM]) -> None:
    api, client = scripted
    client.default = LLMError("timed out", kind="timeout", retryable=True)
    ingest(api)
    calls = len(client.calls)
    ingest(api, "I work at Acme.", "Nice!")
    assert len(client.calls) == calls  # circuit open: no new call, no new wait
    assert "Caroline works at Acme" in by_extractor(api, "rules-v1")
    assert sorted(e["diff"]["fallback"] for e in llm_audit(api)) == ["circuit open", "timeout: timed out"]


def test_the_circuit_breaker_closes_after_its_cooldown() -> None:
    now = [100.0]
    breaker = CircuitBreaker(60.0, clock=lambda: now[0])
    assert not breaker.is_open()
    breaker.trip()
    now[0] = 159.0
    assert breaker.is_open()
    now[0] = 160.5
    assert not breaker.is_open()


def test_a_noise_only_turn_is_not_sent_to_the_llm(scripted: tuple[MemoryAPI, ScriptedLLM]) -> None:
    api, client = scripted
    ingest(api, "hi!", "thanks :)")
    assert client.calls == []
    assert len(api.get_latest(10)["data"]) == 2


# -- over HTTP, through the real configuration ---------------------------------------------------


@pytest.fixture
def server() -> Iterator[FakeChatServer]:
    fake = FakeChatServer().start()
    yield fake
    fake.stop()


def test_off_by_default_no_request_is_ever_made(tmp_path: Path, server: FakeChatServer) -> None:
    # The endpoint is configured but llm.enabled stays false (the default).
    api = open_api(tmp_path, **{"llm.base_url": server.url, "llm.model": "fake-model"})
    try:
        assert api.config.llm.enabled is False
        ingest(api)
        assert api.reconstruct("where does Caroline live?")["data"]["fallback"] is True
        assert api.core_memory_update(["Caroline lives in Boston"])["data"]["reason"] == "llm disabled"
    finally:
        api.close()
    assert server.requests == []
    assert by_extractor_closed(tmp_path, "llm:fake-model") == set()


def by_extractor_closed(tmp_path: Path, extractor: str) -> set[str]:
    api = open_api(tmp_path)
    try:
        return by_extractor(api, extractor)
    finally:
        api.close()


def test_llm_extraction_over_http(tmp_path: Path, server: FakeChatServer) -> None:
    server.script.append(Scripted(REPLY))
    api = open_api(tmp_path, **{"llm.enabled": True, "llm.base_url": server.url, "llm.model": "fake-model"})
    try:
        ingest(api)
        assert by_extractor(api, "llm:fake-model") == {"Caroline enjoys winter sports"}
        assert by_extractor(api, "rules-v1") >= RULE_FACTS
    finally:
        api.close()
    assert len(server.requests) == 1


def test_an_http_timeout_falls_back_to_the_rule_based_result(
    tmp_path: Path, server: FakeChatServer, caplog: pytest.LogCaptureFixture
) -> None:
    server.default = Scripted(REPLY, delay=5.0)
    api = open_api(
        tmp_path,
        **{"llm.enabled": True, "llm.base_url": server.url, "llm.model": "fake-model",
           "llm.timeout_s": 0.2, "llm.max_retries": 1},
    )  # fmt: skip
    try:
        with caplog.at_level(logging.WARNING, logger="hermes_memory.llm.extraction"):
            ingest(api)
        assert by_extractor(api, "rules-v1") >= RULE_FACTS
        assert by_extractor(api, "llm:fake-model") == set()
    finally:
        api.close()
    assert len(server.requests) == 2  # the first try and one retry
    assert any("timed out" in r.getMessage() for r in caplog.records)


def test_the_llm_takes_nothing_about_others_from_the_assistant_and_no_junk_entities(
    scripted: tuple[MemoryAPI, ScriptedLLM],
) -> None:
    api, client = scripted
    client.replies.append(
        {
            "facts": [
                # message 2 is the assistant's: its echo says nothing about Caroline
                {"content": "Caroline lives in Boston", "subject": "Caroline", "predicate": "lives_in",
                 "object": "Boston", "category": "user", "message": 2},
                {"content": "Mel moved to Boston", "subject": "Mel", "predicate": "moved_to",
                 "object": "Boston", "category": "event", "message": 2},
            ],
            "entities": [{"name": "False", "type": "other"}, {"name": "Entry added", "type": "other"}],
            "relations": [],
        }
    )  # fmt: skip
    ingest(api, "I work at Globex.", "Noted: you live in Boston. Entry added, success False.")
    assert by_extractor(api, "llm:fake") == set()  # the AI's words are no evidence, even about itself
    names = {e["name"] for e in api.entity_query()["data"]}
    assert not names & {"False", "Entry added"}
    assert "the AI" in client.calls[0].system or "is an AI" in client.calls[0].system


def test_the_reply_becomes_typed_drafts() -> None:
    drafts = Drafts.from_reply(
        {
            "facts": [
                {"content": " Caroline  enjoys\nskiing ", "subject": "Caroline", "predicate": "enjoys",
                 "object": "skiing", "category": "preference", "confidence": 0.8, "message": 1},
                {"content": "Mel paints", "subject": "Mel", "predicate": "paints", "object": None,
                 "category": "general"},
            ],
            "entities": [{"name": "Mel ", "type": "person", "aliases": ["  ", "Melanie"]}],
        }
    )  # fmt: skip
    assert drafts.facts == (
        FactDraft("Caroline enjoys skiing", "Caroline", "enjoys", "preference", "skiing", 0.8, 1),
        FactDraft("Mel paints", "Mel", "paints", "general", None, DEFAULT_CONFIDENCE, None),
    )
    assert drafts.entities == (EntityDraft("Mel", "person", ("Melanie",)),)
    assert drafts.relations == ()
    (relation,) = Drafts.from_reply(
        {"facts": [], "relations": [{"subject": "Mel", "predicate": "Friend of", "object": "Caroline"}]}
    ).relations
    assert relation == RelationDraft("Mel", "Friend of", "Caroline", 0.6)
