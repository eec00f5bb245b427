"""MemoryAPI methods of the optional LLM path: N:M reconstruction of recalled memories and the
conservative core memory (SOUL/TOOLS/RULE/USER). Both work with the LLM off: reconstruction returns
the memories unchanged and the core update changes nothing (``fallback: true`` with a reason)."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_memory import validation as v
from hermes_memory.api.envelope import Envelope, run
from hermes_memory.config import Config

if TYPE_CHECKING:
    from hermes_memory.llm.structured import StructuredLLM
    from hermes_memory.tier2 import Tier2

# The LLM modules are imported in the methods that use them: a turn never needs them, and importing
# them with MemoryAPI cost the Hermes process ~40 ms at start.

# Facts worth proposing for core memory: durable things about the user, their tools and people.
CORE_CANDIDATE_CATEGORIES = frozenset({"user", "preference", "tool", "relationship", "project"})
CORE_CANDIDATE_MIN_CONFIDENCE = 0.6
CORE_CANDIDATE_LIMIT = 50
# One read-modify-write of the core file at a time within this process.
_CORE_LOCK = threading.Lock()


class LLMMethods:
    """Mixed into MemoryAPI; expects ``config``, ``scope``, ``_max_chars``, ``_t2`` and ``recall``."""

    config: Config
    scope: str
    _max_chars: int
    _t2: Tier2 | None
    _llm_cache: StructuredLLM | None = None

    @property
    def _core_path(self) -> Path:
        """This scope's core-memory file: it summarises the scope's facts, so each readable set of
        scopes has its own file (the default scope keeps ``llm.core_memory_path``)."""
        path = self.config.core_memory_path
        key = self._t2.view.key if self._t2 is not None else ""
        return path if not key else path.with_name(f"{path.stem}-{key}{path.suffix}")

    if TYPE_CHECKING:  # provided by RecallMethods; no runtime stub, so the MRO cannot shadow it

        def recall(
            self,
            query: str,
            tiers: Sequence[str] | None = None,
            limit: int = 10,
            as_of: float | None = None,
            budget_tokens: int | None = None,
            *,
            session_id: str | None = None,
        ) -> Envelope: ...

    def _structured_llm(self) -> StructuredLLM | None:
        if not self.config.llm.enabled:
            return None
        if self._llm_cache is None:
            from hermes_memory.llm.wiring import structured_llm

            self._llm_cache = structured_llm(self.config.llm)
        return self._llm_cache

    def reconstruct(
        self,
        query: str,
        memories: Sequence[str] | None = None,
        *,
        limit: int = 10,
        tiers: Sequence[str] | None = None,
        as_of: float | None = None,
        session_id: str | None = None,
    ) -> Envelope:
        """HAEMA's N:M reconstruction: ``memories`` (default: what ``recall`` returns for the query)
        consolidated by the LLM into statements citing their sources; unchanged when the LLM is off
        or fails (``fallback: true``)."""
        sources: list[dict[str, Any]] = []
        if memories is None:
            found = self.recall(query, tiers, limit, as_of, session_id=session_id)
            if not found["success"]:
                return found
            sources = list(found["data"]["hits"])

        def call() -> dict[str, Any]:
            text = v.text("query", query, max_chars=self._max_chars).strip()
            if memories is None:
                inputs = [_hit_line(hit) for hit in sources]
            else:
                inputs = v.string_list("memories", memories, max_chars=self._max_chars)
            from hermes_memory.llm.reconstruction import reconstruct

            result = reconstruct(self._structured_llm(), text, inputs)
            return {**result.to_dict(), "sources": sources}

        return run("multi", call, tiers=["llm"])

    def core_memory(self) -> Envelope:
        """The core memory: bullets per section, rendered markdown, budget and last update time."""

        def call() -> dict[str, Any]:
            from hermes_memory.llm.core_memory import CoreMemoryStore

            core = CoreMemoryStore(self._core_path).load()
            return {
                **core.to_dict(),
                "markdown": core.render(),
                "budget": self.config.llm.core_memory_budget,
            }

        return run("core", call)

    def core_memory_update(self, candidates: Sequence[str] | None = None) -> Envelope:
        """Let the LLM propose a conservative core-memory update from ``candidates`` (default: facts
        learned since the last update) and apply it only if valid. Changes are audited; Hermes'
        MEMORY.md/USER.md are never written."""

        def call() -> dict[str, Any]:
            from hermes_memory.llm.core_memory import CoreMemoryStore, update_core

            given = (
                None
                if candidates is None
                else v.string_list("candidates", candidates, max_chars=self._max_chars)
            )
            store = CoreMemoryStore(self._core_path)
            with _CORE_LOCK:
                core = store.load()
                texts = given if given is not None else self._core_candidates(core.updated_at)
                update = update_core(
                    self._structured_llm(), core, texts, budget=self.config.llm.core_memory_budget
                )
                if update.updated:
                    store.save(update.core)
                    self._audit_core(update.to_dict()["applied"])
            return {**update.to_dict(), "candidates": len(texts)}

        return run("core", call, tiers=["core", "llm"])

    def _core_candidates(self, since: float | None) -> list[str]:
        if self._t2 is None:
            return []
        recent = self._t2.facts.query(
            None,
            limit=CORE_CANDIDATE_LIMIT,
            min_confidence=CORE_CANDIDATE_MIN_CONFIDENCE,
            touch=False,
        )
        return [
            s.fact.content
            for s in recent
            if s.fact.category in CORE_CANDIDATE_CATEGORIES
            and (since is None or (s.fact.recorded_at or s.fact.created_at) > since)
        ]

    def _audit_core(self, applied: list[dict[str, str]]) -> None:
        if self._t2 is not None:
            with self._t2.db.atomic() as conn:
                self._t2.audit.record(
                    conn, action="core_memory_update", tier="core", actor="llm", target_uuid=None,
                    diff={"applied": applied, "path": str(self._core_path)},
                )  # fmt: skip


def _hit_line(hit: dict[str, Any]) -> str:
    """A recalled hit as the model sees it: its date first, so newer evidence can win conflicts."""
    stamp = hit.get("timestamp")
    if isinstance(stamp, int | float):
        return f"({datetime.fromtimestamp(stamp, tz=UTC).strftime('%Y-%m-%d')}) {hit.get('text', '')}"
    return str(hit.get("text", ""))


__all__ = ["LLMMethods"]
