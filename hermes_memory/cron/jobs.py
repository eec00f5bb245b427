"""The maintenance jobs by name, and running one with its run recorded."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol

from hermes_memory._names import JOB_NAMES
from hermes_memory.cron import consolidate, embed_queue, graph_refresh, prune
from hermes_memory.cron.context import JobContext, Progress
from hermes_memory.errors import HermesMemoryError, ValidationError
from hermes_memory.tier2.job_runs import RunLog, RunRecord


class JobFn(Protocol):
    def __call__(
        self, ctx: JobContext, *, now: float, progress: Progress | None = None
    ) -> dict[str, Any]: ...


# The order `maintain --all` runs them in: merges and prunes queue vector writes and deletes, which the
# embed job then drains; the graph is rebuilt last, after entity merges.
_JOBS: dict[str, JobFn] = {
    "consolidate": consolidate.run,
    "prune": prune.run,
    "embed_queue": embed_queue.run,
    "graph_refresh": graph_refresh.run,
}
JobProgress = Callable[[str, int, int], None]


def check_job(name: str) -> str:
    """``name`` if it is a job; raises ValidationError listing the jobs otherwise."""
    if name not in _JOBS:
        raise ValidationError(f"unknown maintenance job {name!r}; jobs: {', '.join(JOB_NAMES)}")
    return name


def run_job(
    ctx: JobContext,
    name: str,
    *,
    now: float | None = None,
    triggered_by: str = "manual",
    progress: Progress | None = None,
    lease_s: float | None = None,
) -> RunRecord | None:
    """Run one job and record it in ``maintenance_runs``; returns the closed run record.

    Returns None when ``lease_s`` is given and another run of the job holds the lease. A job that raises
    a HermesMemoryError is recorded (and returned) as 'failed' with the message; any other exception —
    including KeyboardInterrupt — is recorded as 'failed' and re-raised. Raises ValidationError for an
    unknown job name.
    """
    job = _JOBS[check_job(name)]
    at = time.time() if now is None else now
    log = RunLog(ctx.tier2.db)
    run_id = log.start(name, at, triggered_by, lease_s=lease_s)
    if run_id is None:
        return None
    started = time.perf_counter()
    # Finished times are the run's clock plus its measured duration, so an injected clock stays coherent.
    try:
        result = job(ctx, now=at, progress=progress)
    except HermesMemoryError as exc:
        return log.finish(
            run_id, at + time.perf_counter() - started, "failed",
            result={"error_type": exc.code}, error=str(exc),
        )  # fmt: skip
    except BaseException as exc:
        log.finish(
            run_id, at + time.perf_counter() - started, "failed",
            result={"error_type": type(exc).__name__}, error=f"{type(exc).__name__}: {exc}",
        )  # fmt: skip
        raise
    return log.finish(run_id, at + time.perf_counter() - started, "ok", result=result)


__all__ = ["JOB_NAMES", "JobFn", "JobProgress", "check_job", "run_job"]
