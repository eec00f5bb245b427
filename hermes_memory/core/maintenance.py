"""The maintenance jobs (consolidate, prune, embed_queue, graph_refresh): run now or when their cron
schedule is due, their run history and schedule status. ``hermes_memory.cron`` does the work and is
imported where used: a turn never needs it, and its modules (consolidation, dedup, the graph) cost the
Hermes process ~20 ms at start."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hermes_memory.core.tiers import Tiers
from hermes_memory.errors import HermesMemoryError

if TYPE_CHECKING:
    from hermes_memory.cron.context import JobContext
    from hermes_memory.cron.jobs import JobProgress
    from hermes_memory.cron.runs import RunRecord
    from hermes_memory.ingest.worker import Ingestor

MAINTENANCE_ACTOR = "cron"
# Maintenance writes the queued turns first, for at most this long (the rest stay queued, not an error).
TURN_DRAIN_S = 60.0
TURN_QUEUE = "turn_queue"


@dataclass(frozen=True)
class MaintenanceReport:
    """The runs of one maintenance call: per job its run record (``RunRecord.to_dict``'s shape; a
    stuck turn queue appears as the failed run ``turn_queue``), and the names of the failed ones."""

    jobs: dict[str, dict[str, Any]]

    @property
    def failed(self) -> list[str]:
        return [name for name, run in self.jobs.items() if run["status"] == "failed"]

    def error(self) -> str:
        """What failed, one clause per failed job ('' when none did)."""
        return "; ".join(f"{name} failed: {self.jobs[name]['error']}" for name in self.failed)

    def to_dict(self) -> dict[str, Any]:
        return {"jobs": self.jobs, "failed": self.failed}


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

    def run_due(self, progress: JobProgress | None = None, *, now: float | None = None) -> MaintenanceReport:
        """Run the jobs whose cron schedule (config ``cron``) is due at ``now`` (default: the clock)."""
        from hermes_memory.cron.scheduler import Scheduler

        runs = self._turn_queue_check()
        return MaintenanceReport({**runs, **Scheduler(self, self._tiers.config.cron).tick(now, progress)})

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


__all__ = ["MAINTENANCE_ACTOR", "TURN_QUEUE", "Maintenance", "MaintenanceReport"]
