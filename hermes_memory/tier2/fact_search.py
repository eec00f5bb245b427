"""Fact search: free text ranked by BM25 (bounded at scale by ``tier2.search.window``), the near-copies
of a new fact, and the superseded facts on a question's topic."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from hermes_memory.records import Fact
from hermes_memory.tier2._util import now
from hermes_memory.tier2.fact_reads import FactReads
from hermes_memory.tier2.fact_rows import ScoredFact, row_to_fact, visible_where
from hermes_memory.tier2.search import (
    Window,
    bm25_to_score,
    fts_match,
    fts_terms,
    ranked_in_fts,
    window,
    windowed,
)


class FactSearch(FactReads):
    """Text search over facts (``facts_fts``)."""

    # The last ``tier2.search.window`` asked for, while nothing is committed: recall asks twice per
    # query (``bm25_scores``, ``superseded_matching``). (data_version, query) -> window.
    _last_window: tuple[tuple[int, str], Window | None] | None = None

    def query(
        self,
        query: str | None = None,
        *,
        category: str | None = None,
        limit: int = 10,
        min_confidence: float = 0.0,
        as_of: float | None = None,
        touch: bool = True,
        valid_at: float | None = None,
    ) -> list[ScoredFact]:
        """Facts matching free text (BM25-ranked) and filters; without text, the most recent first.

        Only facts believed now (or at ``as_of``) are returned; with ``valid_at``, the facts true then
        as known at ``as_of`` (default now; ``true_at``). Reading bumps access counts.
        """
        at = now()
        visible, params = visible_where(as_of, at, valid_at)
        scoped, sp = self._in_view()
        clauses = [visible, scoped, "f.confidence >= ?"]
        params += [*sp, min_confidence]
        if category is not None:
            clauses.append("f.category = ?")
            params.append(category)
        match = fts_match(query) if query else None
        if query and match is None:
            return []
        if match is not None:
            # Ranked inside FTS5 alone first (BM25 over the bare index costs ~40% less than over the
            # join), then filtered; the whole join only when the filters leave fewer than ``limit``: the
            # answer is the same either way, only the cost differs (``tier2.search.ranked_in_fts``).
            rows = self._ranked("f.*", " AND ".join(clauses), match, params, limit)
            results = [ScoredFact(row_to_fact(r), bm25_to_score(r["bm"])) for r in rows]
        else:
            sql = f"SELECT f.* FROM facts f WHERE {' AND '.join(clauses)} ORDER BY f.created_at DESC LIMIT ?"
            rows = self._db.query(sql, [*params, limit])
            results = [ScoredFact(row_to_fact(r), 1.0) for r in rows]
        if touch and results:
            self._touch([r.fact.uuid for r in results], at)
        return results

    def bm25_scores(
        self,
        query: str,
        *,
        limit: int = 10,
        as_of: float | None = None,
        valid_at: float | None = None,
        skip_extractor: str | None = None,
    ) -> dict[str, float]:
        """``query(query, limit=limit, as_of=as_of, valid_at=valid_at, touch=False)`` as uuid -> score,
        best first, without loading the facts (recall ranks them first and loads only those that make
        its list); without the facts of ``skip_extractor``."""
        match = fts_match(query)
        if match is None:
            return {}
        visible, params = visible_where(as_of, now(), valid_at)
        scoped, sp = self._in_view()
        where = f"{visible} AND {scoped} AND f.confidence >= ?"
        params += [*sp, 0.0]
        if skip_extractor is not None:
            where += " AND f.extractor != ?"
            params.append(skip_extractor)
        bounded = self._window(query)
        if bounded is not None:  # at scale: see ``tier2.search.window``
            ranked = self._windowed("f.uuid", where, match, bounded, params, limit)
            return {str(r["uuid"]): bm25_to_score(r["bm"]) for r in ranked}
        rows = self._ranked("f.uuid", where, match, params, limit)  # as ``query`` ranks them
        return {str(r["uuid"]): bm25_to_score(r["bm"]) for r in rows}

    def near(self, text: str, *, limit: int = 20, key_terms: int = 3) -> list[str]:
        """The contents of the newest ``limit`` believed facts that contain the ``key_terms`` longest words
        of ``text`` (long words are the rare ones, so these are its candidate near-copies; the caller
        compares them). Bounded at any size: read in the index's own (rowid) order, never ranked — it
        runs on every hand-written fact (salience's novelty)."""
        terms = sorted(fts_terms(text), key=len, reverse=True)[:key_terms]
        match = fts_match(" ".join(terms), mode="and") if terms else None
        if match is None:
            return []
        visible, params = visible_where(None, now())
        scoped, sp = self._in_view()
        rows = self._db.query(
            "SELECT f.content FROM facts_fts JOIN facts f ON f.id = facts_fts.rowid "
            f"WHERE facts_fts MATCH ? AND {visible} AND {scoped} ORDER BY facts_fts.rowid DESC LIMIT ?",
            [match, *params, *sp, limit],
        )
        return [str(r[0]) for r in rows]

    def superseded_matching(self, query: str, *, limit: int = 20) -> list[Fact]:
        """Superseded facts (a later fact replaced them) that match free text, best BM25 match first.

        What the memory no longer believes on the topic of a question: recall uses their source turns to
        rank a superseded statement below the current one.
        """
        match = fts_match(query)
        if match is None:
            return []
        scoped, sp = self._in_view()
        bounded = self._window(query)
        if bounded is not None:  # at scale: see ``tier2.search.window``
            where = f"f.superseded_at IS NOT NULL AND {scoped}"
            return [row_to_fact(r) for r in self._windowed("f.*", where, match, bounded, sp, limit)]
        rows = self._db.query(
            "SELECT f.* FROM facts_fts JOIN facts f ON f.id = facts_fts.rowid "
            f"WHERE facts_fts MATCH ? AND f.superseded_at IS NOT NULL AND {scoped} "
            "ORDER BY bm25(facts_fts) LIMIT ?",
            [match, *sp, limit],
        )
        return [row_to_fact(r) for r in rows]

    def _window(self, query: str) -> Window | None:
        key = (self._db.data_version(), query)
        last = self._last_window
        if last is not None and last[0] == key:
            return last[1]
        found = window(self._db, "facts_fts", "facts", query)
        self._last_window = (key, found)
        return found

    def _ranked(
        self, columns: str, where: str, match: str, params: Sequence[Any], limit: int
    ) -> list[sqlite3.Row]:
        """The best ``limit`` facts matching ``match`` and ``where`` (on alias f; ``params`` its
        parameters), as ``columns`` and ``bm`` (bm25), best first (``tier2.search.ranked_in_fts``)."""
        pool = max(limit * 5, 50)
        return ranked_in_fts(
            self._db, "facts_fts", "facts", "f", columns, where, match, None, params, limit, pool=pool
        )

    def _windowed(
        self, columns: str, where: str, match: str, bounded: Window, params: Sequence[Any], limit: int
    ) -> list[sqlite3.Row]:
        """``_ranked`` at scale (``tier2.search.windowed``)."""
        pool = max(limit * 5, 50)
        return windowed(
            self._db, "facts_fts", "facts", "f", columns, where, match, bounded, params, limit, pool=pool
        )


__all__ = ["FactSearch"]
