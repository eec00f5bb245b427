"""The durable record of maintenance runs; the store lives in Tier 2 (``tier2.job_runs``)."""

from __future__ import annotations

from hermes_memory.tier2.job_runs import TRIGGERS, RunLog, RunRecord

__all__ = ["TRIGGERS", "RunLog", "RunRecord"]
