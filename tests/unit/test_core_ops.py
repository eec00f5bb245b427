"""The core's ops services (hermes_memory/core) return records, and ``Memory`` itself finishes a forget
a crash interrupted when it opens the store (no MemoryAPI needed)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from hermes_memory import MemoryAPI
from hermes_memory.config import load_config
from hermes_memory.core.forgetting import ForgetOutcome
from hermes_memory.core.history import Contradiction, FactOrigin, FactState, TimelineItem
from hermes_memory.core.maintenance import MaintenanceReport
from hermes_memory.core.memory import Memory
from hermes_memory.ops import erasure
from hermes_memory.scoping import ScopeView

SETTINGS: dict[str, Any] = {"tier3.embedding_model": "hashing", "tier3.backend": "memory"}
STORY = [
    ("2021-03-01T10:00:00", "I live in Boston."),
    ("2022-07-15T09:00:00", "I just moved to Denver!"),
]


def _ts(day: str) -> float:
    return datetime.fromisoformat(day).replace(tzinfo=UTC).timestamp()


def _memory(home: Path) -> Memory:
    return Memory(load_config(None, hermes_home=home, **SETTINGS), actor="user", view=ScopeView.of("default"))


@pytest.fixture
def api(tmp_path: Path) -> Iterator[MemoryAPI]:
    mem = MemoryAPI(hermes_home=tmp_path, **SETTINGS)
    for when, text in STORY:
        assert mem.remember_message(text, "life", when, speaker="Caroline")["success"]
    assert mem.flush(60)["data"]["drained"]
    yield mem
    mem.close()


def test_history_answers_with_records_the_envelope_renders(api: MemoryAPI) -> None:
    history = api.core.history
    states = [s for s in history.fact_history("Caroline") if s.fact.predicate == "lives_in"]
    assert [(s.fact.object, s.status) for s in states] == [("Boston", "superseded"), ("Denver", "active")]
    assert all(isinstance(s, FactState) for s in states)
    boston, denver = states
    origin = history.why(boston.fact.uuid)
    assert isinstance(origin, FactOrigin)
    assert isinstance(origin.superseded_by, FactState) and origin.superseded_by.fact.uuid == denver.fact.uuid
    assert origin.to_dict() == api.why(boston.fact.uuid)["data"]
    contradictions = history.contradictions(50)
    assert all(isinstance(c, Contradiction) for c in contradictions)
    assert {
        (c.old.fact.object, c.new.fact.object) for c in contradictions if isinstance(c.new, FactState)
    } == {("Boston", "Denver")}
    items = history.timeline("Caroline", 100)
    assert items and all(isinstance(i, TimelineItem) for i in items)
    assert [i.time for i in items] == sorted(i.time for i in items)
    assert [i.to_dict() for i in items] == api.timeline("Caroline")["data"]


def test_forget_preview_is_a_record_and_changes_nothing(api: MemoryAPI) -> None:
    forgetting = api.core.forgetting
    preview = forgetting.forget_entity("Boston", confirm=False)
    assert isinstance(preview, ForgetOutcome) and not preview.confirmed
    assert preview.counts["tier2"]["facts"] >= 1
    assert "curated_entries" in preview.to_dict() and "unfinished" not in preview.to_dict()
    assert forgetting.forget_entity("Boston", confirm=False) == preview  # nothing was deleted
    api.core.recall_engine()
    done = forgetting.forget_entity("Boston", confirm=True)
    assert done.confirmed and "curated_entries" not in done.to_dict()
    assert api.core._engine is None  # the recall caches that may hold the name were dropped
    assert not api.core.tiers.tier2().has_unfinished_erasures()


def test_memory_finishes_an_interrupted_forget_when_it_opens(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = _memory(tmp_path)
    try:
        assert memory.tiers.t2 is not None
        memory.tiers.t2.facts.store("Zorblax lives in Lisbon")
        with monkeypatch.context() as patch:  # the steps after the commit never run (a crash)
            patch.setattr(erasure, "finish", lambda parts: [])
            memory.forgetting.forget_entity("Zorblax", confirm=True)
        assert memory.tiers.tier2().has_unfinished_erasures()
    finally:
        memory.close(0)
    reopened = _memory(tmp_path)
    try:
        assert not reopened.tiers.tier2().has_unfinished_erasures()
        assert reopened.forgetting.finish_erasures() == []
    finally:
        reopened.close(0)


def test_maintenance_reports_runs_as_a_record(api: MemoryAPI) -> None:
    report = api.core.maintenance.run(["prune"], now=_ts("2024-01-01T00:00:00"))
    assert isinstance(report, MaintenanceReport)
    assert list(report.jobs) == ["prune"] and report.failed == [] and report.error() == ""
    assert report.jobs["prune"]["status"] == "ok"
    assert [r.job for r in api.core.maintenance.runs(limit=5)] == ["prune"]
