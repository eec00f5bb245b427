"""forget / forget_entity: preview changes nothing; confirmed, no read path, file or vector keeps the name."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hermes_memory.api.memory_api import MemoryAPI

NAME = "Zorblax"
ALIAS = "Zeebo"


def _ok(envelope: dict[str, Any]) -> Any:
    assert envelope["success"], envelope["error"]
    return envelope["data"]


def _open(home: Path, backend: str = "memory") -> MemoryAPI:
    settings: dict[str, Any] = {"tier3.embedding_model": "hashing", "tier3.backend": backend}
    return MemoryAPI(hermes_home=home, **settings)


def _populate(api: MemoryAPI) -> dict[str, str]:
    _ok(api.remember_turn(f"I had lunch with {NAME} yesterday.", "Nice, how is she?", "s1", 1_700_000_000.0))
    _ok(api.remember_turn("I like green tea in the morning.", "Noted.", "s1", 1_700_000_100.0))
    _ok(api.flush())
    fact = _ok(api.fact_store(f"{NAME} lives in Lisbon"))
    other = _ok(api.fact_store("The sky over Porto is blue"))
    person = _ok(api.entity_ensure(NAME, "person", aliases=[ALIAS]))
    place = _ok(api.entity_ensure("Lisbon", "place"))
    _ok(api.entity_link(person["uuid"], place["uuid"], "lives_in"))
    _ok(api.timeline_add("event", f"Met {NAME} at the market", timestamp=1_700_000_200.0))
    _ok(api.timeline_add("event", "Dentist appointment", timestamp=1_700_000_300.0))
    _ok(api.curated_add(f"{ALIAS} prefers mint tea"))
    _ok(api.curated_add("User works remotely"))
    _ok(api.curated_add(f"Friend: {NAME}", store="user"))
    _ok(api.embed_pending())
    _ok(api.graph_traverse("Lisbon"))  # loads the graph so it follows writes
    return {"fact": fact["uuid"], "other": other["uuid"]}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def api(home: Path) -> Iterator[MemoryAPI]:
    opened = _open(home)
    yield opened
    opened.close()


def _dump(envelope: dict[str, Any]) -> str:
    return json.dumps(envelope, ensure_ascii=False, default=str).lower()


def _read_paths(api: MemoryAPI) -> list[dict[str, Any]]:
    return [
        api.fact_query(NAME, min_confidence=0.0),
        api.fact_query(None, limit=100, min_confidence=0.0),
        api.entity_query(NAME),
        api.entity_query(ALIAS),
        api.entity_query(None, limit=100),
        api.recall(f"Who is {NAME}?"),
        api.recall("lunch yesterday market mint tea"),
        api.semantic_search(f"{NAME} lunch", limit=50),
        api.timeline_query(limit=100),
        api.get_latest(100),
        api.audit_log(500),
        api.curated_get("memory"),
        api.curated_get("user"),
        api.curated_snapshot(),
        api.graph_traverse("Lisbon"),
        api.graph_central_entities(),
    ]


def test_preview_changes_nothing(api: MemoryAPI) -> None:
    _populate(api)
    before = _ok(api.export_json())
    stats = _ok(api.stats())["tier2"]
    preview = _ok(api.forget_entity(NAME))
    assert preview["confirmed"] is False
    assert preview["counts"]["tier2"]["facts"] >= 1
    assert preview["counts"]["tier2"]["entities"] >= 1
    assert preview["counts"]["tier2"]["episodes"] >= 1
    assert preview["counts"]["tier2"]["timeline_events"] >= 1
    assert preview["curated_entries"]["memory"] == [f"{ALIAS} prefers mint tea"]
    assert preview["curated_entries"]["user"] == [f"Friend: {NAME}"]
    after_stats = _ok(api.stats())["tier2"]
    for key in ("facts", "entities", "relations", "timeline_events", "episodes", "chunks", "audit_entries"):
        assert after_stats[key] == stats[key], key
    assert _ok(api.export_json()) == before  # every row of every tier, byte for byte


@pytest.mark.parametrize("backend", ["memory", "qdrant"])
def test_forget_entity_leaves_no_trace(home: Path, backend: str) -> None:
    if backend == "qdrant":
        pytest.importorskip("qdrant_edge")
    api = _open(home, backend)
    ids = _populate(api)
    assert any(NAME.lower() in _dump(e) for e in _read_paths(api))  # the probe can see the name
    result = _ok(api.forget_entity(NAME, confirm=True))
    assert result["confirmed"] is True
    assert result["counts"]["tier1"] == {"memory": 1, "user": 1}
    for envelope in _read_paths(api):
        text = _dump(envelope)
        assert NAME.lower() not in text and ALIAS.lower() not in text, text[:300]
    # Unrelated memory stays.
    assert _ok(api.fact_get(ids["other"]))["content"] == "The sky over Porto is blue"
    assert _ok(api.curated_entries("memory")) == ["User works remotely"]
    assert "green tea" in _dump(api.get_latest(100))
    log = _ok(api.audit_log(500))
    assert any(entry["action"] == "forget" for entry in log)
    # No vector payload keeps the name (the backend is open in this process).
    sem = api.core.tiers.semantic()
    for collection in ("memory_chunks", "entity_embeddings"):
        store = sem.backend(collection)
        hits = store.search(np.ones(store.dim, dtype=np.float32) / np.sqrt(store.dim), limit=1000)
        assert hits or collection == "entity_embeddings"  # the probe reaches the surviving vectors
        for hit in hits:
            assert NAME.lower() not in json.dumps(hit.payload, ensure_ascii=False).lower()
    api.close()
    # No file under the home holds the name, in any case.
    needles = [w.lower().encode() for w in (NAME, ALIAS)]
    for path in home.rglob("*"):
        if path.is_file():
            data = path.read_bytes().lower()
            assert not any(n in data for n in needles), path


def test_forget_by_fact_id_and_entity_id(api: MemoryAPI) -> None:
    ids = _populate(api)
    preview = _ok(api.forget(ids["other"]))
    assert preview["target"] == "fact" and preview["counts"]["tier2"]["facts"] == 1
    _ok(api.fact_get(ids["other"]))  # still there after the preview
    _ok(api.forget(ids["other"], confirm=True))
    assert api.fact_get(ids["other"])["meta"]["error_type"] == "not_found"
    assert "porto" not in _dump(api.semantic_search("sky over Porto", limit=50))
    entity = _ok(api.entity_query(NAME))[0]
    result = _ok(api.forget(entity["uuid"], confirm=True))
    assert result["target"] == "entity"
    assert _ok(api.entity_query(NAME)) == []


def test_forget_takes_the_ids_recall_gives(api: MemoryAPI) -> None:
    """Each hit's own id ("episode:…", "fact:…", "chunk:…", "event:…") forgets that record."""
    _ok(api.remember_turn("I booked the Quokkaville trip for March.", "Sounds fun.", "s1", 1_700_000_000.0))
    _ok(api.flush())
    _ok(api.fact_store("Quokkaville has a blue harbour"))
    _ok(api.semantic_index("Quokkaville ferry timetable: boats leave at nine", source_type="document"))
    _ok(api.timeline_add("event", "Quokkaville harbour festival", timestamp=1_700_000_200.0))
    _ok(api.embed_pending())
    hits = [h for h in _ok(api.recall("Quokkaville", limit=20))["hits"] if h["kind"] != "entity"]
    assert {"episode", "fact", "chunk", "event"} <= {h["kind"] for h in hits}, hits
    for hit in hits:
        preview = _ok(api.forget(hit["id"]))
        assert preview["target"] == hit["kind"], preview
        _ok(api.forget(hit["id"], confirm=True))
    left = _ok(api.recall("Quokkaville", limit=20))["hits"]
    assert not any(h["kind"] in {"episode", "fact", "chunk", "event"} for h in left), left


