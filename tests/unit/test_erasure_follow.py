"""Every home that uses a store follows every forget (``ops.erasure_follow``): a forget issued from one
home reaches another home's own files (curated entries, the file of what the agent saw, its turn inbox)
through the erasure's hashed words (``ops.erasure_words``), which never keep the name itself.

The two-home tests open a second home on the same store: on SQLite the stores are one file (``B`` is
given its own curated directory and seen file), on PostgreSQL (``tests/contract/postgresql``) two homes
with the same server URL."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.config import TIER2_URL_ENV
from hermes_memory.hermes import seen
from hermes_memory.ops import erasure_follow
from hermes_memory.ops.erasure import Parts
from hermes_memory.ops.erasure_follow import Cursor
from hermes_memory.ops.erasure_words import ErasureWords, words
from hermes_memory.tier1.curated_store import CuratedStore

NAME = "Ingrid Vasquez-Holm"


def _ok(envelope: dict[str, Any]) -> Any:
    assert envelope["success"], envelope["error"]
    return envelope["data"]


# -- the hashed words ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Lunch with ingrid  VASQUEZ-holm on Friday", True),  # any case, any spacing
        (f"{NAME}, the new lead.", True),  # punctuation after the name
        (f"({NAME})", True),
        ("Ingrid Vasquez-Holmgren joined", False),  # a longer word is another word
        ("Ingrid and Vasquez-Holm", False),  # the words, not in sequence
        ("Ingrid Vasquez Holm", False),  # the hyphen is part of the name
        ("", False),
    ],
)
def test_hashed_words_match_whole_words_in_sequence(text: str, expected: bool) -> None:
    assert ErasureWords.of([NAME]).matches(text) is expected


def test_hashed_words_keep_no_word_and_a_new_key_per_erasure() -> None:
    one, two = ErasureWords.of([NAME, "Maple Street 12"]), ErasureWords.of([NAME])
    stored = one.to_json()
    assert not any(w in stored.casefold() for w in (*words(NAME), "maple", "street"))
    assert not set(one.sequences) & set(two.sequences)  # the same name, unlinkable across erasures
    again = ErasureWords.from_json(stored)
    assert again == one and again.matches("she lives at maple street 12 now")
    assert ErasureWords.of([], scope="user:7").to_json() and not ErasureWords.of([], scope="user:7").empty()
    assert ErasureWords.of(["  "]).empty() and not ErasureWords.of(["  "]).matches("  ")
    with pytest.raises(ValueError, match="hashed words"):
        ErasureWords.from_json(json.dumps({"sequences": []}))


# -- a second home follows ----------------------------------------------------------------------------
def _home_b(api: MemoryAPI, root: Path) -> Parts:
    curated = CuratedStore(root / "memories", memory_char_limit=5000, user_char_limit=5000)
    return Parts(
        tier2=api.tier2, curated=curated, semantic=None, graph=None, graph_path=root / "graph",
        seen_path=root / "seen.jsonl",
    )  # fmt: skip


def _seen_lines(path: Path, texts: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"served": "q", "text": t, "scope": "default", "kind": "prefetch"}) for t in texts]
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")


def test_another_home_drops_its_own_entries_and_records_naming_the_forgotten(
    open_api: Callable[..., MemoryAPI], tmp_path: Path
) -> None:
    api = open_api()
    _ok(api.fact_store(f"{NAME} runs the Oslo office"))
    b = _home_b(api, tmp_path / "b")
    assert b.curated is not None and b.seen_path is not None
    b.curated.add("memory", f"{NAME.upper()} prefers calls after 10")
    b.curated.add("memory", "The Oslo office moved in May")
    b.curated.add("user", f"Reports to {NAME}.")
    _seen_lines(b.seen_path, [f"- {NAME} runs the Oslo office", "- The Oslo office moved in May"])

    _ok(api.forget_entity(NAME, confirm=True))
    row = api.tier2.db.query_one("SELECT id, started_at, words FROM erasures ORDER BY id DESC LIMIT 1")
    assert "ingrid" not in row["words"].casefold()
    cursor = erasure_follow.follow(b, Cursor())
    assert cursor == Cursor(row["id"], row["started_at"])
    assert b.curated.entries("memory") == ["The Oslo office moved in May"]
    assert b.curated.entries("user") == []
    assert "Ingrid" not in b.seen_path.read_text(encoding="utf-8")
    assert "moved in May" in b.seen_path.read_text(encoding="utf-8")

    b.curated.add("memory", f"{NAME} is back")  # after the cursor: not this erasure's business any more
    assert erasure_follow.follow(b, cursor) == cursor
    assert len(b.curated.entries("memory")) == 2


def test_a_cursor_of_another_store_follows_every_erasure_again(
    open_api: Callable[..., MemoryAPI], tmp_path: Path
) -> None:
    api = open_api()
    _ok(api.fact_store(f"{NAME} runs the Oslo office"))
    _ok(api.forget_entity(NAME, confirm=True))
    b = _home_b(api, tmp_path / "b")
    assert b.curated is not None
    b.curated.add("memory", f"{NAME} prefers calls after 10")
    row = api.tier2.db.query_one("SELECT id, started_at FROM erasures ORDER BY id DESC LIMIT 1")
    stale = Cursor(row["id"], row["started_at"] + 1.0)  # the same id in a store replaced since
    assert erasure_follow.follow(b, stale) == Cursor(row["id"], row["started_at"])
    assert b.curated.entries("memory") == []
    path = tmp_path / "cursor"
    erasure_follow.write_cursor(path, stale)
    assert erasure_follow.read_cursor(path) == stale
    path.write_text("{not json", encoding="utf-8")
    assert erasure_follow.read_cursor(path) == Cursor()  # unreadable: follow everything again (idempotent)


def test_turns_waiting_in_a_homes_inbox_that_name_the_forgotten_are_dropped(
    open_api: Callable[..., MemoryAPI],
) -> None:
    api = open_api()
    _ok(api.fact_store(f"{NAME} runs the Oslo office"))
    _ok(api.forget_entity(NAME, confirm=True))
    inbox = api.tier2.inbox
    assert inbox is not None
    for key, text in (("t1", f"I met {NAME.lower()} today"), ("t2", "The weather was grey")):
        inbox.add(key, json.dumps({"user": text, "scope": "default"}), 1.0)
    parts = Parts(tier2=api.tier2, curated=None, semantic=None, graph=None, graph_path=api.config.graph_path)
    erasure_follow.follow(parts, Cursor())
    assert [r["turn_uuid"] for r in inbox.oldest(10)] == ["t2"]


def test_a_home_on_a_shared_server_follows_a_forget_issued_from_another(
    open_api: Callable[..., MemoryAPI], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not os.environ.get(TIER2_URL_ENV):
        pytest.skip("homes share a store on a server (run by tests/contract/postgresql)")
    on = {"ui": {"record_context": True, "record_limit": 50}}
    fast = {"tier3.embedding_model": "hashing", "tier3.backend": "memory"}
    a = MemoryAPI(hermes_home=tmp_path / "a", **fast)
    b = MemoryAPI(hermes_home=tmp_path / "b", **fast, **on)
    try:
        _ok(a.fact_store(f"{NAME} runs the Oslo office"))
        _ok(b.curated_add(f"{NAME} prefers calls after 10"))
        assert any(NAME in h["text"] for h in _ok(b.recall(NAME))["hits"])
        seen.record(b.config, session_id="s", scope=b.scope, kind=seen.PREFETCH, served=NAME, text=NAME)
        _ok(a.forget_entity(NAME, confirm=True))
        found = _ok(b.recall(NAME))  # b's open process follows on its next recall
        assert not any(NAME in h["text"] for h in found["hits"]), found["hits"]
        assert NAME not in found["rendered"]
        assert NAME not in (tmp_path / "b" / "memories" / "MEMORY.md").read_text(encoding="utf-8")
        assert NAME not in b.config.seen_path.read_text(encoding="utf-8")
    finally:
        a.close()
        b.close()


def test_an_erasure_recorded_before_its_words_were_kept_is_passed_over(
    open_api: Callable[..., MemoryAPI], tmp_path: Path
) -> None:
    from hermes_memory.tier2 import erasures

    api = open_api()
    with api.tier2.db.atomic() as conn:  # as a release before the words recorded it (applied there)
        old = erasures.record(
            conn, target="entity", scope=None, actor="test", steps=[], vector_ids=[], curated={}
        )
    b = _home_b(api, tmp_path / "b")
    assert b.curated is not None
    b.curated.add("memory", f"{NAME} prefers calls after 10")
    cursor = erasure_follow.follow(b, Cursor())
    assert cursor.id == old and b.curated.entries("memory") == [f"{NAME} prefers calls after 10"]


def test_an_idle_worker_follows_a_forget_issued_from_another_home(tmp_path: Path) -> None:
    """A long-lived process (a gateway) scrubs its home without a recall: a new session it starts then
    loads a MEMORY.md without the name (Hermes reads that file before the provider opens)."""
    if not os.environ.get(TIER2_URL_ENV):
        pytest.skip("homes share a store on a server (run by tests/contract/postgresql)")
    import time

    fast = {"tier3.embedding_model": "hashing", "tier3.backend": "memory"}
    a = MemoryAPI(hermes_home=tmp_path / "a", **fast)
    b = MemoryAPI(hermes_home=tmp_path / "b", background=True, **fast)
    try:
        _ok(a.fact_store(f"{NAME} runs the Oslo office"))
        _ok(b.curated_add(f"{NAME} prefers calls after 10"))
        memory_md = tmp_path / "b" / "memories" / "MEMORY.md"
        assert NAME in memory_md.read_text(encoding="utf-8")
        _ok(a.forget_entity(NAME, confirm=True))
        deadline = time.monotonic() + 30
        while NAME in memory_md.read_text(encoding="utf-8"):
            assert time.monotonic() < deadline, "the idle worker never followed the forget"
            time.sleep(0.1)
    finally:
        a.close()
        b.close()
