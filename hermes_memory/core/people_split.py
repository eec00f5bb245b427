"""Splitting a store that mixed people: what a gateway stored in the one local scope before people had
their own scopes goes to each person's or group's scope, by the identity recorded with each turn.

Each gateway turn's episodes carry the metadata the provider recorded (``platform``, ``user_id``,
``chat_id``, ``chat_type``, ``thread_id``); the scope is the one ``audience`` gives that identity. A
turn whose user id cannot name a scope, the person's turns of a session whose turns name several
scopes, and a fact or event drawn from turns of several scopes cannot be attributed: they go to
``quarantine``, which no gateway session reads. Facts and timeline events follow their source turns
(or their session); chunks follow their source and are queued for re-embedding (a vector carries its
chunk's scope). Turns that name nobody (the CLI, ``hermes -z``, no user id outside a group: the local
user's, as ``audience`` keeps them), entities and relations stay where they are: the local scope is
never recalled into a person's or group's session. Nothing is deleted; one transaction.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from dataclasses import dataclass
from typing import Any

from hermes_memory.audience import QUARANTINE_SCOPE, Identity, Sharing, audience_of
from hermes_memory.errors import ConfigError
from hermes_memory.tier2 import people as rows
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
    try:
        return audience_of(Identity.from_kwargs(meta), sharing, per_user=True).scope or None
    except ConfigError:  # an id that cannot name a scope: nobody's to read
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
    moved: dict[str, Counter[str]] = {t: Counter() for t in rows.MOVED}
    kept: Counter[str] = Counter()
    with store.db.atomic() as conn:
        episode: dict[str, str | None] = {}
        session_of: dict[str, str] = {}
        by_session: dict[str, set[str | None]] = {}
        for uuid, sid, metadata in rows.episode_rows(conn, local_scope):
            episode[uuid], session_of[uuid] = _target(metadata, sharing), sid
            by_session.setdefault(sid, set()).add(episode[uuid])
        session = {sid: _one(set(targets)) for sid, targets in by_session.items()}
        for uuid, target in episode.items():
            if target is not None and session.get(session_of[uuid]) == QUARANTINE_SCOPE:
                episode[uuid] = QUARANTINE_SCOPE  # a session that mixes scopes is quarantined whole
        moves: dict[str, dict[str, str]] = {"episodes": {u: t for u, t in episode.items() if t is not None}}
        for table in ("facts", "timeline"):
            moves[table] = {}
            for uuid, sources, of in rows.derived_rows(conn, table, local_scope):
                ids = _uuids(sources)
                dest = _one({episode.get(e) for e in ids if e in episode}) if ids else session.get(of or "")
                if dest is not None:
                    moves[table][uuid] = dest
        owners = {**moves["episodes"], **moves["facts"], **moves["timeline"]}
        moves["chunks"] = {}
        for uuid, source, of in rows.derived_rows(conn, "chunks", local_scope):
            found = owners.get(source or "") or session.get(of or "")
            if found is not None:
                moves["chunks"][uuid] = found
        for table, targets in moves.items():
            kept[table] = rows.count_rows(conn, table, local_scope) - len(targets)
            for uuid, target in targets.items():
                moved[table][target] += 1
                if not dry_run:
                    _move(store, conn, table, uuid, target)
    return SplitReport({t: dict(c) for t, c in moved.items() if c}, dict(kept), dry_run)


def assign(tier2: Tier2, session_id: str, scope: str) -> dict[str, int]:
    """Move one quarantined session (its turns, the facts, events and chunks drawn from it) to
    ``scope``; returns rows moved per table. Raises StorageError."""
    store = tier2.admin()
    out: dict[str, int] = {}
    with store.db.atomic() as conn:
        turns = {u for u, sid, _ in rows.episode_rows(conn, QUARANTINE_SCOPE) if sid == session_id}
        for uuid in turns:
            _move(store, conn, "episodes", uuid, scope)
        out["episodes"] = len(turns)
        for table in ("facts", "timeline", "chunks"):
            picked = []
            for uuid, sources, sid in rows.derived_rows(conn, table, QUARANTINE_SCOPE):
                ids = set(_uuids(sources)) if table != "chunks" else {sources or ""}
                if (ids and ids <= turns) or sid == session_id:
                    picked.append(uuid)
            for uuid in picked:
                _move(store, conn, table, uuid, scope)
            out[table] = len(picked)
    return out


def _move(store: Tier2, conn: sqlite3.Connection, table: str, uuid: str, scope: str) -> None:
    rows.set_scope(conn, table, uuid, scope)
    if table == "chunks":  # its vector carries its scope: written again
        store.embed_queue.enqueue(conn, CHUNKS_COLLECTION, uuid, "upsert")


def _uuids(value: str | None) -> list[str]:
    try:
        data = json.loads(value or "[]")
    except json.JSONDecodeError:
        return []
    return [str(x) for x in data] if isinstance(data, list) else []


__all__ = ["SplitReport", "assign", "split"]
