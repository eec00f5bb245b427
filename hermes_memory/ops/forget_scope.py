"""Forget one person (or group) completely: every row of a scope — its turns, facts, entities,
relations, timeline events, indexed chunks, queued turns and the audit entries about them — planned as
one ``ForgetPlan``, so the erasure runs as every forget does (one transaction, vectors and graph files
purged after the commit, finished by the next open after a crash)."""

from __future__ import annotations

import sqlite3

from hermes_memory.errors import ValidationError
from hermes_memory.ops.forget import ForgetPlan
from hermes_memory.tier2 import Tier2
from hermes_memory.tier2.mentions import MentionQueries

_TABLES = (("entities", "entities"), ("facts", "facts"), ("relations", "relations"),
           ("timeline", "events"), ("episodes", "episodes"), ("chunks", "chunks"))  # fmt: skip
_QUEUED = "SELECT id FROM ingest_queue WHERE coalesce(json_extract(payload, '$.scope'), 'default') = ?"


def plan_scope(conn: sqlite3.Connection, tier2: Tier2) -> ForgetPlan:
    """Everything stored in the view's own scope (and its fact scope when that is private to it).
    Raises ValidationError for the store-wide (admin) view."""
    view = tier2.view
    if view.admin:
        raise ValidationError("forgetting a scope needs a scoped view (--scope NAME)")
    scopes = {view.own, view.fact_scope} if view.fact_scope == view.own else {view.own}
    plan = ForgetPlan(target=f"scope {view.own}")
    marks = ",".join("?" * len(scopes))
    for table, plural in _TABLES:
        rows = conn.execute(f"SELECT uuid FROM {table} WHERE scope IN ({marks})", sorted(scopes))
        getattr(plan, plural).update(str(r[0]) for r in rows)
    plan.ingest_ids.update(int(r[0]) for r in conn.execute(_QUEUED, (view.own,)))
    q = MentionQueries(conn, view)
    records = plan.entities | plan.facts | plan.events | plan.episodes | plan.relations
    plan.audit_ids |= q.audit_about(records | plan.chunks)
    return plan


__all__ = ["plan_scope"]
