"""Issue 16's LLM mode: write-time instances (``llm.instance_extraction``) let a category question find
the turn that names an instance; read-time query decomposition (``llm.query_decomposition``) fuses the
hits of sub-queries (interleaved by rank); an LLM failure falls back to the plain question and says
so. Opt-in: with the defaults recall never calls the LLM, and without the LLM nothing is asked at all."""

from __future__ import annotations

import argparse
import json
import logging
import threading
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from llm_fakes import FakeChatServer, ScriptedLLM

from hermes_memory import MemoryAPI
from hermes_memory.bench import locomo
from hermes_memory.cli._common import emit
from hermes_memory.config import load_config
from hermes_memory.errors import ConfigError
from hermes_memory.hermes.prefetch import recall_lines
from hermes_memory.hermes.tools import ToolContext, call_tool
from hermes_memory.llm import wiring
from hermes_memory.llm.client import LLMError
from hermes_memory.llm.extraction import EXTRACTION_SCHEMA, SYSTEM_PROMPT
from hermes_memory.llm.instances import PROMPT_RULE
from hermes_memory.recall.fusion import fuse
from hermes_memory.records import Hit

BASE = {"tier3.embedding_model": "hashing", "tier3.backend": "memory"}
LLM_ON = {"llm.enabled": True, "llm.base_url": "http://127.0.0.1:9/v1", "llm.model": "fake"}
DECOMPOSER = "You prepare searches"  # the decomposition prompt's opening words

# (speaker, session, time, text, LoCoMo dia id)
Turn = tuple[str, str, str, str, str]
JON_GINA: list[Turn] = [
    ("Jon", "s1", "2023-01-20T10:00", "We did a wine tasting last weekend, so fancy.", "D1:1"),
    ("Gina", "s1", "2023-01-20T10:01", "Nice! I spent the weekend fixing my bike outside.", "D1:2"),
    ("Jon", "s1", "2023-01-20T10:02", "I want to open a dance studio this year, it is my dream.", "D1:3"),
    ("Gina", "s2", "2023-02-03T10:00", "My store sells clothes and accessories now.", "D2:1"),
    ("Jon", "s2", "2023-02-03T10:01", "The indoor plants in my flat are doing well, I water them.", "D2:2"),
    ("Gina", "s2", "2023-02-03T10:02", "Activities at the gym keep me busy, I go there every day.", "D2:3"),
    ("Jon", "s3", "2023-03-01T10:00", "I lost my job at the bank, so I have more time for dancing.", "D3:1"),
]  # fmt: skip
WINE = {
    "instance": "wine tasting", "categories": ["indoor activity", "date activity", "hobby"], "who": "Jon",
    "attributes": ["with his girlfriend"], "when": "last weekend", "message": 1,
}  # fmt: skip
ANA_BEN: list[Turn] = [
    ("Ana", "s1", "2023-01-20T10:00:00", "I adopted a beagle puppy called Rex yesterday.", "D1:1"),
    ("Ben", "s1", "2023-01-20T10:01:00", "Hobbies are overrated, I mostly watch TV.", "D1:2"),
    ("Ana", "s1", "2023-01-20T10:02:00", "I like quiet weekends at home with tea.", "D1:3"),
    ("Ben", "s2", "2023-02-03T10:00:00", "My cousin keeps animals on his farm.", "D2:1"),
    ("Ana", "s2", "2023-02-03T10:01:00", "I started learning the violin last week.", "D2:2"),
    ("Ben", "s2", "2023-02-03T10:02:00", "Does Ana have any hobbies besides reading?", "D2:3"),
    ("Ana", "s3", "2023-03-01T10:00:00", "Documentaries about animals are my favourite thing on TV.", "D3:1"),
    ("Ana", "s3", "2023-03-01T10:00:30", "My hobbies changed a lot since college.", "D3:3"),
    ("Ben", "s3", "2023-03-01T10:01:00", "Animals and hobbies make life better, they say.", "D3:2"),
]  # fmt: skip
LIST_QUESTION = "What hobbies and animals does Ana have?"
SUB_QUERIES = ["Ana adopted beagle puppy", "Ana learning the violin"]


