"""MemoryAPI's recall and search: ranked recall over every tier, its reconstruction, the semantic index."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from hermes_memory import validation as v
from hermes_memory.api import _write_checks as c
from hermes_memory.api._edge import EnvelopeEdge
from hermes_memory.api.envelope import Envelope
from hermes_memory.errors import ValidationError
from hermes_memory.security.threats import ensure_safe

if TYPE_CHECKING:
    from hermes_memory.tier3.semantic import Progress


# A rendered block larger than this is no longer a memory block (the largest context windows are ~1M
# tokens; Hermes asks for 300).
MAX_BUDGET_TOKENS = 100_000
_MAX_SEARCH_LIMIT = 1000


class RecallAPI(EnvelopeEdge):
    """Recall and search (``Memory.recall``, ``Memory.semantic``, ``Memory.llm.reconstruct``)."""

    def recall(
        self,
        query: str,
        tiers: Sequence[str] | None = None,
        limit: int | None = None,
        as_of: float | Mapping[str, Any] | str | None = None,
        budget_tokens: int | None = None,
        *,
        session_id: str | None = None,
        limit_per_tier: int | None = None,
    ) -> Envelope:
        """What memory knows about the query, from every tier, ranked; ``as_of`` answers what was
        believed then. Facts it returns are reinforced (access count).

        Every store answers: turns, facts, texts indexed with ``semantic_index``, timeline events,
        entity cards and curated entries, ranked by one fusion; each hit has its ``kind``, ``tier`` (the
        tier whose search found it) and ``source`` (in words; ``source_ids`` the records behind it).
        ``limit`` is the number of hits in all (default 10); ``limit_per_tier`` (the seed's form,
        ``recall(query, tiers=None, limit_per_tier=5)``) returns up to that many hits of each tier
        queried, still in the one fused order. Giving both is a ValidationError.

        ``meta.tiers_answered`` lists the tiers that answered; ``meta.tiers_unavailable`` maps each tier
        that could not (another process owns the vector store, the embedder or graph failed) to why, in
        words; the others still answer.

        With ``llm.query_decomposition`` on, the LLM splits the question into sub-queries whose hits
        are fused with the question's (``meta.sub_queries``); when it fails, the question is recalled as
        asked and ``meta.warnings`` says so."""
        from hermes_memory.core.recall import query_meta

        meta: dict[str, Any] = query_meta([], {})

        def call() -> dict[str, Any]:
            text, wanted, args = _recall_args(self._core.tiers.max_chars, query, tiers, limit, as_of,
                                              budget_tokens, session_id, limit_per_tier)  # fmt: skip
            meta.update(query_meta(self._core.recall.tiers_for(wanted), {}))  # said also if it fails
            found = self._core.recall.query(text, tiers=wanted, decompose=True, **args)
            meta.update(found.meta())
            return found.to_dict()

        envelope = self._run("multi", call, redacted=True)  # ``Recall.query`` redacts its hits
        envelope["meta"].update(meta)
        return envelope

    def semantic_index(
        self,
        text: str,
        source_type: str = "session",
        session_id: str | None = None,
        message_id: int | None = None,
        *,
        category: str | None = None,
        timestamp: float | None = None,
        wait: bool = True,
    ) -> Envelope:
        """Chunk and index a text; with ``wait`` the embeddings are written before returning."""

        def call() -> dict[str, Any]:
            body = v.text("text", text, max_chars=self._core.tiers.max_chars).strip()
            ensure_safe(body)
            kind = v.choice("source_type", source_type, {"session", "memory", "tool", "fact", "document"})
            sid = v.optional_text("session_id", session_id, max_chars=200)
            if message_id is not None and (isinstance(message_id, bool) or not isinstance(message_id, int)):
                raise ValidationError(f"message_id must be an integer, got {type(message_id).__name__}")
            if category is not None:
                v.choice("category", category, v.FACT_CATEGORIES)
            when = v.optional_time("timestamp", timestamp)
            return self._core.semantic.index(
                body, source_type=kind, session_id=sid, message_id=message_id, category=category,
                timestamp=when, wait=wait,
            ).to_dict()  # fmt: skip

        return self._run("tier3", call)

    def semantic_search(
        self,
        query: str,
        limit: int = 10,
        min_score: float | None = None,
        filters: Mapping[str, Any] | None = None,
    ) -> Envelope:
        """Chunks nearest in meaning to the query (score in [0, 1], higher is closer)."""
        meta: dict[str, Any] = {}

        def call() -> list[dict[str, Any]]:
            text = v.text("query", query, max_chars=self._core.tiers.max_chars).strip()
            lim = v.positive_int("limit", limit, maximum=_MAX_SEARCH_LIMIT)
            floor = self._core.semantic.min_score()  # ConfigError first when Tier 3 is off
            floor = floor if min_score is None else v.unit_interval("min_score", min_score)
            if filters is not None and not isinstance(filters, Mapping):
                raise ValidationError(f"filters must be a mapping, got {type(filters).__name__}")
            found = self._core.semantic.search(text, limit=lim, min_score=floor, filters=filters)
            meta.update(found.meta(), min_score=floor)
            return found.rows()

        envelope = self._run("tier3", call)
        envelope["meta"].update(meta)
        return envelope

    def semantic_hybrid(self, query: str, limit: int = 10) -> Envelope:
        """Full-text (BM25) and vector results fused by reciprocal rank fusion."""
        meta: dict[str, Any] = {}

        def call() -> list[dict[str, Any]]:
            text = v.text("query", query, max_chars=self._core.tiers.max_chars).strip()
            found = self._core.semantic.hybrid(
                text, limit=v.positive_int("limit", limit, maximum=_MAX_SEARCH_LIMIT)
            )
            meta.update(found.meta())
            return found.rows()

        envelope = self._run("multi", call, tiers=["tier2", "tier3"])
        envelope["meta"].update(meta)
        return envelope

    def embed_pending(self, max_items: int | None = None, progress: Progress | None = None) -> Envelope:
        """Drain the durable embed queue into the vector backend (the ``embed_queue`` job)."""

        def call() -> dict[str, int]:
            cap = None if max_items is None else v.positive_int("max_items", max_items)
            v.optional_callback("progress", progress)
            return self._core.semantic.embed_pending(cap, progress).to_dict()

        return self._run("tier3", call)

    def reindex(self, progress: Progress | None = None) -> Envelope:
        """Rebuild every vector collection from Tier 2 (after switching backend or embedder)."""

        def call() -> dict[str, Any]:
            v.optional_callback("progress", progress)
            report, search = self._core.semantic.reindex(progress)
            return {**report.to_dict(), "search": search}  # which path answers from now on

        return self._run("tier3", call)

    def reconstruct(
        self,
        query: str,
        memories: Sequence[str] | None = None,
        *,
        limit: int = 10,
        tiers: Sequence[str] | None = None,
        as_of: float | Mapping[str, Any] | str | None = None,
        session_id: str | None = None,
    ) -> Envelope:
        """HAEMA's N:M reconstruction: ``memories`` (default: what ``recall`` returns for the query)
        consolidated by the LLM into statements citing their sources; unchanged when the LLM is off
        or fails (``fallback: true``)."""
        hits: list[dict[str, Any]] = []
        if memories is None:
            found = self.recall(query, tiers, limit, as_of, session_id=session_id)
            if not found["success"]:
                return found
            hits = list(found["data"]["hits"])

        def call() -> dict[str, Any]:
            limit = self._core.tiers.max_chars
            text = v.text("query", query, max_chars=limit).strip()
            given = None if memories is None else v.string_list("memories", memories, max_chars=limit)
            return self._core.llm.reconstruct(text, given, hits).to_dict()

        return self._run("multi", call, tiers=["llm"])


def _recall_args(
    max_chars: int,
    query: str,
    tiers: Sequence[str] | None,
    limit: int | None,
    as_of: Any,
    budget_tokens: int | None,
    session_id: str | None,
    limit_per_tier: int | None = None,
) -> tuple[str, list[str] | None, dict[str, Any]]:
    """``recall``'s input checked (raises ValidationError): the query, the tiers asked for, the rest."""
    text = v.text("query", query, max_chars=max_chars).strip()
    if limit is not None and limit_per_tier is not None:
        raise ValidationError("give 'limit' (hits in all) or 'limit_per_tier' (hits per tier), not both")
    args: dict[str, Any] = {
        "limit": 10 if limit is None else v.positive_int("limit", limit, maximum=200),
        "limit_per_tier": None
        if limit_per_tier is None
        else v.positive_int("limit_per_tier", limit_per_tier, maximum=50),
        "as_of": c.as_of(as_of),
        "budget_tokens": None
        if budget_tokens is None
        else v.positive_int("budget_tokens", budget_tokens, maximum=MAX_BUDGET_TOKENS),
        "session_id": v.optional_text("session_id", session_id, max_chars=200),
    }
    if tiers is None:
        return text, None, args
    from hermes_memory.recall.engine import TIERS

    wanted = v.string_list("tiers", tiers, max_chars=20)
    unknown = sorted(set(wanted) - set(TIERS))
    if unknown:
        raise ValidationError(f"unknown tier(s) {', '.join(unknown)}; choose from {', '.join(TIERS)}")
    return text, wanted, args


__all__ = ["RecallAPI"]
