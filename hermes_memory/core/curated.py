"""Tier 1 in the core: Hermes' curated MEMORY.md / USER.md, its writes threat-checked, redacted and
audited in Tier 2's log."""

from __future__ import annotations

from typing import Any

from hermes_memory.core.tiers import Tiers
from hermes_memory.security.threats import ensure_safe
from hermes_memory.tier1.curated_store import CuratedResult
from hermes_memory.tier1.snapshot import CuratedSnapshot


class Curated:
    """The curated stores of one ``Tiers`` ("memory" or "user"; the store checks the name). Texts are
    checked by the caller (non-empty, no NUL); this service refuses what Hermes' scanner refuses
    (ThreatDetectedError, before any redaction), redacts credentials and audits every change."""

    def __init__(self, tiers: Tiers) -> None:
        self._tiers = tiers

    def get(self, store: str = "memory") -> str:
        """The live entries of ``store`` as Hermes' file text."""
        return self._tiers.curated_store().get(store)

    def entries(self, store: str = "memory") -> list[str]:
        """The live entries of ``store``."""
        return self._tiers.curated_store().entries(store)

    def add(self, store: str, content: str) -> CuratedResult:
        """Append an entry (exact duplicates are a no-op; over the limit raises with the entries)."""
        ensure_safe(content, scope="strict")  # before redaction: what Hermes refuses stays refused
        text = self._tiers.secret_free(content)
        return self._audited("curated_add", self._tiers.curated_store().add(store, text), {"new": text})

    def replace(self, store: str, old: str, new: str) -> CuratedResult:
        """Replace the one entry containing ``old`` with ``new``."""
        ensure_safe(new, scope="strict")
        text = self._tiers.secret_free(new)
        result = self._tiers.curated_store().replace(store, old, text)
        return self._audited("curated_replace", result, {"old": old, "new": text})

    def remove(self, store: str, substring: str) -> CuratedResult:
        """Remove the one entry containing ``substring``."""
        result = self._tiers.curated_store().remove(store, substring)
        # Like fact_delete, the audit log keeps that a removal happened, not the removed text.
        return self._audited("curated_remove", result, {})

    def snapshot(self) -> CuratedSnapshot:
        """The snapshot frozen when the store was opened (what the system prompt shows); a fresh capture
        when there is none."""
        snap = self._tiers.snapshot
        return snap if snap is not None else CuratedSnapshot.capture(self._tiers.curated_store())

    def _audited(self, action: str, result: CuratedResult, diff: dict[str, Any]) -> CuratedResult:
        if result.changed:
            self._tiers.audit_curated(action, result.store, {"store": result.store, **diff})
        return result


__all__ = ["Curated"]