def replies(system: str, user: str) -> dict[str, Any]:
    """The scripted model: sub-queries for the decomposition, the wine tasting for its turn."""
    if system.startswith(DECOMPOSER):
        return {"queries": SUB_QUERIES}
    if "wine tasting" in user:
        return {"facts": [], "instances": [WINE]}
    return {"facts": []}


@pytest.fixture
def open_llm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[..., tuple[MemoryAPI, ScriptedLLM]]]:
    """Opens MemoryAPIs with the LLM on (through the real config path) and a scripted client each."""
    opened: list[MemoryAPI] = []
    clients: dict[str, ScriptedLLM] = {}
    monkeypatch.setattr(wiring, "llm_client", lambda config, hermes_home=None: clients[str(hermes_home)])

    def make(turns: list[Turn], reply: Any = replies, **overrides: Any) -> tuple[MemoryAPI, ScriptedLLM]:
        home = tmp_path / f"home{len(opened)}"
        clients[str(home)] = client = ScriptedLLM(default=reply)
        api = MemoryAPI(hermes_home=home, **{**BASE, **LLM_ON, **overrides})
        opened.append(api)
        for who, session, when, text, dia in turns:
            assert api.remember_message(text, session, when, speaker=who, metadata={"dia_id": dia})["success"]
        assert api.flush(60)["data"]["drained"]
        return api, client

    yield make
    for api in opened:
        api.close()


def found_dias(api: MemoryAPI, envelope: dict[str, Any], k: int) -> list[str]:
    """The LoCoMo metric's view: the first k turn ids the hits stand for (facts via their sources)."""
    assert envelope["success"], envelope
    return locomo.dia_ids_of(envelope["data"]["hits"], locomo.dia_by_episode(api), k)


def decompositions(client: ScriptedLLM) -> int:
    return sum(call.system.startswith(DECOMPOSER) for call in client.calls)


# -- write-time instances ----------------------------------------------------------------------------
def test_an_instance_is_stored_as_a_fact_citing_its_turn(open_llm: Callable[..., Any]) -> None:
    def reply(system: str, user: str) -> dict[str, Any]:
        if "wine tasting" not in user:
            return {"facts": []}
        made_up = {**WINE, "instance": "bowling night"}  # not in the turn
        stranger = {**WINE, "who": "Melanie"}  # nobody of that name takes part or is named
        return {"facts": [], "instances": [WINE, made_up, stranger]}

    api, _ = open_llm(JON_GINA, reply)
    rows = [dict(r) for r in api.tier2.db.query("SELECT * FROM facts WHERE predicate = 'mentions'")]
    assert [r["content"] for r in rows] == [
        "Jon: wine tasting — indoor activity, date activity, hobby; with his girlfriend; last weekend"
    ]
    (fact,) = rows
    wine_turn = next(uuid for uuid, dia in locomo.dia_by_episode(api).items() if dia == "D1:1")
    assert fact["source_episodes"] == f'["{wine_turn}"]'
    assert (fact["subject"], fact["object"], fact["extractor"]) == ("Jon", "wine tasting", "llm:fake")
    assert fact["superseded_by"] is None
    superseded = api.tier2.db.query("SELECT count(*) AS n FROM facts WHERE superseded_by IS NOT NULL")
    assert superseded[0]["n"] == 0  # an instance never closes anything
    audits = [e.diff for e in api.tier2.audit.entries(action="llm_extract") if e.diff]
    assert sum(int(d.get("instances") or 0) for d in audits) == 1


def test_a_category_question_finds_the_turn_only_through_its_instance(open_llm: Callable[..., Any]) -> None:
    question = "What indoor activities has Jon done?"
    without, _ = open_llm(JON_GINA, **{"llm.instance_extraction": False})
    assert "D1:1" not in found_dias(without, without.recall(question, limit=3), 3)
    with_instances, _ = open_llm(JON_GINA)
    envelope = with_instances.recall(question, limit=3)
    assert "D1:1" in found_dias(with_instances, envelope, 3)
    fact = next(h for h in envelope["data"]["hits"] if h["kind"] == "fact" and "wine tasting" in h["text"])
    assert fact["source"].startswith("fact")


