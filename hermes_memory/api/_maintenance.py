"""MemoryAPI's maintenance jobs: run them (all, the due ones, one), their runs and schedule."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from hermes_memory import validation as v
from hermes_memory.api._edge import EnvelopeEdge
from hermes_memory.api.envelope import Envelope

if TYPE_CHECKING:
    from hermes_memory.cron.context import JobContext
    from hermes_memory.cron.jobs import JobProgress


class MaintenanceAPI(EnvelopeEdge):
    """The maintenance jobs (``Memory.maintenance``)."""

    def maintenance_context(self) -> JobContext:
        """The stores the maintenance jobs work on (for a Scheduler). Raises ConfigError if Tier 2 is off.

        Maintenance is store-wide: its Tier 2 is the admin view (every scope; the jobs group by scope
        and never merge across scopes). A removed fact's chunks are dropped through that view too.
        The graph is this agent's view's graph.
        """
        return self._core.maintenance.maintenance_context()

    def maintain(
        self, job: str | None = None, progress: JobProgress | None = None, *, now: float | None = None
    ) -> Envelope:
        """Run one maintenance job, or all of them in order (consolidate, prune, embed_queue,
        graph_refresh); each run is recorded. ``progress(job, done, total)`` follows each job.

        data: {"jobs": {name: run record}, "failed": [names]}; the envelope fails if any job failed.
        """

        def call() -> dict[str, Any]:
            from hermes_memory.cron.jobs import JOB_NAMES

            names = JOB_NAMES if job is None else (_job_name(job),)
            when = v.optional_time("now", now)
            v.optional_callback("progress", progress)
            return self._core.maintenance.run(names, progress, now=when).to_dict()

        return self._maintenance_envelope(call)

    def maintain_due(self, progress: JobProgress | None = None, *, now: float | None = None) -> Envelope:
        """Run the jobs whose cron schedule (config ``cron``) is due now — what a system crontab entry
        ``hermes-memory maintain --due`` does every few minutes. Same data shape as ``maintain``."""

        def call() -> dict[str, Any]:
            when = v.optional_time("now", now)
            v.optional_callback("progress", progress)
            return self._core.maintenance.run_due(progress, now=when).to_dict()

        return self._maintenance_envelope(call)

    def consolidate(self, *, now: float | None = None) -> Envelope:
        """Merge duplicate and near-duplicate facts and alias entities, resolve single-valued conflicts.

        data: counts (duplicates_merged, near_duplicates_merged, conflicts_resolved, entities_merged, ...).
        """
        return self._one_job("consolidate", now)

    def prune(self, *, now: float | None = None) -> Envelope:
        """Delete expired and long-archived facts, archive faded ones and, past ``tier2.max_facts``
        believed facts, the least important non-curated ones; superseded facts always stay.

        data: counts (expired_deleted, archived_deleted, faded_archived, over_cap_archived,
        over_cap_remaining, superseded_kept).
        """
        return self._one_job("prune", now)

    def maintenance_runs(self, limit: int = 20, job: str | None = None) -> Envelope:
        """The newest maintenance runs (what ran, when, how long, with what result), newest first."""

        def call() -> list[dict[str, Any]]:
            lim = v.positive_int("limit", limit, maximum=1000)
            name = None if job is None else _job_name(job)
            return [r.to_dict() for r in self._core.maintenance.runs(limit=lim, job=name)]

        return self._run("tier2", call)

    def maintenance_status(self, now: float | None = None) -> Envelope:
        """Per job: its cron schedule, last run, next fire time and whether it is due now."""
        return self._run("tier2", lambda: self._core.maintenance.status(v.optional_time("now", now)))

    def _maintenance_envelope(self, call: Callable[[], dict[str, Any]]) -> Envelope:
        envelope = self._run("multi", call, tiers=[t for t in self.enabled_tiers() if t != "tier1"])
        failed = envelope["data"].get("failed") if envelope["success"] else None
        if failed:
            # The jobs that ran keep their results in data; the envelope says the call did not fully succeed.
            runs = envelope["data"]["jobs"]
            envelope["success"] = False
            envelope["error"] = "; ".join(f"{name} failed: {runs[name]['error']}" for name in failed)
            envelope["meta"]["error_type"] = runs[failed[0]]["result"]["error_type"]
        return envelope

    def _one_job(self, name: str, now: float | None) -> Envelope:
        envelope = self.maintain(name, now=now)
        if envelope["success"]:
            record = envelope["data"]["jobs"][name]
            envelope["data"] = record["result"]
            envelope["meta"]["run_id"] = record["id"]
            envelope["meta"]["duration_s"] = record["duration_s"]
        return envelope


def _job_name(value: Any) -> str:
    """A maintenance job's name (ValidationError naming the jobs for any other)."""
    from hermes_memory.cron.jobs import check_job  # cron is imported only when maintenance runs

    return check_job(v.text("job", value, max_chars=50).strip())


__all__ = ["MaintenanceAPI"]
