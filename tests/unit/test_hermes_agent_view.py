"""What the agent sees through the provider (issue 12): lines with date and time, the current statement
before (or instead of) the one it replaced, built-in memory edits closing the facts of the old entry,
notes saying which tiers could not answer and why, and an exit that never waits for the worker."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any

import pytest
from hermes_settings import api_of

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.errors import BackendError, ConfigError
from hermes_memory.hermes import registry
from hermes_memory.hermes.prefetch import HEADER
from hermes_memory.hermes.provider import NextLevelProvider
from hermes_memory.hermes.settings import load_settings
from hermes_memory.ingest.background import BackgroundWorker
from hermes_memory.ingest.worker import Ingestor
from hermes_memory.recall.availability import LOADING
from hermes_memory.tier3.semantic import SemanticMemory

LINE = re.compile(r"^- \[\d{4}-\d{2}(?:-\d{2}(?: \d{2}:\d{2})?)?\] .+ \(.+\)$")


def say(provider: NextLevelProvider, home: Path, text: str, session: str) -> None:
    provider.sync_turn(text, "Noted.", session_id=session)
    assert api_of(home).flush(timeout=30)["data"]["drained"]


def memory_lines(block: str) -> list[str]:
    return [line for line in block.splitlines() if line.startswith("- [")]


# -- current over stale ----------------------------------------------------------------------------
def test_where_do_i_live_now_shows_the_move_not_the_old_home(home: Path, make: Any) -> None:
    provider = make("chat")
    say(provider, home, "I live in Hamburg.", "monday")
    say(provider, home, "I moved to Lisbon.", "friday")
    provider.on_session_switch("later", reset=True)
    block = provider.prefetch("Where do I live now?")
    lines = memory_lines(block)
    assert block.startswith(HEADER) and "UTC" in HEADER and "superseded" in HEADER
    assert "newest knowledge wins" not in block
    assert lines and all(LINE.match(line) for line in lines), lines  # date and time on every line
    # (An acknowledgement like "Noted." may be shown too; whether is the business of speaker handling.)
    assert "Lisbon" in next(line for line in lines if "live" in line or "moved" in line), lines
    assert not any("Hamburg" in line for line in lines), lines  # the replaced statement is left out

    provider.on_session_switch("history", reset=True)
    lines = memory_lines(provider.prefetch("Tell me about Hamburg"))
    old = next(i for i, line in enumerate(lines) if "I live in Hamburg." in line)
    assert re.search(
        r"\(turn, monday; superseded \d{4}-\d{2}-\d{2} \d{2}:\d{2} by: .*lives in Lisbon\)$", lines[old]
    )
    assert old == 0, lines  # not about the present: the replaced statement keeps its place, marked

    found = json.loads(provider.handle_tool_call("nextlevel_search", {"query": "Hamburg"}))
    marked = next(r for r in found["results"] if r["text"] == "I live in Hamburg.")
    assert marked["superseded"].startswith("superseded ") and "lives in Lisbon" in marked["superseded"]


def test_a_memory_replace_closes_the_facts_of_the_old_entry(home: Path, make: Any) -> None:
    provider = make("chat")
    say(provider, home, "I live in Hamburg.", "first")
    provider.on_memory_write("add", "user", "User lives in Hamburg", {"tool_call_id": "call_1"})
    provider.on_memory_write(
        "replace",
        "user",
        "The user lives in Porto",
        {"old_text": "lives in Hamburg", "tool_call_id": "call_2"},
    )
    api = api_of(home)
    facts = api.tier2.facts
    believed = [s.fact.content for s in facts.query(None, limit=50, touch=False)]
    assert "The user lives in Porto" in believed
    assert not any("Hamburg" in content for content in believed), believed
    porto = next(
        s.fact
        for s in facts.query("Porto", limit=5, touch=False)
        if s.fact.content == "The user lives in Porto"
    )
    closed = facts.superseded_by(porto.uuid)
    assert {"User lives in Hamburg", "The user lives in Hamburg"} <= {f.content for f in closed}
    assert all(f.valid_to is not None for f in closed)  # closed, never deleted

    provider.on_session_switch("later", reset=True)
    lines = memory_lines(provider.prefetch("Where do I live?"))
    assert "Porto" in next(line for line in lines if "live" in line), lines
    assert not any("Hamburg" in line and "superseded" not in line for line in lines), lines

    provider.on_memory_write("remove", "user", "", {"old_text": "lives in Porto"})
    assert not any("Porto" in s.fact.content for s in facts.query(None, limit=50, touch=False))


def test_first_person_rewrite_of_a_curated_entry() -> None:
    from hermes_memory.core.mirror import first_person

    assert first_person("User lives in Hamburg") == "I live in Hamburg"
    assert first_person("The user is allergic to peanuts.") == "I am allergic to peanuts."
    assert first_person("User's dog is named Biscuit") == "My dog is named Biscuit"
    assert first_person("Prefers tea. The user works at Acme") == "Prefers tea. I work at Acme"
    assert first_person("Project Atlas deploys on Fridays.") == "Project Atlas deploys on Fridays."


# -- say when degraded ------------------------------------------------------------------------------
def test_prefetch_before_the_embedder_is_loaded_says_meaning_search_is_still_loading(
    home: Path, make: Any
) -> None:
    provider = make("chat")
    say(provider, home, "My sister Lena lives in Porto.", "old")
    shared = registry.find(str(home), "default")
    assert shared is not None
    shared.embedder_warm.clear()  # as if the warm-up were still loading the model
    block = provider.prefetch("Where does Lena live?").splitlines()
    assert any("Porto" in line for line in block)
    assert block[-2] == "Tiers answered: notes, facts and past turns (keywords)."
    assert (
        block[-1]
        == f"Could not answer: meaning search (vectors) — {LOADING}; only keyword matches are shown."
    )
    assert "meaning search still loading" in block[-1]


@pytest.mark.parametrize(
    ("error", "words"),
    [
        (ConfigError("tier3.embedding_model_name is required for the sentence-transformers embedder"),
         "it cannot work with the current settings: tier3.embedding_model_name is required"),
        (BackendError("vector server unreachable"),
         "the vector store answered with an error: vector server unreachable"),
    ],
)  # fmt: skip
def test_a_failing_vector_tier_is_named_with_its_reason_and_keywords_still_answer(
    home: Path, make: Any, monkeypatch: pytest.MonkeyPatch, error: Exception, words: str
) -> None:
    provider = make("chat")
    say(provider, home, "My sister Lena lives in Porto.", "old")

    def broken(self: SemanticMemory, query: str, limits: Any, *rest: Any) -> Any:
        raise error

    monkeypatch.setattr(SemanticMemory, "source_scores", broken)
    found = json.loads(provider.handle_tool_call("nextlevel_search", {"query": "Where does Lena live?"}))
    assert any("Porto" in r["text"] for r in found["results"])
    assert "meaning search (vectors)" not in found["tiers_answered"]
    assert "facts and past turns (keywords)" in found["tiers_answered"]
    assert found["tiers_unavailable"]["meaning search (vectors)"].startswith(words)
    assert found["note"].startswith("Could not answer: meaning search (vectors) — " + words)

    shared = registry.find(str(home), "default")
    assert shared is not None
    shared.embedder_warm.clear()
    provider.queue_prefetch("Lena Porto sister")  # a full recall: finds the vectors broken
    assert provider._prefetcher is not None and provider._prefetcher._fallback is not None
    assert provider._prefetcher._fallback.wait(30) is not None
    assert shared.tier3_failed.is_set()  # from now on the hot path keeps to the tiers that work
    provider.on_session_switch("next", reset=True)
    block = provider.prefetch("Lena Porto sister")
    note = block.splitlines()[-1]
    assert note.startswith("Could not answer: meaning search (vectors) — "), block
    assert words in note


def test_every_tool_result_says_which_tiers_answered(home: Path, make: Any) -> None:
    provider = make("chat")
    stored = json.loads(provider.handle_tool_call("nextlevel_remember", {"content": "Kim plays the oboe."}))
    assert (
        stored["tiers_answered"] == ["facts and past turns (keywords)"] and stored["tiers_unavailable"] == {}
    )
    assert "note" not in stored
    found = json.loads(provider.handle_tool_call("nextlevel_search", {"query": "oboe"}))
    assert "meaning search (vectors)" in found["tiers_answered"] and found["tiers_unavailable"] == {}
    read = json.loads(
        provider.handle_tool_call("nextlevel_memory", {"action": "fact_query", "query": "oboe"})
    )
    assert read["tiers_answered"] == ["facts and past turns (keywords)"]


# -- exit at once -------------------------------------------------------------------------------------
def test_exit_does_not_wait_for_a_worker_in_the_middle_of_a_turn(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entered, release = threading.Event(), threading.Event()
    original = Ingestor._stage

    def stuck(self: Ingestor, item: Any) -> Any:
        entered.set()
        release.wait(60)  # inside nothing yet: the turn's transaction starts after this
        return original(self, item)

    monkeypatch.setattr(Ingestor, "_stage", stuck)
    provider = NextLevelProvider()
    provider.initialize("s1", hermes_home=str(home), platform="cli", agent_identity="default")
    messages = [
        {"role": "user", "content": "The spare key is under the blue flowerpot."},
        {"role": "assistant", "content": "Got it."},
        {"role": "user", "content": "And the wifi password is on the fridge."},
        {"role": "assistant", "content": "Noted."},
    ]
    provider.sync_turn(messages[0]["content"], messages[1]["content"], session_id="s1", messages=messages[:2])
    assert entered.wait(30)  # the worker holds the first turn
    provider.on_session_end(messages)  # queues the second turn, returns
    provider.shutdown()  # returns although the worker is still busy
    assert not release.is_set() and registry.open_stores() == {}
    release.set()
    monkeypatch.setattr(Ingestor, "_stage", original)
    with MemoryAPI(load_settings(home).memory_config(str(home), "default")) as api:
        api.ingest_pending(timeout=30)
        texts = [e["text"] for e in api.get_latest(count=20)["data"]]
        assert sorted(texts) == sorted(m["content"] for m in messages)  # each turn once, nothing lost
        assert api.pending()["data"]["turns"] == 0


def test_the_next_process_sees_the_previous_turns_at_its_first_prefetch(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No background worker at all: only what initialize does can write the earlier turn in time.
    monkeypatch.setattr(BackgroundWorker, "start", lambda self: None)
    first = NextLevelProvider()
    first.initialize("one", hermes_home=str(home), platform="cli", agent_identity="default")
    first.sync_turn("Our wedding anniversary is on the 14th of June.", "Lovely.", session_id="one")
    first.shutdown()
    with MemoryAPI(load_settings(home).memory_config(str(home), "default")) as api:
        assert api.pending()["data"] == {"turns": 1, "embeddings": 0}

    second = NextLevelProvider()
    second.initialize("two", hermes_home=str(home), platform="cli", agent_identity="default")
    try:
        block = second.prefetch("When is our wedding anniversary?")
        assert any("14th of June" in line for line in memory_lines(block)), block
        pending = api_of(home).pending()["data"]
        assert pending["turns"] == 0 and pending["embeddings"] > 0  # vectors: the worker's job, later
    finally:
        second.shutdown()


def test_reasons_are_plain_words_never_a_class_name_only() -> None:
    from hermes_memory.errors import DependencyMissingError, StorageError, VectorStoreBusyError
    from hermes_memory.recall import availability

    busy = VectorStoreBusyError(
        "qdrant collection 'memory_chunks' is already open, in another process (pid 4242)"
    )
    assert availability.reason_for(busy).startswith("another process (pid 4242) owns the vector store")
    assert availability.busy_words("open elsewhere").startswith("another process owns the vector store")
    assert availability.reason_for(DependencyMissingError("pip install 'hermes-memory-tiers[local]'")) == (
        "a package it needs is missing: pip install 'hermes-memory-tiers[local]'"
    )
    assert availability.reason_for(StorageError("disk I/O error")) == "it failed: disk I/O error"
    assert availability.unavailable_note({}) == ""
    assert availability.unavailable_note({"graph": "it failed: x", "tier3": "why"}) == (
        "Could not answer: meaning search (vectors) — why; knowledge graph — it failed: x; "
        "only keyword matches are shown."
    )
    assert availability.tool_fields(["tier2", "tier1"], {}) == {
        "tiers_answered": ["notes", "facts and past turns (keywords)"],
        "tiers_unavailable": {},
    }
