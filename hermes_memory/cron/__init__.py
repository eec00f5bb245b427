"""Maintenance jobs (seed 9.3): consolidate, prune, embed_queue, graph_refresh; the scheduler that runs
them on their cron schedules; and the importance (Ebbinghaus decay) model that prune and recall share."""

from __future__ import annotations

from hermes_memory.cron import importance
from hermes_memory.cron.context import JobContext
from hermes_memory.cron.expression import CronExpression
from hermes_memory.cron.jobs import JOB_NAMES, check_job, run_job
from hermes_memory.cron.scheduler import SCHEDULE_KEYS, MaintenanceHost, Scheduler
from hermes_memory.tier2.job_runs import RunLog, RunRecord

__all__ = [
    "JOB_NAMES",
    "SCHEDULE_KEYS",
    "CronExpression",
    "JobContext",
    "MaintenanceHost",
    "RunLog",
    "RunRecord",
    "Scheduler",
    "check_job",
    "importance",
    "run_job",
]
