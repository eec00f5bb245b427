"""`doctor`: a fresh populated store is clean; each injected inconsistency is found, repaired by
``repair=True``, and the re-check is clean. Also the CLI's exit codes.

Fast: the hashing embedder and the in-process (memory) vector backend.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.cli import main
from hermes_memory.ops.doctor import MAX_ATTEMPTS
from hermes_memory.tier2.chunks import CHUNKS_COLLECTION

# The engine answers at any size: these checks look into it.
SETTINGS: dict[str, Any] = {
    "tier3.embedding_model": "hashing", "tier3.backend": "memory", "tier3.engine_min_vectors": 0
}  # fmt: skip
TURNS = [
    ("I moved to Berlin last year. My sister Anna works at Siemens.", "Berlin is a great city."),
    ("I started learning the piano in March 2024.", "That is a lovely instrument."),
    ("Anna lives in Munich with her husband Tom.", "Munich is close to the Alps."),
]


def _populate(api: MemoryAPI) -> None:
    for user, assistant in TURNS:
        assert api.remember_turn(user, assistant, "s1")["success"]
    assert api.fact_store("Bob prefers green tea", category="preference")["success"]
    assert api.flush()["data"]["drained"]
    assert api.graph_central_entities()["success"]  # loads the graph, so its file is written on close


@pytest.fixture
def api(tmp_path: Path) -> Iterator[MemoryAPI]:
    with MemoryAPI(hermes_home=tmp_path, **SETTINGS) as first:
        _populate(first)
    # Reopen: the store as a new process sees it (graph file saved, vectors flushed).
    opened = MemoryAPI(hermes_home=tmp_path, **SETTINGS)
    assert opened.graph_central_entities()["success"]
    yield opened
    opened.close()


def _doctor(api: MemoryAPI, repair: bool = False) -> dict[str, Any]:
    envelope = api.doctor(repair=repair)
    assert envelope["success"], envelope["error"]
    data: dict[str, Any] = envelope["data"]
    return data


def _problems(data: dict[str, Any], key: str = "findings") -> dict[str, dict[str, Any]]:
    return {f["check"]: f for f in data[key] if f["status"] != "ok"}


def test_fresh_populated_store_is_clean(api: MemoryAPI) -> None:
    data = _doctor(api)
    assert _problems(data) == {}
    assert data["clean"] is True
    checks = {f["check"] for f in data["findings"]}
    assert {
        "sqlite",
        "fts:facts",
        "fts:chunks",
        "vectors:memory_chunks",
        "graph:file",
        "graph:tier2",
    } <= checks
    assert {"queue:ingest", "queue:embed", "facts:superseded_by", "facts:fact_entities"} <= checks


# ---------------------------------------------------------------- injected inconsistencies


def _drop_fts_row(api: MemoryAPI) -> None:
    with api.tier2.db.atomic() as conn:
        row = conn.execute("SELECT id, content FROM facts ORDER BY id LIMIT 1").fetchone()
        conn.execute("INSERT INTO facts_fts(facts_fts, rowid, content) VALUES ('delete', ?, ?)", tuple(row))


def _delete_vector(api: MemoryAPI) -> None:
    row = api.tier2.db.query_one("SELECT uuid FROM chunks ORDER BY id LIMIT 1")
    assert row is not None
    semantic = api.maintenance_context().semantic
    assert semantic is not None
    assert semantic.backend(CHUNKS_COLLECTION).delete([f"chunk:{row['uuid']}"]) == 1


def _delete_chunk_row(api: MemoryAPI) -> None:
    # Behind the store's back: the vector stays, nothing queues its delete and its tombstone goes too
    # (a plain DELETE leaves a tombstone, and the engines follow it).
    with api.tier2.db.atomic() as conn:
        conn.execute("DELETE FROM chunks WHERE id = (SELECT max(id) FROM chunks)")
        conn.execute("DELETE FROM chunk_tombstones")


def _corrupt_graph_file(api: MemoryAPI) -> None:
    path = api.config.graph_path / "knowledge_graph.pickle"
    assert path.is_file()
    path.write_bytes(b"not a pickle at all")


def _delete_graph_file(api: MemoryAPI) -> None:
    path = api.config.graph_path / "knowledge_graph.pickle"
    path.unlink()


def _stuck_queue_row(api: MemoryAPI) -> None:
    assert api.remember_turn("My brother Max plays the violin.", "Nice.", "s2", turn_id="t-stuck")["success"]
    with api.tier2.db.atomic() as conn:
        conn.execute("UPDATE ingest_queue SET attempts = ?, last_error = 'boom'", (MAX_ATTEMPTS,))


def _stuck_embed_row(api: MemoryAPI) -> None:
    with api.tier2.db.atomic() as conn:
        conn.execute(
            "INSERT INTO embed_queue(collection, item_uuid, op, attempts, last_error, enqueued_at) "
            "SELECT ?, uuid, 'upsert', ?, 'boom', 0 FROM chunks ORDER BY id LIMIT 1",
            (CHUNKS_COLLECTION, MAX_ATTEMPTS),
        )


def _relation_behind_the_graph(api: MemoryAPI) -> None:
    # Written straight to Tier 2, so the loaded graph never hears of it.
    rows = api.tier2.db.query("SELECT uuid FROM entities ORDER BY id LIMIT 2")
    api.tier2.relations.link(rows[0]["uuid"], rows[1]["uuid"], "knows")


def _two_active_homes(api: MemoryAPI) -> None:
    for city in ("Oslo", "Bergen"):
        api.tier2.facts.store(
            f"Carl lives in {city}", subject="Carl", predicate="lives_in", object=city, exclusive=False
        )


def _dangling_superseded_by(api: MemoryAPI) -> None:
    with api.tier2.db.atomic() as conn:
        conn.execute(
            "UPDATE facts SET superseded_by = 'no-such-fact', superseded_at = recorded_at "
            "WHERE id = (SELECT min(id) FROM facts)"
        )


def _orphan_fact_entity(api: MemoryAPI) -> None:
    api.tier2.db.execute("PRAGMA foreign_keys = OFF")
    try:
        with api.tier2.db.atomic() as conn:
            conn.execute(
                "INSERT INTO fact_entities(fact_uuid, entity_uuid) VALUES ('gone-fact', 'gone-entity')"
            )
    finally:
        api.tier2.db.execute("PRAGMA foreign_keys = ON")


INJECTIONS: dict[str, tuple[Callable[[MemoryAPI], None], str]] = {
    "fts_row_dropped": (_drop_fts_row, "fts:facts"),
    "vector_deleted": (_delete_vector, "vectors:memory_chunks"),
    "chunk_deleted_vector_left": (_delete_chunk_row, "vectors:memory_chunks"),
    "graph_file_corrupt": (_corrupt_graph_file, "graph:file"),
    "graph_file_deleted": (_delete_graph_file, "graph:file"),
    "stuck_queue_row": (_stuck_queue_row, "queue:ingest"),
    "stuck_embed_row": (_stuck_embed_row, "queue:embed"),
    "relation_behind_the_graph": (_relation_behind_the_graph, "graph:tier2"),
    "two_active_values_of_lives_in": (_two_active_homes, "facts:exclusive"),
    "dangling_superseded_by": (_dangling_superseded_by, "facts:superseded_by"),
    "orphan_fact_entities": (_orphan_fact_entity, "facts:fact_entities"),
}


@pytest.mark.parametrize("name", sorted(INJECTIONS))
def test_injected_inconsistency_is_found_and_repaired(api: MemoryAPI, name: str) -> None:
    inject, check = INJECTIONS[name]
    inject(api)
    found = _problems(_doctor(api))
    assert check in found, found
    assert found[check]["repairable"] is True

    repaired = _doctor(api, repair=True)
    assert check in _problems(repaired, "initial")
    assert all(r["ok"] for r in repaired["repairs"]), repaired["repairs"]
    assert _problems(repaired) == {}, repaired["findings"]
    assert _problems(_doctor(api)) == {}


def test_stuck_turn_is_ingested_by_the_repair(api: MemoryAPI) -> None:
    _stuck_queue_row(api)
    _doctor(api, repair=True)
    assert api.tier2.ingest_queue.count() == 0
    texts = [e["text"] for e in api.get_latest(count=50)["data"]]
    assert "My brother Max plays the violin." in texts


def test_dangling_repair_keeps_the_fact_closed_and_audits_it(api: MemoryAPI) -> None:
    _dangling_superseded_by(api)
    _doctor(api, repair=True)
    row = api.tier2.db.query_one("SELECT uuid, superseded_by, superseded_at FROM facts ORDER BY id LIMIT 1")
    assert row is not None
    assert row["superseded_by"] is None and row["superseded_at"] is not None
    actions = [e["action"] for e in api.audit_log(target_uuid=row["uuid"])["data"]]
    assert "doctor_clear_superseded_by" in actions


def test_doctor_rejects_a_non_boolean_repair_flag(api: MemoryAPI) -> None:
    envelope = api.doctor(repair="yes")  # type: ignore[arg-type]
    assert not envelope["success"]
    assert envelope["meta"]["error_type"] == "invalid_input"


# ---------------------------------------------------------------- CLI


def test_cli_doctor_exit_codes_and_repair(
    api: MemoryAPI, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    api.close()
    with MemoryAPI(hermes_home=tmp_path, **SETTINGS) as other:
        _drop_fts_row(other)
    config = tmp_path / "config.yaml"
    config.write_text("tier3:\n  embedding_model: hashing\n  backend: memory\n", encoding="utf-8")
    base = ["--home", str(tmp_path), "--config", str(config)]

    assert main(["doctor", *base]) == 1
    out = capsys.readouterr().out
    assert "fts:facts" in out and "ERROR" in out

    assert main(["doctor", "--repair", "--json", *base]) == 0
    envelope = json.loads(capsys.readouterr().out)
    assert envelope["data"]["clean"] is True
    assert any(r["action"] == "rebuild:facts" for r in envelope["data"]["repairs"])

    assert main(["doctor", *base]) == 0
    assert capsys.readouterr().out.strip().endswith("clean")


def test_disabled_tiers_are_reported_not_checked(tmp_path: Path) -> None:
    off: dict[str, Any] = {"tier3.enabled": False, "graph.enabled": False}
    with MemoryAPI(hermes_home=tmp_path, **off) as api:
        assert api.remember_turn("I moved to Berlin last year.", "Nice.", "s1")["success"]
        assert api.flush()["data"]["drained"]
        data = _doctor(api)
    assert data["clean"] is True
    details = {f["check"]: f["detail"] for f in data["findings"]}
    assert details["vectors"] == "tier3 disabled" and details["graph"] == "graph disabled"


def test_pending_turn_is_a_warning_drained_by_the_repair(api: MemoryAPI) -> None:
    assert api.remember_turn("Lena adopted a cat named Miso.", "Cute!", "s3")["success"]
    found = _problems(_doctor(api))
    assert found["queue:ingest"]["status"] == "warn" and found["queue:ingest"]["repairable"]
    assert _doctor(api, repair=True)["clean"] is True
    assert api.tier2.ingest_queue.count() == 0
