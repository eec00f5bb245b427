"""FTS5 query building: user text is turned into quoted terms so it never reaches FTS as syntax."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hermes_memory.tier2.db import Database

# Words only: quotes, AND/OR/NOT/NEAR, '*', '-', ':', '^' and parentheses are dropped or quoted away.
_TOKEN = re.compile(r"\w+", re.UNICODE)
_STOPWORDS = frozenset(
    """a an and are as at be but by did do does for from had has have he her hers him his how i if in into
    is it its me my of on or our she so than that the their them then there these they this to too us
    was we were what when where which who whom why will with would you your""".split()
    # what the index's tokeniser leaves of a possessive or contraction ("Maya's", "we'll")
    + "s t d m ll re ve".split()
)
MAX_TERMS = 32


def fts_terms(query: str) -> list[str]:
    """The searchable terms of free text: word tokens, stop-words dropped (unless nothing else is left)."""
    tokens = [t.lower() for t in _TOKEN.findall(query)]
    content = [t for t in tokens if t not in _STOPWORDS]
    chosen = content or tokens
    seen: dict[str, None] = {}
    for token in chosen:
        seen.setdefault(token, None)
    return list(seen)[:MAX_TERMS]


def fts_match(query: str, *, mode: str = "or") -> str | None:
    """A safe FTS5 MATCH expression for free text, or None when the text has no searchable term.

    Every term is double-quoted, so FTS operators in user text are plain words.
    ``mode="and"`` requires every term; ``"or"`` ranks by how many match (BM25).
    """
    terms = fts_terms(query)
    if not terms:
        return None
    joiner = " AND " if mode == "and" else " OR "
    return joiner.join(f'"{term}"' for term in terms)


def bm25_to_score(rank: float) -> float:
    """Map FTS5 bm25() (lower = better, usually negative) onto (0, 1], higher = better."""
    positive = max(0.0, -rank)
    return positive / (1.0 + positive)


def bm25_uuid_scores(
    db: Database, fts: str, table: str, query: str, where: str, params: Sequence[object], limit: int
) -> dict[str, float]:
    """Rows of ``table`` (aliased ``t``) whose FTS5 index ``fts`` matches free text and that satisfy
    ``where`` (with ``params``; usually the scope view's clause), as uuid -> BM25 score, best first."""
    match = fts_match(query)
    if match is None:
        return {}
    bounded = window(db, fts, table, query)
    if bounded is not None:  # at scale: see ``window``
        ranked = windowed(db, fts, table, "t", "t.uuid", where, match, bounded, params, limit, pool=limit * 5)
        return {str(r["uuid"]): bm25_to_score(r["bm"]) for r in ranked}
    rows = db.query(
        f"SELECT t.uuid, bm25({fts}) AS rank FROM {fts} JOIN {table} t ON t.id = {fts}.rowid "
        f"WHERE {fts} MATCH ? AND {where} ORDER BY rank LIMIT ?",
        (match, *params, limit),
    )
    return {str(r[0]): bm25_to_score(r[1]) for r in rows}


# At scale (issue 13): ranking a match reads every row it matches, and a word found in a few percent of
# 100k turns matches thousands ("trip", "move": 7,000 turns each, 8-40 ms per query). The rarest terms,
# together found in at most this many rows, are ranked over every row; the others only over the newest
# this many rows that match the whole query: at most twice this many rows are ranked, whatever the query.
RANKED_ROWS = 1000


@dataclass(frozen=True)
class Window:
    """How to rank a match that reads more than ``RANKED_ROWS`` rows: the whole expression over the
    newest ``RANKED_ROWS`` rows that match it (rowid above ``floor``), and the rarest terms alone
    (``rare``, a MATCH expression, or None when even the rarest term is that common) over every row."""

    floor: int
    rare: str | None


def window(db: Database, fts: str, content: str, query: str) -> Window | None:
    """The ``Window`` to rank free text over the FTS table ``fts`` (external content table ``content``,
    rowid ``id``) by, or None when its terms are found in at most ``RANKED_ROWS`` rows together (always
    on a table of at most that many rows): then ranking every row that matches is bounded already.
    Raises StorageError when Tier 2 cannot be read."""
    terms = fts_terms(query)
    top = db.query_one(f"SELECT max(id) FROM {content}")
    if not terms or top is None or top[0] is None or int(top[0]) <= RANKED_ROWS:
        return None
    counts = db.query_one(
        "SELECT " + ", ".join(f"(SELECT count(*) FROM {fts} WHERE {fts} MATCH ?)" for _ in terms),
        [f'"{term}"' for term in terms],
    )
    assert counts is not None
    found = sorted(zip((int(n) for n in counts), range(len(terms)), terms, strict=True))
    if sum(n for n, _, _ in found) <= RANKED_ROWS:
        return None
    rare: list[str] = []
    total = 0
    for n, _, term in found:
        if total + n > RANKED_ROWS:
            break
        rare.append(term)
        total += n
    floor = db.query_one(
        f"SELECT rowid FROM {fts} WHERE {fts} MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?",
        (" OR ".join(f'"{term}"' for term in terms), RANKED_ROWS),
    )
    if floor is None:
        return None
    return Window(int(floor[0]), " OR ".join(f'"{term}"' for term in rare) if rare else None)


def ranked_in_fts(
    db: Database,
    fts: str,
    table: str,
    alias: str,
    columns: str,
    where: str,
    match: str,
    floor: int | None,
    params: Sequence[object],
    limit: int,
    *,
    pool: int,
) -> list[sqlite3.Row]:
    """The best ``limit`` rows of ``table`` (aliased ``alias``, rowid ``id``) matching ``match`` (rowid
    above ``floor``) and ``where`` (with ``params``), as ``columns`` plus ``bm_id`` (the row id) and ``bm``
    (bm25, lower is better), best first. Ranked inside the FTS index first (the best ``pool`` rows), joined
    and filtered after (joining every matching row first costs 4x at scale); joined first only when the
    filter left fewer than ``limit`` of the ``pool`` rows (``pooled``: how many matched, up to ``pool``;
    fewer means every matching row was ranked, so joining first would find no other row)."""
    bound = f"AND {fts}.rowid > ? " if floor is not None else ""
    floors = [floor] if floor is not None else []
    # One row more than the hits (or one row of NULLs when none): ``pooled`` from the count.
    found = db.query(
        f"WITH c AS MATERIALIZED (SELECT rowid AS id, bm25({fts}) AS bm FROM {fts} "
        f"WHERE {fts} MATCH ? {bound}ORDER BY bm LIMIT ?) "
        "SELECT x.*, p.pooled FROM (SELECT count(*) AS pooled FROM c) p LEFT JOIN "
        f"(SELECT {columns}, {alias}.id AS bm_id, c.bm AS bm FROM c "
        f"JOIN {table} {alias} ON {alias}.id = c.id WHERE {where} ORDER BY c.bm LIMIT ?) x ON 1 "
        "ORDER BY x.bm",
        [match, *floors, pool, *params, limit],
    )
    pooled = int(found[0]["pooled"]) if found else 0
    rows = [r for r in found if r["bm_id"] is not None]
    if len(rows) < limit and pooled >= pool:
        rows = db.query(
            f"SELECT {columns}, {alias}.id AS bm_id, bm25({fts}) AS bm FROM {fts} "
            f"JOIN {table} {alias} ON {alias}.id = {fts}.rowid WHERE {fts} MATCH ? {bound}AND {where} "
            "ORDER BY bm LIMIT ?",
            [match, *floors, *params, limit],
        )
    return rows


def windowed(
    db: Database,
    fts: str,
    table: str,
    alias: str,
    columns: str,
    where: str,
    match: str,
    bounded: Window,
    params: Sequence[object],
    limit: int,
    *,
    pool: int,
) -> list[sqlite3.Row]:
    """``ranked_in_fts`` at scale: every term over the newest rows that match (``bounded.floor``), the
    rare terms alone over every row (their bm25 then lacks what the common terms add: little); merged,
    best first."""
    rows = ranked_in_fts(
        db, fts, table, alias, columns, where, match, bounded.floor, params, limit, pool=pool
    )
    if bounded.rare is not None:
        seen = {r["bm_id"] for r in rows}
        extra = ranked_in_fts(
            db, fts, table, alias, columns, where, bounded.rare, None, params, limit, pool=pool
        )
        rows = [*rows, *(r for r in extra if r["bm_id"] not in seen)]
        rows.sort(key=lambda r: float(r["bm"]))
    return rows[:limit]


__all__ = [
    "MAX_TERMS",
    "RANKED_ROWS",
    "Window",
    "bm25_to_score",
    "bm25_uuid_scores",
    "fts_match",
    "fts_terms",
    "ranked_in_fts",
    "window",
    "windowed",
]
