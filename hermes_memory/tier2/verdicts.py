"""Threat verdicts written with the rows recall shows (episodes, facts): scanned once, when written.

A row's ``threat`` column is 0 when every string recall may show from it is clean (``threats.is_clean``
at ``strict``, the scope recall neutralises with), 1 when something in it is flagged, and NULL when it was
never scanned (written by an older release or imported): reading then neutralises it as before, so a
missing verdict costs time, never safety. Rows are never trusted more than their verdict says.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from hermes_memory.security.threats import is_clean
from hermes_memory.tier2._util import loads_dict, loads_list

CLEAN = 0
FLAGGED = 1
_BATCH = 500


def strings(value: Any) -> Iterator[str]:
    """Every string in a JSON-like value (dict values, list items, nested)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from strings(item)


def verdict(texts: Iterable[str | None]) -> int:
    """CLEAN when none of the texts holds anything the threat scan flags, else FLAGGED."""
    # One scan of the texts joined: a match inside one text is a match in the join ("\n" is a word
    # boundary and folds into nothing), so a clean join means every text is clean.
    return CLEAN if is_clean("\n".join(t for t in texts if t)) else FLAGGED


def episode_verdict(
    text: str, speaker: str | None, session_id: str, role: str, metadata: Mapping[str, Any] | None
) -> int:
    return verdict([text, speaker, session_id, role, *strings(metadata or {})])


def fact_verdict(
    content: str, category: str, source_type: str, source_id: str | None, source_episodes: Iterable[str]
) -> int:
    return verdict([content, category, source_type, source_id, *source_episodes])


def merged(old: int | None, added: int | None) -> int | None:
    """The verdict of a row that gained strings with verdict ``added``: unknown stays unknown."""
    if old is None or added is None:
        return None
    return max(old, added)


def backfill(conn: sqlite3.Connection) -> int:
    """Scan every episode and fact without a verdict and store it; returns how many rows were scanned.
    Runs inside the caller's transaction (migration 8, an import)."""
    episodes = _backfill_table(
        conn, "episodes", "text, speaker, session_id, role, metadata",
        lambda r: episode_verdict(r[1], r[2], r[3], r[4], loads_dict(r[5])),
    )  # fmt: skip
    facts = _backfill_table(
        conn, "facts", "content, category, source_type, source_id, source_episodes",
        lambda r: fact_verdict(r[1], r[2], r[3], r[4], loads_list(r[5])),
    )  # fmt: skip
    return episodes + facts


def _backfill_table(
    conn: sqlite3.Connection, table: str, columns: str, verdict_of: Callable[[sqlite3.Row], int]
) -> int:
    """Store ``verdict_of(row)`` for every row of ``table`` without a verdict (``row[0]`` is its id,
    then ``columns``), in batches; returns how many rows were scanned."""
    rows = conn.execute(f"SELECT id, {columns} FROM {table} WHERE threat IS NULL").fetchall()
    for start in range(0, len(rows), _BATCH):
        part = rows[start : start + _BATCH]
        conn.executemany(f"UPDATE {table} SET threat = ? WHERE id = ?", [(verdict_of(r), r[0]) for r in part])
    return len(rows)


__all__ = ["CLEAN", "FLAGGED", "backfill", "episode_verdict", "fact_verdict", "merged", "strings", "verdict"]
