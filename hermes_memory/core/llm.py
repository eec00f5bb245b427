"""The optional LLM path: HAEMA's N:M reconstruction of recalled memories and the conservative core
memory (SOUL/TOOLS/RULE/USER). Both work with the LLM off: reconstruction returns the memories
unchanged and the core update changes nothing (``fallback: true`` with a reason).

The LLM modules are imported where used: a turn never needs them, and importing them with the API
cost the Hermes process ~40 ms at start."""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_memory.core.tiers import Tiers

if TYPE_CHECKING:
    from hermes_memory.llm.core_memory import CoreMemory, CoreUpdate
    from hermes_memory.llm.reconstruction import Reconstruction
    from hermes_memory.llm.structured import StructuredLLM

# Facts worth proposing for core memory: durable things about the user, their tools and people.
CORE_CANDIDATE_CATEGORIES = frozenset({"user", "preference", "tool", "relationship", "project"})
CORE_CANDIDATE_MIN_CONFIDENCE = 0.6
CORE_CANDIDATE_LIMIT = 50
# One read-modify-write of the core file at a time within this process.
_CORE_LOCK = threading.Lock()


@dataclass(frozen=True)
class Reconstructed:
    """A reconstruction and the recalled hits it was made from (empty when memories were given)."""

    reconstruction: Reconstruction
    sources: tuple[Mapping[str, Any], ...]

    def to_dict(self) -> dict[str, Any]:
        return {**self.reconstruction.to_dict(), "sources": list(self.sources)}


@dataclass(frozen=True)
class CoreMemoryView:
    """The core memory as stored, with its markdown rendering and the per-section bullet budget."""

    core: CoreMemory
    budget: int

    def to_dict(self) -> dict[str, Any]:
        return {**self.core.to_dict(), "markdown": self.core.render(), "budget": self.budget}


@dataclass(frozen=True)
class CoreMemoryChange:
    """A core-memory update's outcome and how many candidate memories it was proposed from."""

    update: CoreUpdate
    candidates: int

    def to_dict(self) -> dict[str, Any]:
        return {**self.update.to_dict(), "candidates": self.candidates}


class LLMPath:
    """Reconstruction and core memory over this memory's scope (config ``llm``)."""

    def __init__(self, tiers: Tiers) -> None:
        self._tiers = tiers
        self._llm: StructuredLLM | None = None

    @property
    def core_path(self) -> Path:
        """This scope's core-memory file: it summarises the scope's facts, so each readable set of
        scopes has its own file (the default scope keeps ``llm.core_memory_path``)."""
        path = self._tiers.config.core_memory_path
        t2 = self._tiers.t2
        key = t2.view.key if t2 is not None else ""
        return path if not key else path.with_name(f"{path.stem}-{key}{path.suffix}")

    def structured_llm(self) -> StructuredLLM | None:
        """The configured model (built once), or None when config ``llm.enabled`` is off."""
        config = self._tiers.config.llm
        if not config.enabled:
            return None
        if self._llm is None:
            from hermes_memory.llm.wiring import structured_llm

            self._llm = structured_llm(config)
        return self._llm

    def reconstruct(
        self, query: str, memories: Sequence[str] | None, hits: Sequence[Mapping[str, Any]] = ()
    ) -> Reconstructed:
        """``memories`` (None: the recalled ``hits``) consolidated by the LLM into statements citing
        their sources; unchanged when the LLM is off or fails (``fallback``)."""
        from hermes_memory.llm.reconstruction import reconstruct

        inputs = [_hit_line(hit) for hit in hits] if memories is None else list(memories)
        return Reconstructed(reconstruct(self.structured_llm(), query, inputs), tuple(hits))

    def core_memory(self) -> CoreMemoryView:
        """The core memory: bullets per section, rendered markdown, budget and last update time."""
        from hermes_memory.llm.core_memory import CoreMemoryStore

        budget = self._tiers.config.llm.core_memory_budget
        return CoreMemoryView(CoreMemoryStore(self.core_path).load(), budget)

    def core_memory_update(self, candidates: Sequence[str] | None) -> CoreMemoryChange:
        """Let the LLM propose a conservative update from ``candidates`` (None: facts learned since the
        last update) and apply it only if valid; audited. Hermes' MEMORY.md/USER.md are never written."""
        from hermes_memory.llm.core_memory import CoreMemoryStore, update_core

        store = CoreMemoryStore(self.core_path)
        with _CORE_LOCK:
            core = store.load()
            texts = list(candidates) if candidates is not None else self._candidates(core.updated_at)
            update = update_core(
                self.structured_llm(), core, texts, budget=self._tiers.config.llm.core_memory_budget
            )
            if update.updated:
                store.save(update.core)
                self._audit(update.to_dict()["applied"])
        return CoreMemoryChange(update, len(texts))

    def _candidates(self, since: float | None) -> list[str]:
        t2 = self._tiers.t2
        if t2 is None:
            return []
        recent = t2.facts.query(
            None, limit=CORE_CANDIDATE_LIMIT, min_confidence=CORE_CANDIDATE_MIN_CONFIDENCE, touch=False
        )
        return [
            s.fact.content
            for s in recent
            if s.fact.category in CORE_CANDIDATE_CATEGORIES
            and (since is None or (s.fact.recorded_at or s.fact.created_at) > since)
        ]

    def _audit(self, applied: list[dict[str, str]]) -> None:
        t2 = self._tiers.t2
        if t2 is not None:
            with t2.db.atomic() as conn:
                t2.audit.record(
                    conn, action="core_memory_update", tier="core", actor="llm", target_uuid=None,
                    diff={"applied": applied, "path": str(self.core_path)},
                )  # fmt: skip


def _hit_line(hit: Mapping[str, Any]) -> str:
    """A recalled hit as the model sees it: its date first, so newer evidence can win conflicts."""
    stamp = hit.get("timestamp")
    if isinstance(stamp, int | float):
        return f"({datetime.fromtimestamp(stamp, tz=UTC).strftime('%Y-%m-%d')}) {hit.get('text', '')}"
    return str(hit.get("text", ""))


__all__ = ["CoreMemoryChange", "CoreMemoryView", "LLMPath", "Reconstructed"]
