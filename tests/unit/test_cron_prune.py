"""The prune job on a real store: expired facts deleted with their vectors, long-archived facts deleted,
faded low-salience facts archived, superseded facts never touched; idempotent; an interrupted run leaves
a consistent store and the next run completes."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.cron import RunLog, importance
from hermes_memory.errors import ConfigError, NotFoundError
from hermes_memory.records import Fact

DAY = 86400.0
Opener = Callable[..., MemoryAPI]


def ok(envelope: dict[str, Any]) -> Any:
    assert envelope["success"], envelope["error"]
    return envelope["data"]


def exists(api: MemoryAPI, uuid: str) -> bool:
    try:
        api.tier2.facts.get(uuid, touch=False)
    except NotFoundError:
        return False
    return True


def get(api: MemoryAPI, uuid: str) -> Fact:
    return api.tier2.facts.get(uuid, touch=False)


def chunk_count(api: MemoryAPI, fact_uuid: str) -> int:
    row = api.tier2.db.query_one("SELECT count(*) AS n FROM chunks WHERE source_uuid = ?", (fact_uuid,))
    assert row is not None
    return int(row["n"])


def test_expired_facts_are_deleted_with_their_vectors(open_api: Opener) -> None:
    api = open_api()
    soon = ok(api.fact_store("The door code this week is 4711", ttl_days=1, importance=0.9))
    lasting = ok(api.fact_store("Maya's birthday is on the 3rd of May", importance=0.9))
    ok(api.embed_pending())
    assert [h["text"] for h in ok(api.semantic_search("door code", min_score=0.0))][:1] == [soon["content"]]

    data = ok(api.prune(now=time.time() + 2 * DAY))
    assert data["expired_deleted"] == 1
    assert not exists(api, soon["uuid"]) and exists(api, lasting["uuid"])
    assert chunk_count(api, soon["uuid"]) == 0
    ok(api.embed_pending())
    texts = [h["text"] for h in ok(api.semantic_search("door code", min_score=0.0))]
    assert soon["content"] not in texts and lasting["content"] in texts
    assert api.tier2.audit.entries(target_uuid=soon["uuid"], action="fact_delete")[0].diff == {"soft": False}


def test_archived_facts_older_than_the_ttl_are_deleted(open_api: Opener) -> None:
    api = open_api(**{"limits.fact_ttl_days": 30})
    old = ok(api.fact_store("An archived note about the old office"))
    fresh = ok(api.fact_store("An archived note about the new office"))
    ok(api.fact_delete(old["uuid"]))
    ok(api.fact_delete(fresh["uuid"]))
    api.tier2.db.execute(
        "UPDATE facts SET updated_at = ? WHERE uuid = ?", (time.time() - 31 * DAY, old["uuid"])
    )

    data = ok(api.prune())
    assert data["archived_deleted"] == 1
    assert not exists(api, old["uuid"]) and chunk_count(api, old["uuid"]) == 0
    assert get(api, fresh["uuid"]).is_archived


def test_superseded_facts_are_never_pruned(open_api: Opener) -> None:
    api = open_api(**{"limits.fact_ttl_days": 1})
    t2 = api.tier2
    boston = t2.facts.store(
        "Maya lives in Boston", subject="Maya", predicate="lives_in", object="Boston", importance=0.1,
        expires_at=time.time() + 1,
    ).fact  # fmt: skip
    denver = t2.facts.store(
        "Maya lives in Denver", subject="Maya", predicate="lives_in", object="Denver"
    ).fact
    assert get(api, boston.uuid).superseded_by == denver.uuid
    t2.facts.delete(boston.uuid)  # archived and superseded, low salience, and soon expired

    data = ok(api.prune(now=time.time() + 10 * 365 * DAY))
    assert data["superseded_kept"] == 1
    assert exists(api, boston.uuid)
    history = ok(api.fact_history("Maya"))
    assert [f["uuid"] for f in history] == [boston.uuid, denver.uuid]


def test_faded_low_salience_facts_are_archived_not_deleted(open_api: Opener) -> None:
    api = open_api()
    t2 = api.tier2
    trivia = ok(api.fact_store("The weather was a bit grey on Tuesday", importance=0.2))
    salient = ok(api.fact_store("Maya is allergic to peanuts", importance=0.7))
    recalled = ok(api.fact_store("Maya prefers window seats", importance=0.2))
    later = time.time() + 60 * DAY
    importance.reinforce(t2, [recalled["uuid"]], at=later - DAY)

    data = ok(api.prune(now=later))
    assert data["faded_archived"] == 1
    faded = get(api, trivia["uuid"])
    assert faded.is_archived and faded.superseded_at is None
    assert chunk_count(api, trivia["uuid"]) == 1  # archived facts keep their chunks; recall hides them
    assert get(api, salient["uuid"]).is_active  # the salience floor keeps it above the threshold
    assert get(api, recalled["uuid"]).is_active  # used recently: not faded
    assert ok(api.fact_query("weather")) == []


def test_running_twice_equals_running_once(open_api: Opener) -> None:
    api = open_api(**{"limits.fact_ttl_days": 0})
    for i in range(4):
        ok(api.fact_store(f"Temporary note number {i}", ttl_days=1))
        ok(api.fact_store(f"Small talk number {i}", importance=0.1))
    later = time.time() + 90 * DAY
    first = ok(api.prune(now=later))
    assert (first["expired_deleted"], first["faded_archived"]) == (4, 4)
    snapshot = [dict(r) for r in api.tier2.db.query("SELECT * FROM facts ORDER BY id")]
    second = ok(api.prune(now=later))
    assert (second["expired_deleted"], second["archived_deleted"], second["faded_archived"]) == (0, 0, 0)
    assert [dict(r) for r in api.tier2.db.query("SELECT * FROM facts ORDER BY id")] == snapshot


def test_an_interrupted_run_leaves_a_consistent_store_and_the_next_run_completes(
    open_api: Opener, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = open_api()
    uuids = [ok(api.fact_store(f"Expiring reminder number {i}", ttl_days=1))["uuid"] for i in range(7)]
    monkeypatch.setattr("hermes_memory.cron.context.BATCH", 3)
    maintenance = api.tier2.admin()  # maintenance jobs work on the store-wide (admin) view
    real = maintenance.facts.delete
    calls = {"n": 0}

    def failing_delete(uuid: str, **kwargs: Any) -> bool:
        calls["n"] += 1
        if calls["n"] == 5:  # second batch, second fact
            raise KeyboardInterrupt
        return real(uuid, **kwargs)

    monkeypatch.setattr(maintenance.facts, "delete", failing_delete)
    later = time.time() + 2 * DAY
    with pytest.raises(KeyboardInterrupt):
        api.prune(now=later)
    gone = [u for u in uuids if not exists(api, u)]
    assert gone == uuids[:3]  # the first batch committed whole, the second rolled back whole
    # every surviving fact still has its chunk; every deleted one lost it
    assert [chunk_count(api, u) for u in uuids] == [0, 0, 0, 1, 1, 1, 1]
    run = ok(api.maintenance_runs(job="prune"))[0]
    assert run["status"] == "failed" and run["error"].startswith("KeyboardInterrupt")

    monkeypatch.setattr(maintenance.facts, "delete", real)
    assert ok(api.prune(now=later))["expired_deleted"] == 4
    assert not any(exists(api, u) for u in uuids)
    assert [chunk_count(api, u) for u in uuids] == [0] * 7


def test_old_runs_leave_the_history_but_each_jobs_latest_success_stays(open_api: Opener) -> None:
    api = open_api()
    log = RunLog(api.tier2.db)
    now = time.time()

    def run(job: str, days_ago: float, status: str) -> int:
        run_id = log.start(job, now - days_ago * DAY, "schedule")
        assert run_id is not None
        log.finish(run_id, now - days_ago * DAY + 1, status)
        return run_id

    run("consolidate", 200, "ok")
    kept_ok = run("consolidate", 100, "ok")  # old, but the scheduler's baseline for consolidate
    run("embed_queue", 120, "failed")
    recent = run("embed_queue", 1, "ok")
    assert ok(api.prune(now=now))["runs_trimmed"] == 2
    left = {r["id"] for r in ok(api.maintenance_runs())}
    assert {kept_ok, recent} <= left and len(left) == 3  # plus this prune run


@pytest.mark.parametrize("bad", [-0.1, 1.5, "high"])
def test_the_prune_threshold_is_validated(open_api: Opener, bad: object) -> None:
    with pytest.raises(ConfigError, match=r"limits\.prune_importance_threshold"):
        open_api(**{"limits.prune_importance_threshold": bad})
