"""MemoryAPI's cross-tier ``recall``: typed hits plus a rendered block within a token budget."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hermes_memory import validation as v
from hermes_memory.api.envelope import Envelope, run
from hermes_memory.errors import ValidationError
from hermes_memory.recall.engine import TIERS, RecallEngine
from hermes_memory.recall.render import render
from hermes_memory.tier2 import Tier2
from hermes_memory.tier3.semantic import SemanticMemory

# A rendered block larger than this is no longer a memory block (the largest context windows are ~1M
# tokens; Hermes asks for 300).
MAX_BUDGET_TOKENS = 100_000


class RecallMethods:
    """Mixed into MemoryAPI; expects ``_recall_engine()``, ``_tier2()``, ``enabled_tiers()``, ``scope``."""

    scope: str
    _max_chars: int
    _sem: SemanticMemory | None

    def _recall_engine(self) -> RecallEngine:
        raise NotImplementedError

    def _tier2(self) -> Tier2:
        raise NotImplementedError

    def enabled_tiers(self) -> list[str]:
        raise NotImplementedError

    def recall(
        self,
        query: str,
        tiers: Sequence[str] | None = None,
        limit: int = 10,
        as_of: float | None = None,
        budget_tokens: int | None = None,
        *,
        session_id: str | None = None,
    ) -> Envelope:
        """What memory knows about the query, from every tier, ranked; ``as_of`` answers what was
        believed then. Facts it returns are reinforced (access count).

        ``meta.tiers_answered`` lists the tiers that answered; ``meta.tiers_unavailable`` maps each tier
        that could not (another process owns the vector store, the embedder or graph failed) to why, in
        words; the others still answer."""
        queried: list[str] = []
        degraded: list[str] = []
        unavailable: dict[str, str] = {}  # tier -> why it could not answer, in words

        def call() -> dict[str, Any]:
            text = v.text("query", query, max_chars=self._max_chars).strip()
            lim = v.positive_int("limit", limit, maximum=200)
            when = v.optional_time("as_of", as_of)
            budget = (
                None
                if budget_tokens is None
                else v.positive_int("budget_tokens", budget_tokens, maximum=MAX_BUDGET_TOKENS)
            )
            sid = v.optional_text("session_id", session_id, max_chars=200)
            enabled = [t for t in self.enabled_tiers() if t in TIERS]
            if tiers is None:
                chosen = enabled
            else:
                chosen = v.string_list("tiers", tiers, max_chars=20)
                unknown = sorted(set(chosen) - set(TIERS))
                if unknown:
                    raise ValidationError(
                        f"unknown tier(s) {', '.join(unknown)}; choose from {', '.join(TIERS)}"
                    )
                chosen = [t for t in chosen if t in enabled]
            # Another process holding the vector engine is no reason to skip tier3: the exact index over
            # the Tier 2 vectors answers in its place (``SemanticMemory.source_scores``).
            queried.extend(chosen)
            hits = self._recall_engine().recall(
                text, limit=lim, tiers=chosen, as_of=when, session_id=sid, unavailable=unavailable
            )
            degraded.extend(unavailable.values())
            facts = [h.id.removeprefix("fact:") for h in hits if h.kind == "fact"]
            if facts:  # reinforced later, by the writer side: recall writes nothing
                self._tier2().facts.note_recalled(facts)
            # The engine's hits are safe already (scanned when written, else neutralised): no scan here.
            return {"hits": [h.to_dict() for h in hits], "rendered": render(hits, budget)}

        envelope = run("multi", call)
        envelope["meta"]["tiers_queried"] = queried
        envelope["meta"]["tiers_answered"] = [t for t in queried if t not in unavailable]
        envelope["meta"]["tiers_unavailable"] = dict(unavailable)
        if degraded:
            envelope["meta"]["degraded"] = degraded
        return envelope

