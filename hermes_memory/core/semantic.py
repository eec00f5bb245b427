"""Tier 3 as a core service: index a text, search by meaning or by meaning and keywords (hybrid), drain
the embed queue, rebuild the collections. Inputs are checked by the caller (the API); results are
records."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hermes_memory.core.tiers import Tiers
from hermes_memory.errors import VectorStoreBusyError
from hermes_memory.records import Hit
from hermes_memory.security.threats import neutralise_data
from hermes_memory.tier3._indexer import DrainReport
from hermes_memory.tier3.semantic import Progress, SemanticResult


@dataclass(frozen=True)
class Indexed:
    """A text indexed: its chunks, whether their embeddings were written, and the queue's length."""

    chunk_ids: tuple[str, ...]
    embedded: bool
    pending: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "chunk_ids": list(self.chunk_ids),
            "chunks": len(self.chunk_ids),
            "embedded": self.embedded,
            "pending": self.pending,
        }


@dataclass(frozen=True)
class Found:
    """Search hits (strings neutralised: memory is data, not instructions), whether the query was cut
    to the embedder's length, and why the vectors could not be used (None when they were)."""

    hits: tuple[Hit, ...]
    truncated: bool
    degraded: str | None = None

    def rows(self) -> list[dict[str, Any]]:
        """The hits as the envelope's data."""
        return [neutralise_data(h.to_dict()) for h in self.hits]

    def meta(self) -> dict[str, Any]:
        meta: dict[str, Any] = {"truncated": self.truncated}
        if self.degraded is not None:
            meta["degraded"] = [self.degraded]
        return meta


def _found(result: SemanticResult) -> Found:
    return Found(tuple(result.hits), result.truncated, result.degraded)


class Semantic:
    """Tier 3 of one ``Tiers`` (raises ConfigError naming the key when it is switched off)."""

    def __init__(self, tiers: Tiers) -> None:
        self._tiers = tiers

    def min_score(self) -> float:
        """The configured floor of ``search`` (config ``tier3.min_score``)."""
        return self._tiers.semantic().cfg.min_score

    def index(
        self,
        text: str,
        *,
        source_type: str = "session",
        session_id: str | None = None,
        message_id: int | None = None,
        category: str | None = None,
        timestamp: float | None = None,
        wait: bool = True,
    ) -> Indexed:
        """Chunk and index a text (credentials redacted with config ``security.redact_secrets``); with
        ``wait`` the embeddings are written before returning."""
        semantic = self._tiers.semantic()
        body = self._tiers.secret_free(text)
        chunks = semantic.index_text(
            body, source_kind="text", source_type=source_type,
            timestamp=timestamp if timestamp is not None else time.time(),
            session_id=session_id, message_id=message_id, category=category,
        )  # fmt: skip
        report = semantic.drain() if wait else None
        return Indexed(
            tuple(f"chunk:{c.uuid}" for c in chunks), report is not None, semantic.health()["embed_pending"]
        )

    def index_session_message(
        self, text: str, *, session_id: str, message_id: int | None, timestamp: float | None
    ) -> bool:
        """Index one message of an earlier session (a Hermes ``session_search`` result, seed §9.2) for
        recall, once: skipped when this memory holds that session's turns already (the provider stored
        them) or indexed the message before. The embedding is left to the background worker. Returns
        True when it was indexed. Raises StorageError, ConfigError when Tier 3 is off."""
        semantic = self._tiers.semantic()
        tier2 = self._tiers.tier2()
        if tier2.episodes.has_session(session_id):
            return False
        body = self._tiers.secret_free(text)
        with tier2.db.atomic():
            if tier2.chunks.has_message(session_id, message_id, source_type="session"):
                return False
            semantic.index_text(
                body, source_kind="text", source_type="session",
                timestamp=timestamp if timestamp is not None else time.time(),
                session_id=session_id, message_id=message_id,
            )  # fmt: skip
        return True

    def search(
        self, query: str, *, limit: int = 10, min_score: float, filters: Mapping[str, Any] | None = None
    ) -> Found:
        """Chunks nearest in meaning to the query (score in [0, 1], higher is closer). When another
        process holds the vectors, the same chunks answer by BM25 and ``degraded`` says why."""
        semantic = self._tiers.semantic()
        try:
            result = semantic.search(query, limit=limit, min_score=min_score, filters=filters)
        except VectorStoreBusyError as exc:
            result = semantic.lexical_search(query, limit=limit, filters=filters, reason=str(exc))
        return _found(result)

    def hybrid(self, query: str, *, limit: int = 10) -> Found:
        """Full-text (BM25) and vector results fused by reciprocal rank fusion."""
        return _found(self._tiers.semantic().hybrid(query, limit=limit))

    def embed_pending(self, max_items: int | None = None, progress: Progress | None = None) -> DrainReport:
        """Drain the durable embed queue into the vector backend (the ``embed_queue`` job)."""
        return self._tiers.semantic().drain(max_items=max_items, progress=progress)

    def reindex(self, progress: Progress | None = None) -> tuple[DrainReport, str]:
        """Rebuild every vector collection from Tier 2; the report and which path answers searches now."""
        semantic = self._tiers.semantic()
        report = semantic.reindex(progress=progress)
        return report, semantic.search_path()


__all__ = ["Found", "Indexed", "Semantic"]
