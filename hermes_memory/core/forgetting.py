"""Forgetting (GDPR erasure): one record, or an entity with every mention of it, from every tier.

A confirmed forget deletes the Tier 2 rows and records what is left to purge outside that transaction
(curated entries, vectors, the vector engine's files, the graph, compaction) in the same transaction;
the steps then run, and a crash between them leaves a record the next open finishes.
``hermes_memory.ops`` is imported where used: a turn never needs it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_memory.core.tiers import Tiers
from hermes_memory.errors import HermesMemoryError, NotFoundError, ValidationError, VectorStoreBusyError
from hermes_memory.tier1.snapshot import CuratedSnapshot

if TYPE_CHECKING:
    import sqlite3

    from hermes_memory.ops import erasure as _erasure_t
    from hermes_memory.ops import erasure_follow as _follow_t
    from hermes_memory.ops.forget import ForgetPlan
    from hermes_memory.tier2 import Tier2

log = logging.getLogger(__name__)

Planner = Callable[["sqlite3.Connection", "Tier2"], "ForgetPlan"]


@dataclass(frozen=True)
class ForgetOutcome:
    """A forget's preview (``confirmed`` False: nothing changed, the curated entries it would remove
    are listed) or its result (counts only; ``unfinished``: steps another process must let finish)."""

    confirmed: bool
    target: str
    counts: dict[str, Any]
    curated_entries: dict[str, list[str]] = field(default_factory=dict)
    related: list[dict[str, Any]] = field(default_factory=list)
    unfinished: list[str] = field(default_factory=list)
    # Set when the forget is large (more than a few turns): it then needs ``confirm_large`` too.
    warning: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"confirmed": self.confirmed, "target": self.target, "counts": self.counts}
        if self.warning:
            out["warning"] = self.warning
        if not self.confirmed:
            out["curated_entries"] = self.curated_entries
        if self.related:
            out["related"] = self.related
        if self.unfinished:
            out["unfinished"] = self.unfinished
        return out


class Forgetting:
    """Forget and the erasure records behind it. ``forget_recall_caches`` drops what recall caches
    (a participant cache may hold a forgotten name)."""

    def __init__(self, tiers: Tiers, forget_recall_caches: Callable[[], None]) -> None:
        self._tiers = tiers
        self._forget_recall_caches = forget_recall_caches
        # Following erasures recorded elsewhere (``ops.erasure_follow``): this home's cursor (read from
        # its file on first use) and the store's data version it was last brought up to date at.
        self._follow_lock = threading.Lock()
        self._cursor: _follow_t.Cursor | None = None
        self._followed_at: int | None = None

    def forget(
        self, id: str, *, confirm: bool, include: bool | Sequence[str] = False, confirm_large: bool = False
    ) -> ForgetOutcome:
        """Forget one fact, episode, timeline event, relation or entity (an entity: every mention);
        a preview unless ``confirm``; a forget of more than ``LARGE_TURNS`` turns also needs
        ``confirm_large``. Raises ValidationError for an empty id, an unknown related name or a large
        forget without ``confirm_large``, NotFoundError for an unknown id, VectorStoreBusyError (nothing
        deleted) while another process holds the vector store, ConfigError when Tier 2 is off."""
        from hermes_memory.ops import forget as _forget

        curated = self._tiers.curated
        return self._run(
            lambda conn, t2: _forget.plan_uuid(conn, t2, curated, id, include=include), confirm, confirm_large
        )

    def forget_entity(
        self, name: str, *, confirm: bool, include: bool | Sequence[str] = False, confirm_large: bool = False
    ) -> ForgetOutcome:
        """Forget an entity by name or alias: every row, entry, vector, graph node and queued turn that
        mentions it (``include``: related names too); a preview unless ``confirm``. Raises as ``forget``
        (NotFoundError when nothing mentions it)."""
        from hermes_memory.ops import forget as _forget

        curated = self._tiers.curated
        return self._run(
            lambda conn, t2: _forget.plan_entity(conn, t2, curated, name, include=include),
            confirm,
            confirm_large,
        )

    def forget_scope(self, *, confirm: bool) -> ForgetOutcome:
        """Forget everything of this view's own scope (one person or group completely; see
        ``ops.forget_scope``); a preview unless ``confirm``. Raises NotFoundError when the scope holds
        nothing, ValidationError for the admin view, VectorStoreBusyError as ``forget``."""
        from hermes_memory.ops import forget_scope as _forget_scope

        return self._run(lambda conn, t2: _forget_scope.plan_scope(conn, t2), confirm)

    def finish_erasures(self) -> list[dict[str, Any]]:
        """Finish every recorded erasure (cheap when none is unfinished): [{id, target, left: [steps
        still to do]}]. Raises StorageError (the failing step stays recorded)."""
        from hermes_memory.ops import erasure as _erasure

        if not _erasure.unfinished(self._tiers.tier2()):
            return []
        return _erasure.finish(self._erasure_parts())

    def finish_on_open(self) -> None:
        """A forget a crash interrupted is finished by the next process that opens the store (one small
        indexed query when there is none), and this home follows the forgets recorded since it last
        looked (``follow``). A step that fails stays recorded (``doctor`` reports it, the next open or
        ``doctor --repair`` retries), so the store still opens."""
        try:
            if self._tiers.tier2().has_unfinished_erasures():
                self.finish_erasures()
            self.follow()
        except HermesMemoryError as exc:
            log.warning("hermes-memory: a forget could not be finished or followed here yet: %s", exc)

    def follow(self) -> None:
        """Apply to this home's own files and caches every erasure recorded since it last looked (by
        another host of a shared store, or another process of this one). Cheap when nothing was
        committed since the last call (one small read), and one indexed query when no forget was.
        Raises StorageError when a step fails (this home follows again on the next call)."""
        t2 = self._tiers.tier2()
        version = t2.db.data_version()
        # Its reads never wait for a write transaction of this process (a recall runs it first).
        with self._follow_lock, t2.db.reading():
            if version == self._followed_at:
                return
            from hermes_memory.tier2.graph_marks import newest_erasure

            cursor = self._cursor_now()
            newest = newest_erasure(t2.db)
            if newest != cursor.id:
                cursor = self._cursor_now(reread=True)  # another process of this home may have followed
            if newest != cursor.id:
                from hermes_memory.ops import erasure_follow

                followed = erasure_follow.follow(self._erasure_parts(), cursor)
                self._move_cursor(followed)
                self._forget_recall_caches()
                if followed.id != newest:
                    return  # a step must be retried: not marked as up to date
            self._followed_at = version

    def _cursor_now(self, *, reread: bool = False) -> _follow_t.Cursor:
        from hermes_memory.ops import erasure_follow

        if self._cursor is None or reread:
            self._cursor = erasure_follow.read_cursor(self._cursor_path())
        return self._cursor

    def _move_cursor(self, cursor: _follow_t.Cursor) -> None:
        from hermes_memory.ops import erasure_follow

        if cursor != self._cursor:
            erasure_follow.write_cursor(self._cursor_path(), cursor)
            self._cursor = cursor

    def _cursor_path(self) -> Path:
        from hermes_memory.ops import erasure_follow

        return erasure_follow.cursor_path(self._tiers.config.db_path)

    def _followed_own(self, erasure_id: int) -> None:
        """After this home's own forget: its steps ran here, so the cursor moves past it without
        matching again, unless another erasure came before it that this home has not followed."""
        from hermes_memory.ops import erasure_follow
        from hermes_memory.tier2 import erasures

        with self._follow_lock:
            cursor = self._cursor_now(reread=True)
            rows = erasures.recorded_after(self._tiers.tier2().db, cursor.id, limit=2)
            if [r.id for r in rows] == [erasure_id]:
                self._move_cursor(erasure_follow.Cursor(rows[0].id, rows[0].started_at))
                return
            self._followed_at = None
        self.follow()

    # -- the steps ----------------------------------------------------------------------------------
    def _run(self, planner: Planner, confirm: bool, confirm_large: bool = False) -> ForgetOutcome:
        from hermes_memory.ops import erasure as _erasure
        from hermes_memory.ops import forget as _forget

        t2 = self._tiers.tier2()
        actor = self._tiers.actor
        t2.ingest_queue.absorb()  # turns still in the inbox must be found (and forgotten) too
        if confirm:
            self.finish_erasures()  # one a crash interrupted is finished before a new one starts
            self._refuse_when_engine_busy()
        with t2.db.atomic() as conn:
            plan = planner(conn, t2)
            if plan.empty():
                raise NotFoundError("nothing in memory matches; nothing to forget")
            warning = _forget.large_warning(plan)
            if confirm and warning and not confirm_large:
                raise ValidationError(f"{warning}; nothing was deleted")
            if confirm:
                # What is left to purge after this transaction is recorded in it: a crash after the
                # commit leaves a record that the next open (or doctor --repair) finishes.
                erasure_id = _erasure.record(conn, plan, actor=actor, scope=t2.view.own)
                _forget.execute(conn, t2, plan, actor=actor)
        if not confirm:
            return ForgetOutcome(
                confirmed=False, target=plan.target, counts=plan.counts(),
                curated_entries={s: list(e) for s, e in plan.curated.items()}, related=plan.related,
                warning=warning,
            )  # fmt: skip
        left = sorted({step for r in self.finish_erasures() for step in r["left"]})
        self._followed_own(erasure_id)
        self._forget_recall_caches()
        return ForgetOutcome(
            confirmed=True, target=plan.target, counts=plan.counts(), related=plan.related, unfinished=left
        )

    def _refuse_when_engine_busy(self) -> None:
        """A forget needs to rewrite the vector engine's files: refuse before deleting anything while
        another process holds them (that process can run the forget, or the next one after it closes)."""
        sem = self._tiers.sem
        holder = None if sem is None else sem.engine_holder()
        if holder is not None:
            raise VectorStoreBusyError(
                f"the vector store is open in another process{f' (pid {holder})' if holder else ''}; nothing "
                "was deleted. Forget from that process (e.g. the memory tool's forget action) or close it "
                "and run forget again"
            )

    def _erasure_parts(self) -> _erasure_t.Parts:
        from hermes_memory.ops import erasure as _erasure

        tiers = self._tiers

        def recapture() -> None:  # the frozen curated snapshot follows a removed entry
            if tiers.curated is not None:
                tiers.snapshot = CuratedSnapshot.capture(tiers.curated)

        return _erasure.Parts(
            tier2=tiers.tier2(), curated=tiers.curated, semantic=tiers.sem, graph=tiers.graph,
            graph_path=tiers.config.graph_path, seen_path=tiers.config.seen_path, on_curated=recapture,
        )  # fmt: skip


__all__ = ["ForgetOutcome", "Forgetting"]