def test_instances_ride_on_the_extraction_call_and_off_leave_it_as_before(
    open_llm: Callable[..., Any],
) -> None:
    on, on_client = open_llm(JON_GINA[:1])
    off, off_client = open_llm(JON_GINA[:1], **{"llm.instance_extraction": False})
    assert len(on_client.calls) == len(off_client.calls) == 1  # one call per turn, never a second
    assert PROMPT_RULE in on_client.calls[0].system
    assert "instances" in on_client.calls[0].response_model["properties"]
    assert off_client.calls[0].system == SYSTEM_PROMPT
    assert off_client.calls[0].response_model == EXTRACTION_SCHEMA
    assert not off.tier2.db.query("SELECT uuid FROM facts WHERE predicate = 'mentions'")
    assert on.tier2.db.query("SELECT uuid FROM facts WHERE predicate = 'mentions'")


# -- read-time query decomposition -------------------------------------------------------------------
def test_decomposition_fuses_the_sub_queries_hits(open_llm: Callable[..., Any]) -> None:
    plain, plain_client = open_llm(ANA_BEN, **{"llm.instance_extraction": False})
    found = plain.recall(LIST_QUESTION, limit=3)
    assert not {"D1:1", "D2:2"} & set(found_dias(plain, found, 3))
    assert decompositions(plain_client) == 0  # off by default, even with the LLM on
    assert "sub_queries" not in found["meta"] and "warnings" not in found["meta"]

    api, client = open_llm(ANA_BEN, **{"llm.instance_extraction": False, "llm.query_decomposition": True})
    envelope = api.recall(LIST_QUESTION, limit=3)
    assert {"D1:1", "D2:2"} <= set(found_dias(api, envelope, 3))
    assert envelope["meta"]["sub_queries"] == SUB_QUERIES
    assert "warnings" not in envelope["meta"]
    hits = envelope["data"]["hits"]
    assert len(hits) == 3 and all(h["kind"] == "episode" and h["source"].startswith("turn, ") for h in hits)
    scores = [h["score"] for h in hits]
    assert scores == sorted(scores, reverse=True) and all(0.0 <= s <= 1.0 for s in scores)
    assert decompositions(client) == 1
    # The Hermes prefetch's recall never decomposes (it is on the turn's hot path).
    shared = types.SimpleNamespace(api=api, closed=threading.Event())
    assert recall_lines(shared, LIST_QUESTION, None, 3).lines  # type: ignore[arg-type]
    assert decompositions(client) == 1


