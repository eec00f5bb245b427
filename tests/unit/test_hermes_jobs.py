"""Maintenance inside Hermes (seed §9.3): a long-lived provider runs the due jobs from its store's
background worker (off the turn path), one process at a time per store (an OS file lock that a killed
holder does not keep), switched off by ``provider.maintenance_interval_s: 0``; `maintain --due` stays
for crontabs; status shows each job's last run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hermes_settings import api_of, fast_provider_yaml

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.cli import main
from hermes_memory.core.maintenance import AutoMaintenance
from hermes_memory.cron import RunLog, jobs
from hermes_memory.cron.context import JobContext
from hermes_memory.cron.embed_queue import run as embed_queue_run
from hermes_memory.hermes import status
from hermes_memory.hermes.provider import NextLevelProvider
from hermes_memory.hermes.settings import ProviderSettings, build_settings
from hermes_memory.tier2 import leases as lock

LONG_AGO = time.time() - 40 * 86400  # every job's last successful run: all of them are due now


def settings_yaml(interval: float) -> str:
    return fast_provider_yaml(maintenance_interval_s=interval)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "hermes"
    path.mkdir()
    (path / "nextlevel.yaml").write_text(settings_yaml(0.2), encoding="utf-8")
    return path


def all_due(api: MemoryAPI) -> None:
    log = RunLog(api.tier2.db)
    for job in jobs.JOB_NAMES:
        log.finish(log.start(job, LONG_AGO, "schedule") or 0, LONG_AGO + 1, "ok", result={})


def scheduled_runs(api: MemoryAPI) -> dict[str, str]:
    return {r.job: r.status for r in RunLog(api.tier2.db).recent(limit=50) if r.started_at > LONG_AGO + 10}


def wait_for(condition: Callable[[], bool], timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def test_a_long_lived_provider_runs_the_due_jobs_off_the_turn_path(
    make: Callable[..., NextLevelProvider], home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()
    threads: list[str] = []
    real = jobs._JOBS["consolidate"]

    def slow_consolidate(ctx: JobContext, *, now: float, progress: Any = None) -> dict[str, Any]:
        threads.append(threading.current_thread().name)
        release.wait(30)
        return real(ctx, now=now, progress=progress)

    monkeypatch.setitem(jobs._JOBS, "consolidate", slow_consolidate)
    provider = make()
    api = api_of(home)
    all_due(api)
    assert wait_for(lambda: bool(threads)), "the provider never ran the due jobs"
    # A job is running (and holds the store's maintenance lock): the turn path does not wait for it.
    provider.sync_turn("We moved the launch to Friday.", "Noted.", session_id="s1")
    assert isinstance(provider.prefetch("when is the launch?"), str)
    holder = lock.holder(api.config.db_path)
    assert holder is not None and holder.this_process
    release.set()
    # every job ran, and the last one has finished (its run is recorded as running until then)
    finished = set(jobs.JOB_NAMES)
    assert wait_for(lambda: {j for j, s in scheduled_runs(api).items() if s != "running"} == finished)
    assert set(scheduled_runs(api).values()) == {"ok"}, scheduled_runs(api)
    assert threads == ["hermes-memory-worker"]
    runs = RunLog(api.tier2.db).recent(limit=50)
    assert {r.triggered_by for r in runs if r.started_at > LONG_AGO + 10} == {"schedule"}
    auto = api.core.auto_maintenance
    assert auto is not None and auto.last is not None and auto.last.skipped is None


def test_switched_off_the_provider_runs_nothing(make: Callable[..., NextLevelProvider], home: Path) -> None:
    (home / "nextlevel.yaml").write_text(settings_yaml(0), encoding="utf-8")
    make()
    api = api_of(home)
    all_due(api)
    assert api.core.auto_maintenance is None
    from hermes_memory.core.maintenance import AutoMaintenance

    assert not [t for t in api.core.ingest.idle_tasks if isinstance(t, AutoMaintenance)]
    assert scheduled_runs(api) == {}
    state = status.store_state(api.config)
    lines = status.maintenance_lines(state, ProviderSettings(maintenance_interval_s=0))
    assert lines[0].startswith("in Hermes: off") and "maintain --due" in lines[0]


def test_the_interval_is_a_checked_setting() -> None:
    assert ProviderSettings().maintenance_interval_s == 60.0
    assert build_settings({"maintenance_interval_s": "0"}, {}).maintenance_interval_s == 0.0
    with pytest.raises(Exception, match="maintenance_interval_s must be within"):
        build_settings({"maintenance_interval_s": -1}, {})


HOLD = """
import sys, time
from hermes_memory.tier2 import leases as lock
held = lock.take_file(lock.lock_path(sys.argv[1]))
print("held" if held is not None else "busy", flush=True)
time.sleep(600)
"""


def test_one_process_at_a_time_and_a_killed_holder_does_not_block(
    open_api: Callable[..., MemoryAPI], tmp_path: Path
) -> None:
    api = open_api()
    all_due(api)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    child = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(api.config.db_path)], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "held"
        skipped = api.maintain_due()
        assert skipped["success"] and skipped["data"]["jobs"] == {}
        assert skipped["data"]["skipped"] == f"maintenance is running in pid {child.pid}"
        assert scheduled_runs(api) == {}
        holder = lock.holder(api.config.db_path)
        assert holder is not None and holder.pid == child.pid
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
        if child.stdout is not None:
            child.stdout.close()
    # the OS released the dead holder's lock: the next tick runs
    assert lock.holder(api.config.db_path) is None
    ran = api.maintain_due()
    assert ran["success"] and "skipped" not in ran["data"]
    assert set(ran["data"]["jobs"]) == set(jobs.JOB_NAMES)


def test_maintain_due_in_a_crontab_says_when_another_process_runs_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("HERMES_HOME", raising=False)
    config = tmp_path / "config.yaml"
    config.write_text("tier3:\n  embedding_model: hashing\n  backend: memory\n", encoding="utf-8")
    home = tmp_path / "home"
    with MemoryAPI(
        hermes_home=home, **{"tier3.embedding_model": "hashing", "tier3.backend": "memory"}
    ) as api:
        db = api.config.db_path
    held = lock.take_file(lock.lock_path(db))  # this process, through another open of the lock file
    assert held is not None
    try:
        code = main(["maintain", "--due", "--home", str(home), "--config", str(config)])
    finally:
        lock.drop_file(held)
    out = capsys.readouterr().out
    assert code == 0 and out.strip() == "skipped: maintenance is running in this process"


def test_a_stopping_worker_stops_the_job_between_batches_and_starts_no_other(
    open_api: Callable[..., MemoryAPI], monkeypatch: pytest.MonkeyPatch
) -> None:
    api = open_api()
    all_due(api)
    stopping = threading.Event()

    def batches(ctx: JobContext, *, now: float, progress: Any = None) -> dict[str, Any]:
        progress(0, 2)
        stopping.set()  # the process begins to shut down during the first batch
        progress(1, 2)
        raise AssertionError("the job went on after its process stopped")

    monkeypatch.setitem(jobs._JOBS, "consolidate", batches)
    clock = {"t": 0.0}
    auto = AutoMaintenance(api.core.maintenance, 60.0, clock=lambda: clock["t"])
    assert auto(stopping.is_set) is False and auto.last is None  # the first tick waits an interval
    clock["t"] = 60.0
    auto(stopping.is_set)
    assert auto.last is not None
    assert list(auto.last.jobs) == ["consolidate"]  # no further job started
    run = auto.last.jobs["consolidate"]
    assert run["status"] == "failed" and run["result"]["error_type"] == "stopped"
    assert "shutting down" in run["error"]


class _Engine:
    def __init__(self) -> None:
        self.optimized = 0

    def optimize(self) -> bool:
        self.optimized += 1
        return True


class _Semantic:
    def __init__(self) -> None:
        self.engine = _Engine()

    def drain(self, progress: Any = None) -> Any:
        class Report:
            def to_dict(self) -> dict[str, Any]:
                return {"upserted": 0}

        return Report()

    def opened_backends(self) -> list[_Engine]:
        return [self.engine]


def test_inside_an_agent_the_embed_job_leaves_the_engine_index_build_out(
    open_api: Callable[..., MemoryAPI],
) -> None:
    api = open_api()
    semantic = _Semantic()
    ctx = JobContext(tier2=api.tier2, config=api.config, semantic=semantic)  # type: ignore[arg-type]
    assert embed_queue_run(ctx, now=0.0)["indexes_built"] == 1
    quiet = JobContext(tier2=api.tier2, config=api.config, semantic=semantic, build_indexes=False)  # type: ignore[arg-type]
    assert embed_queue_run(quiet, now=0.0)["indexes_built"] == 0
    assert semantic.engine.optimized == 1


def test_status_shows_each_jobs_last_run(
    open_api: Callable[..., MemoryAPI], home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = open_api()
    api.maintain("prune")
    lines = status.maintenance_lines(status.store_state(api.config), ProviderSettings())
    assert lines[0] == "in Hermes: every 60 s from a long-lived process (provider.maintenance_interval_s)"
    by_job = {line.split(":")[0]: line for line in lines[1:]}
    assert by_job["consolidate"] == "consolidate: never ran"
    assert by_job["prune"].startswith("prune: ok ") and by_job["prune"].endswith("(manual)")
    monkeypatch.setenv("HERMES_HOME", str(home))
    shown = NextLevelProvider().get_status_config({})  # `hermes memory status`
    assert shown["maintenance"].startswith("every 0.2 s")
    assert shown["maintenance consolidate"] == "never ran" and "maintenance graph_refresh" in shown
    report = status.collect(home, check=False)  # `hermes-memory status`
    text = status.render(report)
    assert "maintenance:     in Hermes: every 0.2 s" in text
    assert "                 graph_refresh: never ran" in text
