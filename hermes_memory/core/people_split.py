"""Splitting a store that mixed people: what a gateway stored in the one local scope before people had
their own scopes goes to each person's or group's scope, by the identity recorded with each turn.

Each gateway turn's episodes carry the metadata the provider recorded (``platform``, ``user_id``,
``chat_id``, ``chat_type``, ``thread_id``); the scope is the one ``audience`` gives that identity. A
gateway turn without a user id or chat id, a session whose turns name several scopes, and a fact or
event drawn from turns of several scopes cannot be attributed: they go to ``quarantine``, which no
gateway session reads. Facts and timeline events follow their source turns (or their session); chunks
follow their source and are queued for re-embedding (a vector carries its chunk's scope). Turns of the
local user (the CLI, no gateway platform), entities and relations stay where they are: the local scope
is never recalled into a gateway session. Nothing is deleted; one transaction.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Any

from hermes_memory.audience import LOCAL_PLATFORMS, QUARANTINE_SCOPE, Identity, Sharing, audience_of
from hermes_memory.errors import ConfigError
from hermes_memory.tier2.chunks import CHUNKS_COLLECTION
from hermes_memory.tier2.store import Tier2


@dataclass(frozen=True)
class SplitReport:
    """Rows moved per table and target scope, and rows left in the local scope."""

    moved: dict[str, dict[str, int]]  # table -> scope -> rows
    kept: dict[str, int]  # table -> rows left in the local scope
    dry_run: bool

    @property
    def quarantined(self) -> int:
        return sum(scopes.get(QUARANTINE_SCOPE, 0) for scopes in self.moved.values())

    def to_dict(self) -> dict[str, Any]:
        return {
            "moved": self.moved,
            "kept": self.kept,
            "quarantined": self.quarantined,
            "dry_run": self.dry_run,
        }

    def lines(self) -> list[str]:
        verb = "would move" if self.dry_run else "moved"
        out = []
        for table, scopes in self.moved.items():
            for scope, count in sorted(scopes.items()):
                out.append(f"{verb} {count} {table} to {scope}")
        out += [f"kept {count} {table} in the local scope" for table, count in self.kept.items() if count]
        if self.quarantined:
            out.append(
                f"{self.quarantined} rows could not be attributed and are in scope '{QUARANTINE_SCOPE}' "
                f"(no gateway session reads it): read them with `hermes-memory --scope {QUARANTINE_SCOPE} "
                "export`, move them with `hermes-memory people assign SESSION_ID SCOPE`"
            )
        return out or ["nothing to split: no gateway turns in the local scope"]


def _target(metadata: str | None, sharing: Sharing) -> str | None:
    """The scope a gateway turn belongs to (None: the local user's, it stays)."""
    try:
        meta = json.loads(metadata or "{}")
    except json.JSONDecodeError:
        return None
    if not isinstance(meta, dict) or meta.get("source") != "hermes":
        return None
    identity = Identity.from_kwargs(meta)
    if identity.platform in LOCAL_PLATFORMS and identity.user_id is None:
        return None
    if identity.user_id is None and identity.chat_id is None:
        return QUARANTINE_SCOPE
    try:
        return audience_of(identity, sharing, per_user=True).scope or QUARANTINE_SCOPE
    except ConfigError:
        return QUARANTINE_SCOPE


def _one(targets: set[str | None]) -> str | None:
    """The scope of a record drawn from rows with these targets (None: nothing moved)."""
    if not targets or targets == {None}:
        return None
    return targets.pop() if len(targets) == 1 else QUARANTINE_SCOPE


def split(tier2: Tier2, local_scope: str, sharing: Sharing, *, dry_run: bool = False) -> SplitReport:
    """Move the gateway rows of ``local_scope`` to their people's and groups' scopes (see the module).
    Raises StorageError when the store cannot be written."""
    store = tier2.admin()
    moved: dict[str, Counter[str]] = {t: Counter() for t in ("episodes", "facts", "timeline", "chunks")}
    kept: Counter[str] = Counter()
    with store.db.atomic() as conn:
        episode: dict[str, str | None] = {}
        session_of: dict[str, str] = {}
        by_session: dict[str, set[str | None]] = {}
        rows = conn.execute("SELECT uuid, session_id, metadata FROM episodes WHERE scope = ?", (local_scope,))
        for uuid, sid, metadata in rows.fetchall():
            episode[uuid], session_of[uuid] = _target(metadata, sharing), sid
            by_session.setdefault(sid, set()).add(episode[uuid])
        session = {sid: _one(set(targets)) for sid, targets in by_session.items()}
        for uuid, target in episode.items():
            if target is not None and session.get(session_of[uuid]) == QUARANTINE_SCOPE:
                target = QUARANTINE_SCOPE  # a session that mixes scopes is quarantined whole
                episode[uuid] = target
        moves: dict[str, dict[str, str]] = {"episodes": {u: t for u, t in episode.items() if t is not None}}
        for table in ("facts", "timeline"):
            moves[table] = {}
            sid_col = "source_id" if table == "facts" else "session_id"
            rows = conn.execute(
                f"SELECT uuid, source_episodes, {sid_col} FROM {table} WHERE scope = ?", (local_scope,)
            )
            for uuid, sources, sid in rows.fetchall():
                ids = _uuids(sources)
                target = _one({episode.get(e) for e in ids if e in episode}) if ids else session.get(sid)
                if target is not None:
                    moves[table][uuid] = target
        moves["chunks"] = {}
        owners = {**moves["episodes"], **moves["facts"], **moves["timeline"]}
        rows = conn.execute(
            "SELECT uuid, source_uuid, session_id FROM chunks WHERE scope = ?", (local_scope,)
        )
        for uuid, source, sid in rows.fetchall():
            target = owners.get(source) if source in owners else session.get(sid)
            if target is not None:
                moves["chunks"][uuid] = target
        for table, targets in moves.items():
            total = conn.execute(f"SELECT count(*) FROM {table} WHERE scope = ?", (local_scope,)).fetchone()[
                0
            ]
            kept[table] = total - len(targets)
            for uuid, target in targets.items():
                moved[table][target] += 1
                if not dry_run:
                    conn.execute(f"UPDATE {table} SET scope = ? WHERE uuid = ?", (target, uuid))
                    if table == "chunks":
                        store.embed_queue.enqueue(conn, CHUNKS_COLLECTION, uuid, "upsert")
    return SplitReport({t: dict(c) for t, c in moved.items() if c}, dict(kept), dry_run)


def assign(tier2: Tier2, session_id: str, scope: str) -> dict[str, int]:
    """Move one quarantined session (its turns, the facts, events and chunks drawn from it) to
    ``scope``; returns rows moved per table. Raises StorageError."""
    store = tier2.admin()
    out: dict[str, int] = {}
    with store.db.atomic() as conn:
        uuids = [
            r[0]
            for r in conn.execute(
                "SELECT uuid FROM episodes WHERE scope = ? AND session_id = ?", (QUARANTINE_SCOPE, session_id)
            )
        ]
        marks = ",".join("?" * len(uuids))
        out["episodes"] = conn.execute(
            f"UPDATE episodes SET scope = ? WHERE scope = ? AND uuid IN ({marks})",
            (scope, QUARANTINE_SCOPE, *uuids),
        ).rowcount
        for table, col in (("facts", "source_id"), ("timeline", "session_id")):
            rows = conn.execute(
                f"SELECT uuid, source_episodes, {col} FROM {table} WHERE scope = ?", (QUARANTINE_SCOPE,)
            ).fetchall()
            ids = [
                u
                for u, src, sid in rows
                if (set(_uuids(src)) and set(_uuids(src)) <= set(uuids))
                or (not _uuids(src) and sid == session_id)
            ]
            for uuid in ids:
                conn.execute(f"UPDATE {table} SET scope = ? WHERE uuid = ?", (scope, uuid))
            out[table] = len(ids)
        chunks = [
            r[0]
            for r in conn.execute(
                f"SELECT uuid FROM chunks WHERE scope = ? AND (session_id = ? OR source_uuid IN ({marks}))",
                (QUARANTINE_SCOPE, session_id, *uuids),
            )
        ]
        for uuid in chunks:
            conn.execute("UPDATE chunks SET scope = ? WHERE uuid = ?", (scope, uuid))
            store.embed_queue.enqueue(conn, CHUNKS_COLLECTION, uuid, "upsert")
        out["chunks"] = len(chunks)
    return out


def _uuids(value: str | None) -> list[str]:
    try:
        data = json.loads(value or "[]")
    except json.JSONDecodeError:
        return []
    return [str(x) for x in data] if isinstance(data, list) else []


__all__ = ["SplitReport", "assign", "split"]
