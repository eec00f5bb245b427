"""MemoryAPI methods of the maintenance jobs: consolidate, prune, maintain (any or all jobs), their run
history and schedule status. The work is in ``hermes_memory.cron``."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from hermes_memory import validation as v
from hermes_memory.api.envelope import Envelope, run
from hermes_memory.config import Config
from hermes_memory.errors import HermesMemoryError

if TYPE_CHECKING:
    from hermes_memory.cron.context import JobContext
    from hermes_memory.cron.jobs import JobProgress
    from hermes_memory.graph.service import GraphService
    from hermes_memory.ingest.worker import Ingestor
    from hermes_memory.records import Fact
    from hermes_memory.tier2 import Tier2
    from hermes_memory.tier3.semantic import SemanticMemory

# ``hermes_memory.cron`` is imported in the methods that run jobs: a turn never does, and the jobs'
# modules (consolidation, dedup, the graph) cost the Hermes process ~20 ms at start.

MAINTENANCE_ACTOR = "cron"
# Maintenance writes the queued turns first, for at most this long (the rest stay queued, not an error).
_TURN_DRAIN_S = 60.0
TURN_QUEUE = "turn_queue"


class MaintenanceMethods:
    """Mixed into MemoryAPI; expects ``_tier2()``, ``_on_fact_change``, ``_sem``, ``_graph_service``,
    ``config`` and ``enabled_tiers()``."""

    config: Config
    _sem: SemanticMemory | None
    _graph_service: GraphService | None
    _ingestor: Ingestor | None

    def _tier2(self) -> Tier2:
        raise NotImplementedError

    def _on_fact_change(self, fact: Fact, *, removed: bool = False) -> None:
        raise NotImplementedError

    def enabled_tiers(self) -> list[str]:
        raise NotImplementedError

    def maintenance_context(self) -> JobContext:
        """The stores the maintenance jobs work on (for a Scheduler). Raises ConfigError if Tier 2 is off.

        Maintenance is store-wide: its Tier 2 is the admin view (every scope; the jobs group by scope
        and never merge across scopes). A removed fact's chunks are dropped through that view too.
        The graph is this agent's view's graph.
        """
        from hermes_memory.cron.context import JobContext

        return JobContext(
            tier2=self._tier2().admin(),
            config=self.config,
            semantic=self._sem,
            graph=self._graph_service,
            fact_removed=None,
            actor=MAINTENANCE_ACTOR,
        )

    def _maintenance_envelope(self, call: Callable[[], dict[str, Any]]) -> Envelope:
        envelope = run("multi", call, tiers=[t for t in self.enabled_tiers() if t != "tier1"])
        failed = envelope["data"].get("failed") if envelope["success"] else None
        if failed:
            # The jobs that ran keep their results in data; the envelope says the call did not fully succeed.
            runs = envelope["data"]["jobs"]
            envelope["success"] = False
            envelope["error"] = "; ".join(f"{name} failed: {runs[name]['error']}" for name in failed)
            envelope["meta"]["error_type"] = runs[failed[0]]["result"]["error_type"]
        return envelope

    def maintain(
        self, job: str | None = None, progress: JobProgress | None = None, *, now: float | None = None
    ) -> Envelope:
        """Run one maintenance job, or all of them in order (consolidate, prune, embed_queue,
        graph_refresh); each run is recorded. ``progress(job, done, total)`` follows each job.

        data: {"jobs": {name: run record}, "failed": [names]}; the envelope fails if any job failed.
        """

        def call() -> dict[str, Any]:
            from hermes_memory.cron.jobs import JOB_NAMES, check_job, run_job

            names = JOB_NAMES if job is None else (check_job(v.text("job", job, max_chars=50).strip()),)
            when = v.optional_time("now", now)
            v.optional_callback("progress", progress)
            ctx = self.maintenance_context()
            runs: dict[str, Any] = self._turn_queue_check()
            for name in names:
                bound = None if progress is None else _bind(progress, name)
                at = time.time() if when is None else when
                record = run_job(ctx, name, now=at, triggered_by="manual", progress=bound)
                assert record is not None  # no lease for manual runs
                runs[name] = record.to_dict()
            return {"jobs": runs, "failed": [n for n, r in runs.items() if r["status"] == "failed"]}

        return self._maintenance_envelope(call)

    def maintain_due(self, progress: JobProgress | None = None, *, now: float | None = None) -> Envelope:
        """Run the jobs whose cron schedule (config ``cron``) is due now — what a system crontab entry
        ``hermes-memory maintain --due`` does every few minutes. Same data shape as ``maintain``."""

        def call() -> dict[str, Any]:
            when = v.optional_time("now", now)
            v.optional_callback("progress", progress)
            from hermes_memory.cron.scheduler import Scheduler

            runs = {**self._turn_queue_check(), **Scheduler(self, self.config.cron).tick(when, progress)}
            return {"jobs": runs, "failed": [n for n, r in runs.items() if r["status"] == "failed"]}

        return self._maintenance_envelope(call)

    def _turn_queue_check(self) -> dict[str, Any]:
        """Write the queued turns (bounded), then say whether any cannot be written: ``{}`` when the
        queue is healthy, else ``{"turn_queue": <a failed run record>}`` so maintenance never reports
        "ok" over a stuck queue (a full disk, a file size limit, a turn that keeps failing)."""
        started = time.time()
        try:
            if self._ingestor is not None:
                self._ingestor.drain(deadline=time.monotonic() + _TURN_DRAIN_S)
            failing, last = self._tier2().ingest_queue.failing()
        except HermesMemoryError as exc:
            return {TURN_QUEUE: _failed_run(started, exc.code, str(exc))}
        if not failing:
            return {}
        message = f"{failing} queued turn(s) could not be written and stay queued; last error: {last}"
        return {TURN_QUEUE: _failed_run(started, "storage_error", message)}

    def _one_job(self, name: str, now: float | None) -> Envelope:
        envelope = self.maintain(name, now=now)
        if envelope["success"]:
            record = envelope["data"]["jobs"][name]
            envelope["data"] = record["result"]
            envelope["meta"]["run_id"] = record["id"]
            envelope["meta"]["duration_s"] = record["duration_s"]
        return envelope

    def consolidate(self, *, now: float | None = None) -> Envelope:
        """Merge duplicate and near-duplicate facts and alias entities, resolve single-valued conflicts.

        data: counts (duplicates_merged, near_duplicates_merged, conflicts_resolved, entities_merged, ...).
        """
        return self._one_job("consolidate", now)

    def prune(self, *, now: float | None = None) -> Envelope:
        """Delete expired and long-archived facts, archive faded ones; superseded facts always stay.

        data: counts (expired_deleted, archived_deleted, faded_archived, superseded_kept).
        """
        return self._one_job("prune", now)

    def maintenance_runs(self, limit: int = 20, job: str | None = None) -> Envelope:
        """The newest maintenance runs (what ran, when, how long, with what result), newest first."""

        def call() -> list[dict[str, Any]]:
            from hermes_memory.cron.jobs import check_job
            from hermes_memory.cron.runs import RunLog

            lim = v.positive_int("limit", limit, maximum=1000)
            name = None if job is None else check_job(v.text("job", job, max_chars=50).strip())
            return [r.to_dict() for r in RunLog(self._tier2().db).recent(job=name, limit=lim)]

        return run("tier2", call)

    def maintenance_status(self, now: float | None = None) -> Envelope:
        """Per job: its cron schedule, last run, next fire time and whether it is due now."""

        def call() -> dict[str, Any]:
            from hermes_memory.cron.scheduler import Scheduler

            return Scheduler(self, self.config.cron).status(v.optional_time("now", now))

        return run("tier2", call)


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


__all__ = ["MaintenanceMethods"]
