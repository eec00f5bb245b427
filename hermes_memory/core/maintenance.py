"""The maintenance jobs (consolidate, prune, embed_queue, graph_refresh): run now or when their cron
schedule is due, their run history and schedule status. ``hermes_memory.cron`` does the work and is
imported where used: a turn never needs it, and its modules (consolidation, dedup, the graph) cost the
Hermes process ~20 ms at start."""

from __future__ import annotations

import dataclasses
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hermes_memory.core.tiers import Tiers
from hermes_memory.errors import HermesMemoryError, MaintenanceStoppedError

if TYPE_CHECKING:
    from hermes_memory.cron.context import JobContext
    from hermes_memory.cron.jobs import JobProgress
    from hermes_memory.cron.runs import RunRecord
    from hermes_memory.ingest.worker import Ingestor

log = logging.getLogger(__name__)

MAINTENANCE_ACTOR = "cron"
# Maintenance writes the queued turns first, for at most this long (the rest stay queued, not an error).
TURN_DRAIN_S = 60.0
TURN_QUEUE = "turn_queue"


@dataclass(frozen=True)
class MaintenanceReport:
    """The runs of one maintenance call: per job its run record (``RunRecord.to_dict``'s shape; a
    stuck turn queue appears as the failed run ``turn_queue``), and the names of the failed ones."""

    jobs: dict[str, dict[str, Any]]
    # Why nothing ran: another process holds the store's maintenance lock (scheduled runs only).
    skipped: str | None = None

    @property
    def failed(self) -> list[str]:
        return [name for name, run in self.jobs.items() if run["status"] == "failed"]

    def error(self) -> str:
        """What failed, one clause per failed job ('' when none did)."""
        return "; ".join(f"{name} failed: {self.jobs[name]['error']}" for name in self.failed)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"jobs": self.jobs, "failed": self.failed}
        if self.skipped is not None:
            out["skipped"] = self.skipped
        return out


class Maintenance:
    """Runs the jobs over the store-wide view of Tier 2; first writes the queued turns (bounded) so
    maintenance never reports "ok" over a stuck turn queue. Raises ConfigError when Tier 2 is off."""

    def __init__(self, tiers: Tiers, ingestor: Ingestor | None) -> None:
        self._tiers = tiers
        self._ingestor = ingestor

    def maintenance_context(self) -> JobContext:
        """The stores the jobs work on (the scheduler's host interface).

        Maintenance is store-wide: its Tier 2 is the admin view (every scope; the jobs group by scope
        and never merge across scopes). A removed fact's chunks are dropped through that view too.
        The graph is this agent's view's graph.
        """
        from hermes_memory.cron.context import JobContext

        t = self._tiers
        return JobContext(
            tier2=t.tier2().admin(), config=t.config, semantic=t.sem, graph=t.graph,
            fact_removed=None, actor=MAINTENANCE_ACTOR,
        )  # fmt: skip

    def run(
        self, names: Sequence[str], progress: JobProgress | None = None, *, now: float | None = None
    ) -> MaintenanceReport:
        """Run the named jobs in order (manual runs, each recorded); ``now`` None: each at its start."""
        from hermes_memory.cron.jobs import run_job

        ctx = self.maintenance_context()
        runs = self._turn_queue_check()
        for name in names:
            bound = None if progress is None else _bind(progress, name)
            at = time.time() if now is None else now
            record = run_job(ctx, name, now=at, triggered_by="manual", progress=bound)
            assert record is not None  # no lease for manual runs
            runs[name] = record.to_dict()
        return MaintenanceReport(runs)

    def run_due(
        self,
        progress: JobProgress | None = None,
        *,
        now: float | None = None,
        stop: Callable[[], bool] | None = None,
        build_indexes: bool = True,
    ) -> MaintenanceReport:
        """Run the jobs whose cron schedule (config ``cron``) is due at ``now`` (default: the clock),
        holding the store's maintenance lease (``tier2.leases``): while another process (of any host)
        holds it nothing runs and the report says so (``skipped``). Once ``stop()`` is true no further
        job starts. ``build_indexes=False`` leaves the vector engine's index build out of
        ``embed_queue``. Raises StorageError when the lease cannot be asked for."""
        from hermes_memory.cron.scheduler import Scheduler
        from hermes_memory.tier2.leases import JOBS

        db = self._tiers.tier2().db
        with db.lease(JOBS) as held:
            if not held:
                who = db.lease_holder(JOBS)
                return MaintenanceReport(
                    {}, skipped=f"maintenance is running in {who.words() if who else 'another process'}"
                )
            runs = self._turn_queue_check()
            host: Any = self if build_indexes else _WithoutIndexBuild(self)
            return MaintenanceReport(
                {**runs, **Scheduler(host, self._tiers.config.cron).tick(now, progress, stop)}
            )

    def runs(self, *, limit: int, job: str | None = None) -> list[RunRecord]:
        """The newest recorded runs (of ``job``, or every job), newest first."""
        from hermes_memory.cron.runs import RunLog

        return RunLog(self._tiers.tier2().db).recent(job=job, limit=limit)

    def status(self, now: float | None = None) -> dict[str, dict[str, Any]]:
        """Per job: its cron schedule, last run, next fire time and whether it is due now."""
        from hermes_memory.cron.scheduler import Scheduler

        return Scheduler(self, self._tiers.config.cron).status(now)

    def _turn_queue_check(self) -> dict[str, dict[str, Any]]:
        """Write the queued turns (bounded), then say whether any cannot be written: ``{}`` when the
        queue is healthy, else ``{"turn_queue": <a failed run record>}`` (a full disk, a file size
        limit, a turn that keeps failing)."""
        started = time.time()
        try:
            if self._ingestor is not None:
                self._ingestor.drain(deadline=time.monotonic() + TURN_DRAIN_S)
            failing, last = self._tiers.tier2().ingest_queue.failing()
        except HermesMemoryError as exc:
            return {TURN_QUEUE: _failed_run(started, exc.code, str(exc))}
        if not failing:
            return {}
        message = f"{failing} queued turn(s) could not be written and stay queued; last error: {last}"
        return {TURN_QUEUE: _failed_run(started, "storage_error", message)}


