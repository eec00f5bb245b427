"""Forget one person (or group) completely: every row of a scope — its turns, facts, entities,
relations, timeline events, indexed chunks, queued turns and the audit entries about them — planned as
one ``ForgetPlan``, so the erasure runs as every forget does (one transaction, vectors and graph files
purged after the commit, finished by the next open after a crash)."""

from __future__ import annotations

import sqlite3

from hermes_memory.errors import ValidationError
from hermes_memory.ops.forget import ForgetPlan
from hermes_memory.tier2 import Tier2, people
from hermes_memory.tier2.mentions import MentionQueries

_PLAN = {"entities": "entities", "facts": "facts", "relations": "relations", "timeline": "events",
         "episodes": "episodes", "chunks": "chunks"}  # fmt: skip


def plan_scope(conn: sqlite3.Connection, tier2: Tier2) -> ForgetPlan:
    """Everything stored in the view's own scope (facts a pool member wrote into a shared pool stay
    there: they are the pool's). Raises ValidationError for the store-wide (admin) view."""
    view = tier2.view
    if view.admin:
        raise ValidationError("forgetting a scope needs a scoped view (--scope NAME)")
    plan = ForgetPlan(target=f"scope {view.own}", scope=view.own)
    for table, plural in _PLAN.items():
        getattr(plan, plural).update(people.scope_uuids(conn, table, [view.own]))
    plan.ingest_ids.update(people.queued_turns(conn, view.own))
    q = MentionQueries(conn, view)
    records = plan.entities | plan.facts | plan.events | plan.episodes | plan.relations
    plan.audit_ids |= q.audit_about(records | plan.chunks)
    return plan


__all__ = ["plan_scope"]
