"""export_json / import_json: exact round trip, merge skips duplicates, malformed input is refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hermes_memory.api.memory_api import MemoryAPI


def _ok(envelope: dict[str, Any]) -> Any:
    assert envelope["success"], envelope["error"]
    return envelope["data"]


def _open(home: Path) -> MemoryAPI:
    settings: dict[str, Any] = {"tier3.embedding_model": "hashing", "tier3.backend": "memory"}
    return MemoryAPI(hermes_home=home, **settings)


def _populate(api: MemoryAPI) -> None:
    _ok(api.remember_turn("I moved to Berlin with my dog Rex in 2021.", "Great!", "s1", 1_700_000_000.0))
    _ok(api.flush())
    _ok(api.fact_store("Alice works at Initech"))
    _ok(api.fact_store("Alice works at Globex"))  # supersedes: bitemporal columns get exercised
    a = _ok(api.entity_ensure("Alice", "person", aliases=["Ali"], description="a colleague"))
    b = _ok(api.entity_ensure("Globex", "org"))
    _ok(api.entity_link(a["uuid"], b["uuid"], "works_at"))
    _ok(api.timeline_add("milestone", "Project launch", timestamp=1_700_000_500.0))
    _ok(api.curated_add("User prefers short answers"))
    _ok(api.curated_add("Name: Sam", store="user"))


def test_round_trip_is_exact(tmp_path: Path) -> None:
    with _open(tmp_path / "a") as src:
        _populate(src)
        first = _ok(src.export_json())
        assert (
            first["tier2"]["facts"]
            and first["tier2"]["chunks"]
            and first["tier2"]["fact_entities"] is not None
        )
        path = tmp_path / "export.json"
        written = _ok(src.export_json(path))
        assert written["counts"]["facts"] == len(first["tier2"]["facts"])
    with _open(tmp_path / "b") as dst:
        result = _ok(dst.import_json(str(path), merge=False))
        assert result["imported"]["facts"] == len(first["tier2"]["facts"])
        assert dst.tier2.embed_queue.count() > 0  # vectors are re-derived from the chunks
        second = _ok(dst.export_json())
        assert json.dumps(second, sort_keys=True) == json.dumps(first, sort_keys=True)
        # The imported memory is searchable (FTS via triggers, vectors after the drain).
        assert _ok(dst.fact_query("Globex", min_confidence=0.0))
        _ok(dst.embed_pending())
        assert _ok(dst.semantic_search("Berlin dog", limit=5))


def test_merge_skips_duplicates(tmp_path: Path) -> None:
    with _open(tmp_path / "a") as src:
        _populate(src)
        doc = _ok(src.export_json())
        again = _ok(src.import_json(doc))  # everything is already there
        assert sum(again["imported"].values()) == 0
        assert again["tier1_added"] == 0
        assert _ok(src.export_json()) == doc
    with _open(tmp_path / "b") as dst:
        _ok(dst.fact_store("Alice works at Globex"))  # same content hash, other uuid
        _ok(dst.fact_store("Bob likes chess"))
        merged = _ok(dst.import_json(doc, merge=True))
        assert merged["skipped"]["facts"] >= 1
        contents = [f["content"] for f in _ok(dst.fact_query(None, limit=100, min_confidence=0.0))]
        assert contents.count("Alice works at Globex") == 1
        assert "Bob likes chess" in contents
        refused = dst.import_json(doc, merge=False)
        assert refused["meta"]["error_type"] == "conflict"


@pytest.mark.parametrize(
    "doc",
    [
        None,
        [],
        {"format": "something-else"},
        {"format": "hermes-memory/export", "version": 99, "tier2": {}},
        {"format": "hermes-memory/export", "version": 1, "tier2": {"nosuch": []}},
        {"format": "hermes-memory/export", "version": 1, "tier2": {"facts": [{"uuid": "x"}]}},
        {"format": "hermes-memory/export", "version": 1, "tier2": {"facts": "rows"}},
        {"format": "hermes-memory/export", "version": 1, "tier2": {"fact_entities": [{"bad; col": 1}]}},
        {
            "format": "hermes-memory/export",
            "version": 1,
            "tier2": {"entity_aliases": [{"alias_key": "a", "entity_uuid": "nope"}]},
        },
        {"format": "hermes-memory/export", "version": 1, "tier1": {"memory": [1]}, "tier2": {}},
    ],
)
def test_malformed_import_is_typed_and_writes_nothing(tmp_path: Path, doc: Any) -> None:
    with _open(tmp_path / "a") as api:
        _ok(api.fact_store("Existing fact"))
        before = _ok(api.export_json())
        envelope = api.import_json(doc, merge=False)
        assert envelope["meta"].get("error_type") in {"invalid_input", "conflict"}, envelope
        assert _ok(api.export_json()) == before
    with _open(tmp_path / "b") as empty:
        envelope = empty.import_json(doc, merge=False)
        assert envelope["meta"].get("error_type") == "invalid_input", envelope
        assert sum(len(rows) for rows in _ok(empty.export_json())["tier2"].values()) == 0


def test_unreadable_import_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with _open(tmp_path / "a") as api:
        assert api.import_json(str(bad))["meta"]["error_type"] == "invalid_input"
        assert api.import_json(str(tmp_path / "missing.json"))["meta"]["error_type"] == "invalid_input"
