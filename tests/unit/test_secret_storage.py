"""Issue 14, defect 6: credentials said in a turn or written through a tool are stored redacted (config
``security.redact_secrets``, on by default) on every write path, and are never recalled verbatim — not by
recall, prefetch, the tools, MCP or an export. Text stored before (here: written with the switch off) is
redacted on the way out. Ordinary text is stored unchanged."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hermes_settings import api_of

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.hermes.provider import NextLevelProvider
from hermes_memory.tier2._util import content_hash

# The defect's reproduction: API keys and an unquoted password in a remembered turn.
OPENAI = "sk-proj-4fT9xQ2mLw8ZpR7vK3nB6yH1cJ5dE0aS"
AWS = "AKIAIOSFODNN7EXAMPLE"
GITHUB = "ghp_16C7e42F292c6912E7710c838347Ae178B4a"
PASSWORD = "Tr0ub4dorZebra"
SECRETS = (OPENAI, AWS, GITHUB, PASSWORD)
TURN = (
    f"For the Atlas deploy use the key {OPENAI} and the AWS key {AWS}; "
    f"the CI token is {GITHUB} and the admin password: {PASSWORD}"
)


def _leaks(value: Any) -> list[str]:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return [s for s in SECRETS if s in text]


def _stored_texts(db: Path) -> str:
    """Every text column Tier 2 keeps that could hold what was said."""
    conn = sqlite3.connect(db)
    try:
        parts = []
        for sql in (
            "SELECT text FROM episodes", "SELECT content FROM facts", "SELECT text FROM chunks",
            "SELECT payload FROM ingest_queue", "SELECT coalesce(diff, '') FROM memory_audit_log",
            "SELECT title || coalesce(description, '') FROM timeline",
        ):  # fmt: skip
            parts.extend(str(row[0]) for row in conn.execute(sql))
        return "\n".join(parts)
    finally:
        conn.close()


def _files_with(root: Path, secret: str) -> list[str]:
    needle = secret.encode()
    return [str(p) for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


def test_a_turn_with_credentials_is_stored_and_recalled_redacted(
    open_api: Callable[..., MemoryAPI], tmp_path: Path
) -> None:
    api = open_api()
    assert api.remember_turn(TURN, "Noted, I will use them.", "s1")["success"]
    assert api.flush(timeout=30)["data"]["drained"]
    recalled = api.recall("Atlas deploy key password")["data"]
    assert recalled["hits"], recalled
    assert "[REDACTED:" in recalled["rendered"]
    for envelope in (
        recalled,
        api.get_latest(10),
        api.fact_query("deploy key"),
        api.semantic_search("Atlas deploy key"),
        api.semantic_hybrid("Atlas deploy key"),
        api.export_json(),
    ):
        assert not _leaks(envelope), envelope
    assert not _leaks(_stored_texts(api.config.db_path))
    db_path = api.config.db_path
    api.close()
    # Nothing under the memory home holds the bytes: not the database, its WAL, the inbox or the vectors.
    for secret in SECRETS:
        assert _files_with(tmp_path, secret) == [], secret
    assert db_path.exists()


def test_every_api_write_path_redacts(open_api: Callable[..., MemoryAPI], tmp_path: Path) -> None:
    api = open_api()
    fact = api.fact_store(f"The staging database password is {PASSWORD}")["data"]
    assert PASSWORD not in fact["content"] and "[REDACTED:password]" in fact["content"]
    assert fact["content_hash"] == content_hash(fact["content"])  # dedup keyed on what is stored
    updated = api.fact_update(fact["uuid"], content=f"The key is {OPENAI}")["data"]
    assert not _leaks(updated)
    assert not _leaks(api.entity_ensure("Atlas", "project", description=f"deploy key {AWS}")["data"])
    assert not _leaks(api.timeline_add("event", f"rotated {GITHUB}", description=f"pw={PASSWORD}")["data"])
    assert api.semantic_index(f"the token is {GITHUB} for CI", wait=True)["success"]
    added = api.curated_add(f"Deploy key for Atlas: {OPENAI}")
    assert added["success"], added
    assert api.curated_replace("Deploy key", f"Deploy key for Atlas is {AWS}")["success"]
    assert api.mirror_curated_write("add", "memory", f"My password is {PASSWORD}")["success"]
    assert api.remember_message(f"my password is {PASSWORD}", "s2", metadata={"note": f"key {AWS}"})[
        "success"
    ]
    assert api.flush(timeout=30)["data"]["drained"]
    assert not _leaks(_stored_texts(api.config.db_path))
    memory_md = (api.config.memories_dir / "MEMORY.md").read_text(encoding="utf-8")
    assert "[REDACTED:" in memory_md and not _leaks(memory_md)
    assert not _leaks([e["metadata"] for e in api.get_latest(10)["data"]])


def test_ordinary_turns_are_stored_unchanged(open_api: Callable[..., MemoryAPI]) -> None:
    api = open_api()
    said = "The password is incorrect, so Maya reset it; the API key rotation is on Friday."
    api.remember_turn(said, None, "s1")
    api.flush(timeout=30)
    assert [e["text"] for e in api.get_latest(5)["data"]] == [said]
    assert (
        api.fact_store("Maya works at Nordlicht Labs.")["data"]["content"] == "Maya works at Nordlicht Labs."
    )


def test_text_stored_before_is_redacted_on_the_way_out(open_api: Callable[..., MemoryAPI]) -> None:
    # Written with the switch off: the secret is in the database verbatim (as on a store from before).
    old = open_api(**{"security.redact_secrets": False})
    old.remember_turn(TURN, None, "s1")
    fact = old.fact_store(f"Atlas deploy key is {OPENAI}")["data"]
    old.flush(timeout=30)
    assert OPENAI in fact["content"]  # the switch off keeps it verbatim
    assert _leaks(old.get_latest(5))
    db = old.config.db_path
    old.close()
    assert _leaks(_stored_texts(db))
    api = open_api()
    for envelope in (
        api.recall("Atlas deploy key"),
        api.get_latest(5),
        api.fact_get(fact["uuid"]),
        api.fact_query("Atlas deploy key"),
        api.why(fact["uuid"]),
        api.semantic_search("Atlas deploy key"),
        api.export_json(),
    ):
        assert envelope["success"], envelope
        assert not _leaks(envelope), envelope
    found = api.core.recall.query("Atlas deploy key")  # the record the Hermes prefetch reads
    assert found.hits and not _leaks([h.to_dict() for h in found.hits]) and not _leaks(found.rendered)
    doc = api.export_json()["data"]
    for row in doc["tier2"]["facts"] + doc["tier2"]["chunks"]:
        text = row["content"] if "content" in row else row["text"]
        assert row["content_hash"] == content_hash(text)  # an export of redacted rows re-imports cleanly


def test_an_import_stores_credentials_redacted(open_api: Callable[..., MemoryAPI], tmp_path: Path) -> None:
    source = open_api(**{"security.redact_secrets": False})
    source.fact_store(f"Atlas deploy key is {OPENAI}")
    source.remember_turn(TURN, None, "s1")
    source.flush(timeout=30)
    raw = source.export_json()["data"]
    assert _leaks(raw)
    source.close()
    target = MemoryAPI(
        hermes_home=tmp_path / "other", **{"tier3.embedding_model": "hashing", "tier3.backend": "memory"}
    )
    try:
        result = target.import_json(raw, merge=True)
        assert result["success"], result
        assert not _leaks(_stored_texts(target.config.db_path))
        facts = target.tier2.db.query("SELECT content, content_hash FROM facts")
        assert facts and all(r["content_hash"] == content_hash(r["content"]) for r in facts)
    finally:
        target.close()
    # An export file is read piece by piece (never loaded whole): its rows are redacted on the way in too.
    path = tmp_path / "export.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    from_file = MemoryAPI(
        hermes_home=tmp_path / "third", **{"tier3.embedding_model": "hashing", "tier3.backend": "memory"}
    )
    try:
        result = from_file.import_json(str(path), merge=True)
        assert result["success"], result
        assert from_file.tier2.db.query("SELECT content FROM facts")
        assert not _leaks(_stored_texts(from_file.config.db_path))
    finally:
        from_file.close()


def test_provider_sync_turn_prefetch_and_tools_never_show_a_credential(home: Path, make: Any) -> None:
    provider: NextLevelProvider = make("s2")
    provider.sync_turn(TURN, "Noted.", session_id="old")
    assert api_of(home).flush(timeout=30)["data"]["drained"]
    block = provider.prefetch("What is the Atlas deploy key?")
    assert "Atlas" in block and not _leaks(block), block
    for args in (
        {"query": "Atlas deploy key"},
        {"query": "admin password"},
    ):
        out = provider.handle_tool_call("nextlevel_search", args)
        assert "Atlas" in out or "password" in out, out
        assert not _leaks(out), out
    stored = provider.handle_tool_call("nextlevel_remember", {"kind": "fact", "content": f"pw={PASSWORD}"})
    assert not _leaks(stored), stored
    assert not _leaks(_stored_texts(api_of(home).config.db_path))


def test_key_facts_handed_to_hermes_compressor_are_redacted(make: Any) -> None:
    provider: NextLevelProvider = make("s2")
    text = provider.on_pre_compress(
        [{"role": "user", "content": f"My password is {PASSWORD} and I live in Berlin."}]
    )
    assert "Berlin" in text and PASSWORD not in text, text
