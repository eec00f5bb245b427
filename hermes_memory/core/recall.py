"""Recall across the tiers: ranked hits, which tiers answered, and the rendered block (one record).

``Recall.query`` is what the API's ``recall``, the Hermes prefetch, the CLI and MCP run; the block is
rendered by ``recall.render`` (the one renderer) from the hits' lines, built once and only when asked.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Protocol

from hermes_memory.core.tiers import Tiers
from hermes_memory.recall import render
from hermes_memory.recall.engine import TIERS, RecallEngine
from hermes_memory.recall.fusion import fuse
from hermes_memory.records import AsOf, Hit
from hermes_memory.security.secrets import redact_data, redact_secrets

if TYPE_CHECKING:
    from hermes_memory.llm.decompose import Decomposition


class QueryDecomposer(Protocol):
    """Splits a question into sub-queries (``LLMPath``; config ``llm.query_decomposition``)."""

    @property
    def decomposes(self) -> bool:
        """Whether recall should ask (an LLM is on and decomposition configured)."""
        ...

    def decompose_query(self, question: str) -> Decomposition:
        """The question's sub-queries, or a fallback with its reason; never raises for the LLM."""
        ...


@dataclass(frozen=True)
class RecallResult:
    """What one recall found: the hits in rank order, the tiers queried, tier -> why it could not
    answer (in words), and the block of the hits' lines within ``budget_tokens`` (``rendered``);
    ``sub_queries`` the question was split into (query decomposition) and ``warnings`` for the caller
    (the decomposition failed and the question was recalled as asked)."""

    hits: tuple[Hit, ...]
    queried: tuple[str, ...]
    unavailable: Mapping[str, str] = field(default_factory=dict)
    budget_tokens: int | None = None
    sub_queries: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def answered(self) -> tuple[str, ...]:
        return tuple(t for t in self.queried if t not in self.unavailable)

    @cached_property
    def lines(self) -> tuple[render.Line, ...]:
        """Each hit's line, built and quoted once (the prefetch selects from them per session)."""
        return render.lines(self.hits)

    @cached_property
    def rendered(self) -> str:
        return render.join(render.select(self.lines, self.budget_tokens))

    def to_dict(self) -> dict[str, Any]:
        """The API envelope's data: ``hits`` and ``rendered``."""
        return {"hits": [h.to_dict() for h in self.hits], "rendered": self.rendered}

    def meta(self) -> dict[str, Any]:
        """The API envelope's meta keys: the tiers queried, answered and unavailable (and ``degraded``,
        the reasons, when a tier could not answer; ``sub_queries`` and ``warnings`` when there are)."""
        meta = query_meta(self.queried, self.unavailable)
        if self.sub_queries:
            meta["sub_queries"] = list(self.sub_queries)
        if self.warnings:
            meta["warnings"] = list(self.warnings)
        return meta


def query_meta(queried: Sequence[str], unavailable: Mapping[str, str]) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "tiers_queried": list(queried),
        "tiers_answered": [t for t in queried if t not in unavailable],
        "tiers_unavailable": dict(unavailable),
    }
    if unavailable:
        meta["degraded"] = list(unavailable.values())
    return meta


class Recall:
    """Recall over the tiers of one ``Tiers``, through the engine ``engine()`` returns (rebuilt when
    a forget drops it); ``decomposer`` splits questions when asked and configured."""

    def __init__(
        self, tiers: Tiers, engine: Callable[[], RecallEngine], decomposer: QueryDecomposer | None = None
    ) -> None:
        self._tiers = tiers
        self._engine = engine
        self._decomposer = decomposer

    def tiers_for(self, wanted: Sequence[str] | None) -> list[str]:
        """The tiers a recall over ``wanted`` (None: all) queries: those of them that are on. Names
        must be recall's tiers (the API checks them)."""
        enabled = [t for t in self._tiers.enabled() if t in TIERS]
        return enabled if wanted is None else [t for t in wanted if t in enabled]

    def query(
        self,
        text: str,
        *,
        tiers: Sequence[str] | None = None,
        limit: int = 10,
        limit_per_tier: int | None = None,
        as_of: float | AsOf | None = None,
        session_id: str | None = None,
        budget_tokens: int | None = None,
        decompose: bool = False,
    ) -> RecallResult:
        """What memory knows about ``text``, ranked; ``as_of`` answers what was believed then (an
        ``AsOf``: what was true at its ``valid`` time as known at its ``known`` time); ``limit``
        hits in all, or with ``limit_per_tier`` up to that many per tier queried (``limit`` ignored;
        ``RecallEngine.recall`` says what a hit's tier is). The facts
        returned are reinforced (access count, written later by the writer side). A vector or graph
        tier that fails is reported in ``unavailable`` and the others answer; a Tier 2 failure raises
        (StorageError). Credentials are redacted from the hits (config ``security.redact_secrets``).

        Another process holding the vector engine is no reason to skip tier3: the exact index over the
        Tier 2 vectors answers in its place (``SemanticMemory.source_scores``).

        ``decompose`` (explicit recalls; never the Hermes prefetch): with ``llm.query_decomposition``
        on, the LLM splits the question into sub-queries, each is recalled, and the question's hits and
        theirs are interleaved by rank (``recall.fusion``); when the LLM fails, the question is
        recalled as asked and ``warnings`` says so.
        """
        chosen = self.tiers_for(tiers)
        unavailable: dict[str, str] = {}  # tier -> why it could not answer, in words
        point = as_of if isinstance(as_of, AsOf) else AsOf(None, as_of)  # a plain time: the system time
        engine = self._engine()

        def recall(query: str) -> list[Hit]:
            return engine.recall(
                query, limit=limit, limit_per_tier=limit_per_tier, tiers=chosen, as_of=point.known,
                session_id=session_id, unavailable=unavailable, valid_at=point.valid,
            )  # fmt: skip

        hits = recall(text)
        sub_queries: tuple[str, ...] = ()
        warnings: tuple[str, ...] = ()
        if decompose and self._decomposer is not None and self._decomposer.decomposes:
            split = self._decomposer.decompose_query(text)
            if split.fallback:
                warnings = (f"query decomposition failed ({split.reason}); recalled the question as asked",)
            elif split.queries:
                sub_queries = split.queries
                lists = [hits, *(recall(query) for query in sub_queries)]
                hits = fuse(lists, limit=limit, per_tier=limit_per_tier)
        facts = [h.id.removeprefix("fact:") for h in hits if h.kind == "fact"]
        if facts:  # reinforced later, by the writer side: recall writes nothing
            self._tiers.tier2().facts.note_recalled(facts)
        # The engine's hits are safe already (scanned when written, else neutralised): no scan here.
        if self._tiers.config.security.redact_secrets:
            hits = [_secret_free(h) for h in hits]
        return RecallResult(tuple(hits), tuple(chosen), unavailable, budget_tokens, sub_queries, warnings)


def _secret_free(hit: Hit) -> Hit:
    """``hit`` with credentials redacted from its text and metadata (config ``security.redact_secrets``
    is on: ``Tiers.secret_free`` and ``secret_free_data`` without asking the config again per hit); the
    same hit when there were none."""
    text = redact_secrets(hit.text)
    metadata = redact_data(hit.metadata)
    if text is hit.text and metadata is hit.metadata:
        return hit
    return dataclasses.replace(hit, text=text, metadata=metadata)


__all__ = ["QueryDecomposer", "Recall", "RecallResult", "query_meta"]
