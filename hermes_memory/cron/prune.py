"""The ``prune`` job: forget what memory no longer needs.

1. Facts whose TTL (``expires_at``) has passed are deleted for good, their chunks unindexed through the
   host's removal path (so Tier 3 drops their vectors when the embed queue drains).
2. Active facts whose decayed importance (importance.py) fell below
   ``limits.prune_importance_threshold`` are archived — not deleted: they leave recall, stay explainable,
   and step 3 removes them a TTL later.
3. Archived facts not changed for ``limits.fact_ttl_days`` are deleted for good like expired ones.
4. ``tier2.max_facts``: when more facts than that are believed (store-wide), the least important of them
   (decayed importance, then oldest) are archived until the count is back at the cap. Curated facts (the
   mirror of MEMORY.md/USER.md, source ``memory`` or ``curated``) are never archived for the cap: the
   user keeps them in those files. The result says how many were archived (``over_cap_archived``) and,
   when curated facts alone exceed the cap, how many remain over it (``over_cap_remaining``).

Superseded facts (closed by a contradicting newer fact, ``superseded_at`` set) are never pruned: they are
the history that ``as_of``, ``fact_history`` and ``why`` answer from. Episodes (raw turns) and their chunks
are never pruned either (the seed's ``limits.session_index_max_age_days`` was removed for this reason):
episodes are the ground truth every other record can be re-derived from, and old sessions stay searchable.

Runs of the maintenance jobs older than ``RUN_HISTORY_DAYS`` leave the run history (each job's latest
successful run stays: the scheduler counts from it).

Each batch of deletions is one transaction, so an interrupted run leaves every fact either pruned (with its
chunks) or untouched, and the next run finishes the rest.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hermes_memory.cron import importance
from hermes_memory.cron.context import JobContext, Progress, batches, report
from hermes_memory.errors import NotFoundError
from hermes_memory.records import Fact
from hermes_memory.tier2.job_runs import RunLog
from hermes_memory.tier2.upkeep import FadingFact

DAY_S = 86400.0
# The run history (maintenance_runs) keeps this long; an embed run every 5 minutes is ~26k rows per quarter.
RUN_HISTORY_DAYS = 90.0


def expired_facts(ctx: JobContext, now: float) -> list[str]:
    """Facts past their TTL (superseded ones excepted), oldest expiry first."""
    return ctx.upkeep.expired(now)


def stale_archived_facts(ctx: JobContext, now: float) -> list[str]:
    """Archived facts unchanged (archiving is a change) for longer than ``limits.fact_ttl_days``."""
    cutoff = now - ctx.config.limits.fact_ttl_days * DAY_S
    return ctx.upkeep.archived_before(cutoff)


def faded_facts(ctx: JobContext, now: float) -> list[str]:
    """Active facts whose importance at ``now`` is below the configured threshold."""
    threshold = ctx.config.limits.prune_importance_threshold
    # The floor keeps salient facts above the threshold forever: only lower saliences need scoring.
    ceiling = importance.min_keeping_salience(threshold)
    return [
        f.uuid
        for f in ctx.upkeep.active_below(now, min(ceiling, 2.0))
        if importance.decayed(
            f.importance,
            f.access_count,
            f.last_accessed if f.last_accessed is not None else f.created_at,
            now,
        )
        < threshold
    ]


# Facts the cap never archives: the mirror of the curated files and the facts migrated from them.
CURATED_SOURCES = ("memory", "curated")


def over_cap_facts(ctx: JobContext, now: float) -> tuple[list[str], int]:
    """(the facts to archive to bring the believed facts down to ``tier2.max_facts``: least important
    first, then oldest; how many stay over the cap because only curated facts are left)."""
    excess = ctx.upkeep.active_count(now) - ctx.config.tier2.max_facts
    if excess <= 0:
        return [], 0
    candidates = ctx.upkeep.active_archivable(now, CURATED_SOURCES)

    def rank(f: FadingFact) -> tuple[float, float]:
        used = f.last_accessed if f.last_accessed is not None else f.created_at
        return importance.decayed(f.importance, f.access_count, used, now), f.created_at

    ranked = sorted(candidates, key=rank)
    chosen = [f.uuid for f in ranked[:excess]]
    return chosen, excess - len(chosen)


def _delete(ctx: JobContext, uuids: list[str], now: float, *, archived_only: bool) -> int:
    """Hard-delete facts (re-checked inside the transaction) and unindex their chunks."""
    facts = ctx.tier2.facts
    cutoff = now - ctx.config.limits.fact_ttl_days * DAY_S
    deleted = 0
    with ctx.tier2.db.atomic():
        for uuid in uuids:
            try:
                fact = facts.get(uuid, touch=False)
            except NotFoundError:
                continue  # already gone (another run, or the user)
            if fact.superseded_at is not None:
                continue
            if archived_only and not (fact.is_archived and fact.updated_at < cutoff):
                continue
            if not archived_only and (fact.expires_at is None or fact.expires_at > now):
                continue  # its TTL was extended meanwhile
            facts.delete(uuid, soft=False, actor=ctx.actor)
            if ctx.fact_removed is not None:
                ctx.fact_removed(fact)
            else:
                with ctx.tier2.db.atomic() as conn:
                    ctx.tier2.chunks.remove_source(conn, "fact", uuid)
            deleted += 1
    return deleted


def _archive(
    ctx: JobContext, uuids: list[str], now: float, why: Callable[[Fact], dict[str, Any] | None]
) -> int:
    """Archive the facts of ``uuids`` still active that ``why`` (re-checked inside the transaction: a
    recall between the scan and now may have reinforced one) gives a reason for, at the job's ``now``;
    the reason goes into each audit entry."""
    archived = 0
    with ctx.tier2.db.atomic() as conn:
        for uuid in uuids:
            try:
                fact = ctx.tier2.facts.get(uuid, touch=False)
            except NotFoundError:
                continue
            reason = why(fact) if fact.is_active else None
            if reason is None:
                continue
            ctx.upkeep.archive(conn, uuid, now)
            ctx.tier2.audit.record(
                conn, action="fact_delete", tier="tier2", actor=ctx.actor, target_uuid=uuid,
                diff={"soft": True, **reason},
            )  # fmt: skip
            archived += 1
    return archived


def _faded(ctx: JobContext, now: float) -> Callable[[Fact], dict[str, Any] | None]:
    threshold = ctx.config.limits.prune_importance_threshold

    def why(fact: Fact) -> dict[str, Any] | None:
        score = importance.score(fact, now)
        return {"reason": "faded", "importance": round(score, 6)} if score < threshold else None

    return why


def _over_cap(ctx: JobContext) -> Callable[[Fact], dict[str, Any] | None]:
    reason = {"reason": "over_cap", "max_facts": ctx.config.tier2.max_facts}
    return lambda fact: reason


def run(ctx: JobContext, *, now: float, progress: Progress | None = None) -> dict[str, Any]:
    """Run the whole job; returns counts. Raises StorageError if Tier 2 fails (done batches stay done).

    Order matters for idempotence: facts archived here as faded are archived at ``now``, so the TTL
    step that follows never deletes them in the same run.
    """
    counts = {"expired_deleted": 0, "faded_archived": 0, "archived_deleted": 0, "over_cap_archived": 0}
    expired = expired_facts(ctx, now)
    total, done = len(expired), 0
    report(progress, done, total)
    for part in batches(expired):
        counts["expired_deleted"] += _delete(ctx, list(part), now, archived_only=False)
        done += len(part)
        report(progress, done, total)
    faded = faded_facts(ctx, now)
    total += len(faded)
    for part in batches(faded):
        counts["faded_archived"] += _archive(ctx, list(part), now, _faded(ctx, now))
        done += len(part)
        report(progress, done, total)
    over, remaining = over_cap_facts(ctx, now)
    total += len(over)
    for part in batches(over):
        counts["over_cap_archived"] += _archive(ctx, list(part), now, _over_cap(ctx))
        done += len(part)
        report(progress, done, total)
    stale = stale_archived_facts(ctx, now)
    total += len(stale)
    for part in batches(stale):
        counts["archived_deleted"] += _delete(ctx, list(part), now, archived_only=True)
        done += len(part)
        report(progress, done, total)
    report(progress, total, total)
    kept = ctx.upkeep.superseded_count()
    trimmed = RunLog(ctx.tier2.db).trim(now - RUN_HISTORY_DAYS * DAY_S)
    return {**counts, "over_cap_remaining": remaining, "superseded_kept": kept, "runs_trimmed": trimmed}


__all__ = ["CURATED_SOURCES", "expired_facts", "faded_facts", "over_cap_facts", "run", "stale_archived_facts"]