def test_a_hit_id_names_where_to_look(api: MemoryAPI) -> None:
    ids = _populate(api)
    wrong = api.forget(f"episode:{ids['fact']}")  # a fact's uuid under another kind is not that fact
    assert wrong["meta"]["error_type"] == "not_found" and "no episode" in wrong["error"]
    curated = api.forget("curated:memory:0")
    assert curated["meta"]["error_type"] == "invalid_input" and "memory tool" in curated["error"]
    assert api.forget("planet:x")["meta"]["error_type"] == "invalid_input"
    assert api.forget("fact:  ")["meta"]["error_type"] == "invalid_input"
    _ok(api.fact_get(ids["fact"]))  # none of them touched anything


@pytest.mark.parametrize(
    ("call", "error_type"),
    [
        (lambda api: api.forget("00000000-0000-0000-0000-000000000000"), "not_found"),
        (lambda api: api.forget(""), "invalid_input"),
        (lambda api: api.forget_entity("   "), "invalid_input"),
        (lambda api: api.forget_entity(123), "invalid_input"),
        (lambda api: api.forget_entity("Nobody Mentioned Here"), "not_found"),
        (lambda api: api.forget_entity(NAME, confirm="yes"), "invalid_input"),
    ],
)
def test_bad_input_is_typed(api: MemoryAPI, call: Any, error_type: str) -> None:
    _populate(api)
    envelope = call(api)
    assert not envelope["success"]
    assert envelope["meta"]["error_type"] == error_type, envelope["error"]