def test_a_failing_decomposition_recalls_the_plain_question_and_says_so(
    open_llm: Callable[..., Any], caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    def reply(system: str, user: str) -> dict[str, Any]:
        if system.startswith(DECOMPOSER):
            raise LLMError("timed out after 20s", kind="timeout", retryable=False)
        return {"facts": []}

    api, client = open_llm(ANA_BEN, reply, **{"llm.query_decomposition": True})
    plain = [h.id for h in api.core.recall.query(LIST_QUESTION, limit=3).hits]
    with caplog.at_level(logging.WARNING, logger="hermes_memory.llm.decompose"):
        envelope = api.recall(LIST_QUESTION, limit=3)
    assert envelope["success"]
    (warning,) = envelope["meta"]["warnings"]
    assert warning.startswith("query decomposition failed (timeout: timed out")
    assert "recalled the question as asked" in warning
    assert [h["id"] for h in envelope["data"]["hits"]] == plain
    assert "sub_queries" not in envelope["meta"]
    assert "query decomposition failed" in caplog.text
    # A dead endpoint is not asked again at every recall: skipped for a while, and still said.
    again = api.recall(LIST_QUESTION, limit=3)
    assert decompositions(client) == 1
    assert "circuit open" in again["meta"]["warnings"][0]
    # The edges say it too: the Hermes tool's result the model reads, and the CLI's stderr.
    tool = ToolContext(api=api, session_id="s9", writable=True, after_write=lambda: None)
    searched = json.loads(call_tool(tool, "nextlevel_search", {"query": LIST_QUESTION, "limit": 3}))
    assert searched["results"] and "query decomposition failed" in searched["warnings"][0]
    assert emit(argparse.Namespace(json=False), again, lambda data: "hits") == 0
    assert "note: query decomposition failed (skipped" in capsys.readouterr().err


def test_an_invalid_reply_after_the_refinement_falls_back_with_a_warning(
    open_llm: Callable[..., Any],
) -> None:
    def reply(system: str, user: str) -> dict[str, Any]:
        if system.startswith(DECOMPOSER):
            return {"queries": "beagle; violin"}  # not a list, again after the refinement
        return {"facts": []}

    api, client = open_llm(ANA_BEN, reply, **{"llm.query_decomposition": True})
    envelope = api.recall(LIST_QUESTION, limit=3)
    assert envelope["success"]
    assert envelope["meta"]["warnings"][0].startswith("query decomposition failed (schema:")
    assert decompositions(client) == 2  # the call and its one refinement
    assert not {"D1:1", "D2:2"} & set(found_dias(api, envelope, 3))


def test_fusion_interleaves_the_lists_by_rank_and_caps_per_tier() -> None:
    def hit(name: str, score: float, tier: str = "tier2") -> Hit:
        return Hit(id=name, score=score, text=name, tier=tier, kind="episode")

    question = [hit("a", 0.9), hit("b", 0.5), hit("c", 0.4), hit("e", 0.3)]
    first = [hit("d", 1.0, "tier3"), hit("b", 0.8), hit("e", 0.7)]
    second = [hit("f", 0.6), hit("e", 0.5)]
    fused = fuse([question, first, second], limit=5)
    # each list's best first (the question's own first), then rank 2: e (three lists) before b (two)
    assert [h.id for h in fused] == ["a", "d", "f", "e", "b"]
    assert [h.score for h in fused] == [1.0, 1.0, 1.0, 0.5, 0.5]
    assert (fused[1].tier, fused[1].text, fused[1].kind) == ("tier3", "d", "episode")  # its own record
    capped = fuse([question, first, second], limit=10, per_tier=1)
    assert [(h.id, h.tier) for h in capped] == [("a", "tier2"), ("d", "tier3")]
    assert fuse([[], []], limit=3) == []


# -- config ------------------------------------------------------------------------------------------
def test_the_llm_mode_keys_default_to_instances_on_and_decomposition_off(tmp_path: Path) -> None:
    llm = load_config(hermes_home=tmp_path).llm
    assert (llm.enabled, llm.instance_extraction, llm.query_decomposition) == (False, True, False)


def test_without_the_llm_a_decomposition_setting_asks_nothing(tmp_path: Path) -> None:
    server = FakeChatServer().start()
    try:
        off = {"llm.base_url": server.url, "llm.model": "fake", "llm.query_decomposition": True}
        with MemoryAPI(hermes_home=tmp_path, **BASE, **off) as api:
            assert api.remember_message("I adopted a beagle called Rex.", "s1", speaker="Ana")["success"]
            assert api.flush(60)["data"]["drained"]
            envelope = api.recall(LIST_QUESTION, limit=3)
        assert envelope["success"] and envelope["data"]["hits"]
        assert "warnings" not in envelope["meta"] and "sub_queries" not in envelope["meta"]
        assert server.requests == []
    finally:
        server.stop()


@pytest.mark.parametrize(
    ("key", "value", "words"),
    [
        ("llm.instance_extraction", "yes", "must be true or false"),
        ("llm.query_decomposition", 1, "must be true or false"),
        ("llm.instance_extraction", None, "must not be null"),
        ("llm.query_decomposition", "off", "must be true or false"),
    ],
)
def test_bad_llm_mode_settings_are_config_errors(tmp_path: Path, key: str, value: Any, words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        load_config(hermes_home=tmp_path, **{key: value})
