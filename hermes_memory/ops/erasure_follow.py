"""Every host follows every forget. A forget deletes the shared Tier 2 rows once, but each host (each
Hermes home using the store) has files of its own that may name what was forgotten: its curated
MEMORY.md/USER.md, its file of what the agent saw, its turn inbox, its graph files, its exact index's
snapshots and an embedded vector engine's files. Each home keeps a cursor (``erasures.followed`` beside
its database file): the newest erasure whose words (``ops.erasure_words``) it has matched against its
own files. A store opening, a recall after a commit and the forget itself bring it up to date.

The steps are idempotent; a cursor lost or naming an erasure the store does not have (another store, a
restored backup) makes the home follow every erasure again.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_memory.errors import StorageError
from hermes_memory.ops.erasure_words import ErasureWords
from hermes_memory.security.permissions import private_dir, private_opener
from hermes_memory.tier2 import erasures

if TYPE_CHECKING:
    from hermes_memory.ops.erasure import Parts
    from hermes_memory.tier2.turn_inbox import TurnInbox

CURSOR_FILE = "erasures.followed"
_INBOX_PAGE = 500


@dataclass(frozen=True)
class Cursor:
    """The newest erasure a home has followed: its id and when it was recorded (0: none)."""

    id: int = 0
    started_at: float = 0.0


def cursor_path(db_path: Path) -> Path:
    return db_path.parent / CURSOR_FILE


def read_cursor(path: Path) -> Cursor:
    """The home's cursor; none yet (or one this release cannot read): follow every erasure."""
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
        return Cursor(int(data["id"]), float(data["started_at"]))
    except FileNotFoundError:
        return Cursor()
    except (OSError, ValueError, KeyError, TypeError):
        return Cursor()  # unreadable: following every erasure again is safe (the steps are idempotent)


def write_cursor(path: Path, cursor: Cursor) -> None:
    """Replace the cursor file atomically. Raises StorageError."""
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        private_dir(path.parent)
        with open(temp, "w", encoding="utf-8", opener=private_opener) as fh:
            json.dump({"id": cursor.id, "started_at": cursor.started_at}, fh)
        os.replace(temp, path)
    except OSError as exc:
        raise StorageError(f"cannot write {path}: {exc}") from exc


def follow(parts: Parts, cursor: Cursor) -> Cursor:
    """Apply every erasure recorded after ``cursor`` to this home's own files and caches; returns the
    new cursor. It stops before an erasure whose engine step another process of this home blocks (the
    next call goes on). Raises StorageError (the cursor stays where it was)."""
    from hermes_memory.ops import erasure as _erasure

    db = parts.tier2.db
    if cursor.id and erasures.started_at(db, cursor.id) != cursor.started_at:
        cursor = Cursor()  # another store than the one followed (replaced, restored): follow it all
    while batch := erasures.recorded_after(db, cursor.id):
        found = [_words(r) for r in batch if r.words]
        if found:  # (a record older than the words was applied where it was made: one host then)
            _curated(parts, found)
            _seen(parts, found)
            if not _inbox(parts.tier2.inbox, found):
                return cursor  # compacted on the next call
            if parts.semantic is not None:
                parts.semantic.drop_exact_snapshots()
            if not _erasure.run_local(parts, "engine") or not _erasure.run_local(parts, "graph"):
                return cursor
        cursor = Cursor(batch[-1].id, batch[-1].started_at)
    return cursor


def _words(row: erasures.Recorded) -> ErasureWords:
    assert row.words is not None
    try:
        return ErasureWords.from_json(row.words)
    except ValueError as exc:
        raise StorageError(f"erasure {row.id} has an unreadable record of its words: {exc}") from exc


def _curated(parts: Parts, found: list[ErasureWords]) -> None:
    curated = parts.curated
    if curated is None:
        return
    removed = False
    for store in ("memory", "user"):
        for entry in list(curated.entries(store)):
            if any(w.matches(entry) for w in found):
                curated.remove(store, entry)
                removed = True
    if removed and parts.on_curated is not None:
        parts.on_curated()


def _seen(parts: Parts, found: list[ErasureWords]) -> None:
    from hermes_memory.ops import seen_file

    if parts.seen_path is None:
        return
    for words in found:
        try:
            seen_file.scrub(parts.seen_path, terms=(), texts=(), scope=words.scope, matches=words.matches)
        except OSError as exc:
            raise StorageError(f"cannot scrub {parts.seen_path}: {exc}") from exc


def _inbox(inbox: TurnInbox | None, found: list[ErasureWords]) -> bool:
    """Drop the turns waiting in this home's inbox that name what was forgotten (or belong to a
    forgotten scope): moved into the shared queue later, they would bring it back. False when the
    inbox could not be compacted yet (a reader of another process holds it)."""
    if inbox is None:
        return True
    scopes = {w.scope for w in found if w.scope is not None}
    after, dropped = 0, False
    while rows := inbox.oldest(_INBOX_PAGE, after=after):
        after = rows[-1]["id"]
        gone = [r["id"] for r in rows if _names(r["payload"], found, scopes)]
        inbox.remove(gone)
        dropped = dropped or bool(gone)
    return not dropped or inbox.compact()


def _names(payload: str, found: list[ErasureWords], scopes: set[str]) -> bool:
    try:
        body: Any = json.loads(payload)
    except ValueError:
        return False  # not a turn (the queue reports it when it moves the row)
    if isinstance(body, dict) and body.get("scope") in scopes:
        return True
    text = json.dumps(body, ensure_ascii=False)
    return any(w.matches(text) for w in found)


__all__ = ["CURSOR_FILE", "Cursor", "cursor_path", "follow", "read_cursor", "write_cursor"]
