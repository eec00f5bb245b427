"""A scheduler a host can tick: which maintenance jobs are due under the configured cron schedules, and
running them with their runs recorded durably in Tier 2.

A job is due when a fire time of its schedule lies after its last successful run (or, if it never ran,
after the store began recording runs) and not after ``now``. Missed fire times (the host was off) make
it due once, not once per missed time. A failed run is retried on a later tick, but no sooner than
``retry_after_s`` after it failed; a run another process started less than ``lease_s`` ago and has not
finished blocks it (a crashed run stops blocking when its lease runs out, and the job runs again: every
job is idempotent and resumable).

    scheduler = Scheduler(memory.maintenance, config.cron)
    results = scheduler.tick()        # call every minute or so; runs what is due
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from typing import Any, Protocol

from hermes_memory.config import CronConfig
from hermes_memory.cron.context import JobContext
from hermes_memory.cron.expression import CronExpression
from hermes_memory.cron.jobs import JOB_NAMES, JobProgress, check_job, run_job
from hermes_memory.errors import ConfigError, ValidationError
from hermes_memory.tier2.job_runs import RunLog

# Job name -> the key of its schedule under the config's ``cron`` section.
SCHEDULE_KEYS: dict[str, str] = {
    "consolidate": "consolidate_schedule",
    "prune": "prune_schedule",
    "embed_queue": "embed_schedule",
    "graph_refresh": "graph_rebuild_schedule",
}


class MaintenanceHost(Protocol):
    """What the scheduler needs from its host (the core's ``Maintenance`` provides it)."""

    def maintenance_context(self) -> JobContext: ...


def parse_schedules(cron: CronConfig) -> dict[str, CronExpression]:
    """Every job's schedule, parsed. Raises ConfigError naming the key of a malformed or never-firing one."""
    out: dict[str, CronExpression] = {}
    for job in JOB_NAMES:
        key = SCHEDULE_KEYS[job]
        text = getattr(cron, key)
        try:
            expr = CronExpression.parse(text)
        except ValidationError as exc:
            raise ConfigError(f"config key 'cron.{key}': {exc}") from exc
        if expr.next_after(time.time(), dt.UTC) is None:
            raise ConfigError(f"config key 'cron.{key}': {text!r} never fires")
        out[job] = expr
    return out


class Scheduler:
    """Decides and runs due maintenance jobs for one store. Not a thread: the host calls ``tick()``.

    ``clock`` gives the current Unix time (injectable for tests); ``tz`` is the zone the schedules are
    read in (default: the machine's local zone, like cron); ``since`` overrides the baseline of jobs
    that never ran. Raises ConfigError for a bad schedule.
    """

    def __init__(
        self,
        api: MaintenanceHost,
        cron: CronConfig,
        *,
        clock: Callable[[], float] = time.time,
        tz: dt.tzinfo | None = None,
        since: float | None = None,
        retry_after_s: float = 600.0,
        lease_s: float = 3600.0,
    ):
        self._api = api
        self._schedules = parse_schedules(cron)
        self._clock = clock
        self._tz = tz
        self._since = since
        self._retry_after_s = retry_after_s
        self._lease_s = lease_s

    @property
    def schedules(self) -> dict[str, CronExpression]:
        return dict(self._schedules)

    def _log(self) -> RunLog:
        return RunLog(self._api.maintenance_context().tier2.db)

    def _baseline(self, log: RunLog, job: str) -> float:
        last_ok = log.last(job, status="ok")
        if last_ok is not None:
            return last_ok.started_at
        return self._since if self._since is not None else log.tracking_since()

    def next_run(self, job: str) -> float | None:
        """The fire time that makes ``job`` due: the first one after its last successful run (it may lie
        in the past: the job is overdue). None if the schedule never fires again. Raises ValidationError
        for an unknown job."""
        return self._schedules[check_job(job)].next_after(self._baseline(self._log(), job), self._tz)

    def _blocked(self, log: RunLog, job: str, at: float) -> str | None:
        last = log.last(job)
        if last is None:
            return None
        if last.status == "running" and last.started_at > at - self._lease_s:
            return "running elsewhere"
        if last.status == "failed" and (last.finished_at or last.started_at) > at - self._retry_after_s:
            return "failed recently; retried later"
        return None

    def due(self, now: float | None = None) -> list[str]:
        """The jobs to run at ``now`` (default: the clock), in the order they run."""
        at = self._clock() if now is None else now
        log = self._log()
        out = []
        for job in JOB_NAMES:
            fire = self._schedules[job].next_after(self._baseline(log, job), self._tz)
            if fire is not None and fire <= at and self._blocked(log, job, at) is None:
                out.append(job)
        return out

    def tick(
        self,
        now: float | None = None,
        progress: JobProgress | None = None,
        stop: Callable[[], bool] | None = None,
    ) -> dict[str, dict[str, Any]]:
        """Run every due job; returns each one's run record (``status`` ok / failed / skipped). Once
        ``stop()`` is true no further job starts (the rest stay due).

        A job failing with a HermesMemoryError is recorded and reported, and the other jobs still run;
        any other exception is a bug and propagates (after its run was recorded as failed).
        """
        at = self._clock() if now is None else now
        results: dict[str, dict[str, Any]] = {}
        for job in self.due(at):
            if stop is not None and stop():
                break
            ctx = self._api.maintenance_context()
            started = at if now is not None else self._clock()
            bound = None if progress is None else _bind(progress, job)
            record = run_job(
                ctx, job, now=started, triggered_by="schedule", progress=bound, lease_s=self._lease_s
            )
            if record is None:
                results[job] = {"job": job, "status": "skipped", "reason": "running elsewhere"}
            else:
                results[job] = record.to_dict()
        return results

    def status(self, now: float | None = None) -> dict[str, dict[str, Any]]:
        """Per job: its schedule, last run, next fire time, and whether it is due (and why not)."""
        at = self._clock() if now is None else now
        log = self._log()
        out: dict[str, dict[str, Any]] = {}
        for job in JOB_NAMES:
            last = log.last(job)
            fire = self._schedules[job].next_after(self._baseline(log, job), self._tz)
            blocked = self._blocked(log, job, at)
            out[job] = {
                "schedule": str(self._schedules[job]),
                "config_key": f"cron.{SCHEDULE_KEYS[job]}",
                "last_run": None if last is None else last.to_dict(),
                "next_run": fire,
                "due": fire is not None and fire <= at and blocked is None,
                "blocked": blocked,
            }
        return out


def _bind(progress: JobProgress, job: str) -> Callable[[int, int], None]:
    return lambda done, total: progress(job, done, total)


__all__ = ["SCHEDULE_KEYS", "MaintenanceHost", "Scheduler", "parse_schedules"]