class _WithoutIndexBuild:
    """The scheduler's host with the vector engine's index build switched off (inside an agent)."""

    def __init__(self, maintenance: Maintenance) -> None:
        self._maintenance = maintenance

    def maintenance_context(self) -> JobContext:
        return dataclasses.replace(self._maintenance.maintenance_context(), build_indexes=False)


class AutoMaintenance:
    """The scheduled jobs, ticked from a store's background worker when its queues are empty (a
    long-lived agent process runs its maintenance itself; ``hermes-memory maintain --due`` remains for
    crontabs). At most one tick per ``interval_s``, the first ``interval_s`` after start, so a short
    one-shot process never starts a job. Between batches a job yields to recalls in progress and stops
    when the worker stops (the run is recorded as failed with the reason; the next run resumes). One
    process at a time per store: ``Maintenance.run_due`` holds the store's maintenance lock."""

    def __init__(
        self, maintenance: Maintenance, interval_s: float, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if interval_s <= 0:
            raise ValueError(f"interval_s must be > 0, got {interval_s}")
        self._maintenance = maintenance
        self._interval = interval_s
        self._clock = clock
        self._next = clock() + interval_s
        self._lock = threading.Lock()
        self.last: MaintenanceReport | None = None  # the last tick's report (status)
        self.last_at: float | None = None  # its wall-clock time

    @property
    def interval_s(self) -> float:
        return self._interval

    def __call__(self, stopping: Callable[[], bool]) -> bool:
        """The worker's idle task: run what is due when a tick is due. Returns False (the worker may
        sleep). Raises StorageError when the lock cannot be opened (the worker logs it)."""
        if stopping() or self._clock() < self._next:
            return False
        self._next = self._clock() + self._interval
        return self.tick(stopping)

    def tick(self, stopping: Callable[[], bool]) -> bool:
        from hermes_memory.recall.foreground import BACKGROUND_WAIT_S, RECALLS

        def progress(job: str, done: int, total: int) -> None:
            if stopping():
                raise MaintenanceStoppedError(
                    f"{job} stopped after {done} of {total}: the process is shutting down; "
                    "the next run resumes"
                )
            RECALLS.wait_until_clear(BACKGROUND_WAIT_S)  # a recall someone waits for goes first

        with self._lock:
            report = self._maintenance.run_due(progress, stop=stopping, build_indexes=False)
            self.last, self.last_at = report, time.time()
        if report.failed:
            log.warning("hermes-memory scheduled maintenance: %s", report.error())
        elif report.jobs:
            log.info("hermes-memory scheduled maintenance ran: %s", ", ".join(report.jobs))
        return False


def _failed_run(started: float, error_type: str, error: str) -> dict[str, Any]:
    """A run record (the shape of ``RunRecord.to_dict``) for the turn-queue check, which is no job."""
    finished = time.time()
    return {
        "id": None, "job": TURN_QUEUE, "triggered_by": "manual", "started_at": started,
        "finished_at": finished, "status": "failed", "result": {"error_type": error_type}, "error": error,
        "duration_s": finished - started,
    }  # fmt: skip


def _bind(progress: JobProgress, job: str) -> Callable[[int, int], None]:
    return lambda done, total: progress(job, done, total)


__all__ = ["MAINTENANCE_ACTOR", "TURN_QUEUE", "AutoMaintenance", "Maintenance", "MaintenanceReport"]
