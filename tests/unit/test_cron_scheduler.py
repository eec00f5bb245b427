"""The scheduler: due-ness of each configured schedule (every 5 minutes, daily, Sunday, monthly), runs
recorded durably in Tier 2 (a reopened store remembers them), missed fire times run once, a failed job
retried after a back-off, a run in progress elsewhere not started twice, bad schedules refused."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.cron import RunLog, Scheduler, jobs
from hermes_memory.cron.context import JobContext
from hermes_memory.errors import ConfigError, EmbeddingError

Opener = Callable[..., MemoryAPI]
# Monday 2024-01-01 02:30 UTC: the baseline of jobs that never ran
T0 = datetime(2024, 1, 1, 2, 30, tzinfo=UTC).timestamp()


def at(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


@pytest.fixture
def api(open_api: Opener) -> MemoryAPI:
    return open_api()


def scheduler(api: MemoryAPI, **kwargs: Any) -> Scheduler:
    return Scheduler(api, api.config.cron, tz=UTC, since=T0, **kwargs)


def test_default_schedules_become_due_at_their_fire_times(api: MemoryAPI) -> None:
    s = scheduler(api)
    assert s.due(at("2024-01-01 02:34")) == []
    assert s.due(at("2024-01-01 02:35")) == ["embed_queue"]  # */5 * * * *
    assert s.due(at("2024-01-01 03:00")) == ["consolidate", "embed_queue"]  # 0 3 * * *
    assert "graph_refresh" not in s.due(at("2024-01-07 03:59"))  # 0 4 * * 0: Sunday 04:00
    assert "graph_refresh" in s.due(at("2024-01-07 04:00"))
    assert "prune" not in s.due(at("2024-01-31 23:59"))  # 0 2 1 * *: the 1st, 02:00
    assert s.due(at("2024-02-01 02:00")) == ["consolidate", "prune", "embed_queue", "graph_refresh"]
    assert s.next_run("prune") == at("2024-02-01 02:00")


def test_custom_schedules_from_config(open_api: Opener) -> None:
    api = open_api(**{"cron.embed_schedule": "0 */6 * * *", "cron.prune_schedule": "30 1 * * mon-fri"})
    s = scheduler(api)
    assert s.due(at("2024-01-01 02:59")) == []
    assert s.due(at("2024-01-01 06:00")) == ["consolidate", "embed_queue"]
    assert s.due(at("2024-01-02 01:30")) == ["consolidate", "prune", "embed_queue"]
    assert str(s.schedules["prune"]) == "30 1 * * mon-fri"
    assert s.next_run("prune") == at("2024-01-02 01:30")


def test_tick_runs_due_jobs_records_them_and_waits_for_the_next_fire_time(api: MemoryAPI) -> None:
    s = scheduler(api)
    seen: list[tuple[str, int, int]] = []
    results = s.tick(
        at("2024-01-01 03:00"), progress=lambda job, done, total: seen.append((job, done, total))
    )
    assert set(results) == {"consolidate", "embed_queue"}
    assert all(r["status"] == "ok" and r["triggered_by"] == "schedule" for r in results.values())
    assert results["consolidate"]["started_at"] == at("2024-01-01 03:00")
    assert {job for job, _, _ in seen} == {"consolidate", "embed_queue"}
    assert s.due(at("2024-01-01 03:04")) == []
    assert s.due(at("2024-01-01 03:05")) == ["embed_queue"]
    assert s.tick(at("2024-01-01 03:04")) == {}
    # a reopened store remembers the runs
    again = scheduler(api)
    assert again.due(at("2024-01-02 02:59")) == ["embed_queue"]
    assert again.due(at("2024-01-02 03:00")) == ["consolidate", "embed_queue"]


def test_missed_fire_times_run_once(api: MemoryAPI) -> None:
    s = scheduler(api)
    first = s.tick(at("2024-03-15 12:00"))  # the host was off for ten weeks
    assert set(first) == {"consolidate", "prune", "embed_queue", "graph_refresh"}
    assert s.due(at("2024-03-15 12:01")) == []
    rows = api.tier2.db.query("SELECT job, count(*) AS n FROM maintenance_runs GROUP BY job")
    assert {r["job"]: r["n"] for r in rows} == dict.fromkeys(first, 1)


def test_a_failed_job_is_recorded_others_still_run_and_it_is_retried_after_a_back_off(
    api: MemoryAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(ctx: JobContext, *, now: float, progress: Any = None) -> dict[str, Any]:
        raise EmbeddingError("the embedder returned NaN")

    monkeypatch.setitem(jobs._JOBS, "embed_queue", broken)
    s = scheduler(api, retry_after_s=600)
    results = s.tick(at("2024-01-01 03:00"))
    assert results["embed_queue"]["status"] == "failed"
    assert results["embed_queue"]["error"] == "the embedder returned NaN"
    assert results["consolidate"]["status"] == "ok"
    status = s.status(at("2024-01-01 03:05"))["embed_queue"]
    assert not status["due"] and status["blocked"] == "failed recently; retried later"
    assert s.due(at("2024-01-01 03:11")) == ["embed_queue"]
    monkeypatch.undo()
    assert s.tick(at("2024-01-01 03:11"))["embed_queue"]["status"] == "ok"


def test_a_bug_in_a_job_is_recorded_and_propagates(api: MemoryAPI, monkeypatch: pytest.MonkeyPatch) -> None:
    def buggy(ctx: JobContext, *, now: float, progress: Any = None) -> dict[str, Any]:
        raise ZeroDivisionError("oops")

    monkeypatch.setitem(jobs._JOBS, "consolidate", buggy)
    with pytest.raises(ZeroDivisionError):
        scheduler(api).tick(at("2024-01-01 03:00"))
    last = RunLog(api.tier2.db).last("consolidate")
    assert last is not None and last.status == "failed" and last.error == "ZeroDivisionError: oops"


def test_a_run_in_progress_elsewhere_is_not_started_twice(api: MemoryAPI) -> None:
    log = RunLog(api.tier2.db)
    log.start("consolidate", at("2024-01-01 02:59"), "schedule")  # another process, still running
    s = scheduler(api, lease_s=3600)
    assert s.due(at("2024-01-01 03:00")) == ["embed_queue"]
    assert s.status(at("2024-01-01 03:00"))["consolidate"]["blocked"] == "running elsewhere"
    # a process that died holds the lease only until it runs out
    assert "consolidate" in s.due(at("2024-01-01 04:00"))
    assert log.start("consolidate", at("2024-01-01 03:30"), "schedule", lease_s=3600) is None


def test_the_scheduler_clock_is_injectable(api: MemoryAPI) -> None:
    now = {"t": at("2024-01-01 02:34")}
    s = Scheduler(api, api.config.cron, clock=lambda: now["t"], tz=UTC, since=T0)
    assert s.tick() == {}
    now["t"] = at("2024-01-01 02:35")
    assert list(s.tick()) == ["embed_queue"]


@pytest.mark.parametrize(
    ("key", "value", "fragment"),
    [
        ("cron.prune_schedule", "61 * * * *", "outside 0-59"),
        ("cron.consolidate_schedule", "0 3 * *", "expected 5"),
        ("cron.graph_rebuild_schedule", "0 0 31 2 *", "never fires"),
    ],
)
def test_bad_schedules_are_refused_naming_the_key(
    open_api: Opener, key: str, value: str, fragment: str
) -> None:
    api = open_api(**{key: value})
    with pytest.raises(ConfigError, match=fragment) as err:
        Scheduler(api, api.config.cron)
    assert repr(key) in str(err.value)
    failed = api.maintenance_status()
    assert not failed["success"] and failed["meta"]["error_type"] == "config_error"


def test_maintain_due_runs_what_the_schedule_says(api: MemoryAPI) -> None:
    baseline = RunLog(api.tier2.db).tracking_since()
    data = api.maintain_due(now=baseline + 3600)["data"]
    assert "embed_queue" in data["jobs"] and data["failed"] == []
    assert api.maintain_due(now=baseline + 3600)["data"]["jobs"] == {}


def test_maintain_envelope_reports_a_failed_job_with_the_others_results(
    api: MemoryAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(ctx: JobContext, *, now: float, progress: Any = None) -> dict[str, Any]:
        raise EmbeddingError("the embedder returned NaN")

    monkeypatch.setitem(jobs._JOBS, "embed_queue", broken)
    envelope = api.maintain()
    assert not envelope["success"] and envelope["meta"]["error_type"] == "embedding_error"
    assert envelope["error"] == "embed_queue failed: the embedder returned NaN"
    assert envelope["data"]["failed"] == ["embed_queue"]
    assert envelope["data"]["jobs"]["graph_refresh"]["status"] == "ok"
    unknown = api.maintain("defrag")
    assert not unknown["success"] and unknown["meta"]["error_type"] == "invalid_input"
    assert "consolidate, prune, embed_queue, graph_refresh" in unknown["error"]
