"""MemoryAPI methods of Tier 3: semantic indexing, vector search and hybrid (BM25 + vector) search."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from hermes_memory import validation as v
from hermes_memory.api.envelope import Envelope, run
from hermes_memory.errors import ValidationError, VectorStoreBusyError
from hermes_memory.security.threats import ensure_safe, neutralise_data
from hermes_memory.tier3.semantic import Progress, SemanticMemory

_MAX_LIMIT = 1000


class Tier3Methods:
    """Mixed into MemoryAPI; expects ``_semantic()``, ``_max_chars``, ``scope`` and the Tier 3 config."""

    scope: str
    _max_chars: int

    def _semantic(self) -> SemanticMemory:
        raise NotImplementedError

    def _secret_free(self, text: str) -> str:
        """``text`` with credentials redacted (config ``security.redact_secrets``), else unchanged."""
        raise NotImplementedError

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
            body = v.text("text", text, max_chars=self._max_chars).strip()
            ensure_safe(body)
            body = self._secret_free(body)
            kind = v.choice("source_type", source_type, {"session", "memory", "tool", "fact", "document"})
            sid = v.optional_text("session_id", session_id, max_chars=200)
            if message_id is not None and (isinstance(message_id, bool) or not isinstance(message_id, int)):
                raise ValidationError(f"message_id must be an integer, got {type(message_id).__name__}")
            if category is not None:
                v.choice("category", category, v.FACT_CATEGORIES)
            when = v.optional_time("timestamp", timestamp)
            semantic = self._semantic()
            at = when if when is not None else time.time()
            chunks = semantic.index_text(
                body, source_kind="text", source_type=kind, timestamp=at,
                session_id=sid, message_id=message_id, category=category,
            )  # fmt: skip
            report = semantic.drain() if wait else None
            return {
                "chunk_ids": [f"chunk:{c.uuid}" for c in chunks],
                "chunks": len(chunks),
                "embedded": report is not None,
                "pending": semantic.health()["embed_pending"],
            }

        return run("tier3", call)

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
            text = v.text("query", query, max_chars=self._max_chars).strip()
            lim = v.positive_int("limit", limit, maximum=_MAX_LIMIT)
            semantic = self._semantic()
            floor = semantic.cfg.min_score if min_score is None else v.unit_interval("min_score", min_score)
            if filters is not None and not isinstance(filters, Mapping):
                raise ValidationError(f"filters must be a mapping, got {type(filters).__name__}")
            try:
                result = semantic.search(text, limit=lim, min_score=floor, filters=filters)
            except VectorStoreBusyError as exc:
                # Another process holds the vectors: answer from the same chunks by BM25, and say so.
                result = semantic.lexical_search(
                    text, limit=lim, filters=filters, reason=str(exc)
                )
            meta["truncated"] = result.truncated
            meta["min_score"] = floor
            if result.degraded is not None:
                meta["degraded"] = [result.degraded]
            return [neutralise_data(h.to_dict()) for h in result.hits]  # memory is data, not instructions

        envelope = run("tier3", call)
        envelope["meta"].update(meta)
        return envelope

    def semantic_hybrid(self, query: str, limit: int = 10) -> Envelope:
        """Full-text (BM25) and vector results fused by reciprocal rank fusion."""
        meta: dict[str, Any] = {}

        def call() -> list[dict[str, Any]]:
            text = v.text("query", query, max_chars=self._max_chars).strip()
            lim = v.positive_int("limit", limit, maximum=_MAX_LIMIT)
            result = self._semantic().hybrid(text, limit=lim)
            meta["truncated"] = result.truncated
            if result.degraded is not None:
                meta["degraded"] = [result.degraded]
            return [neutralise_data(h.to_dict()) for h in result.hits]  # memory is data, not instructions

        envelope = run("multi", call, tiers=["tier2", "tier3"])
        envelope["meta"].update(meta)
        return envelope

    def embed_pending(self, max_items: int | None = None, progress: Progress | None = None) -> Envelope:
        """Drain the durable embed queue into the vector backend (the ``embed_queue`` job)."""

        def call() -> dict[str, int]:
            cap = None if max_items is None else v.positive_int("max_items", max_items)
            v.optional_callback("progress", progress)
            return self._semantic().drain(max_items=cap, progress=progress).to_dict()

        return run("tier3", call)

    def reindex(self, progress: Progress | None = None) -> Envelope:
        """Rebuild every vector collection from Tier 2 (after switching backend or embedder)."""

        def call() -> dict[str, Any]:
            v.optional_callback("progress", progress)
            semantic = self._semantic()
            report: dict[str, Any] = semantic.reindex(progress=progress).to_dict()
            report["search"] = semantic.search_path()  # which path answers from now on
            return report

        return run("tier3", call)
