"""MemoryAPI methods of Tier 1: Hermes' curated MEMORY.md / USER.md."""

from __future__ import annotations

from typing import Any

from hermes_memory import validation as v
from hermes_memory.api.envelope import Envelope, run
from hermes_memory.security.threats import ensure_safe
from hermes_memory.tier1.curated_store import CuratedResult, CuratedStore
from hermes_memory.tier1.snapshot import CuratedSnapshot


def _clean(name: str, value: Any) -> str:
    # NUL bytes and lone surrogates cannot be written to a UTF-8 markdown file: refuse them here.
    return v.text(name, value).strip()


def _result(result: CuratedResult) -> dict[str, Any]:
    return {
        "store": result.store,
        "changed": result.changed,
        "entries": list(result.entries),
        "usage": result.usage,
        "usage_chars": result.usage_chars,
        "limit": result.limit,
        "message": result.message,
    }


class Tier1Methods:
    """Mixed into MemoryAPI; expects ``_curated()`` and ``_snapshot``."""

    _snapshot: CuratedSnapshot | None

    def _curated(self) -> CuratedStore:
        raise NotImplementedError

    def _secret_free(self, text: str) -> str:
        """``text`` with credentials redacted (config ``security.redact_secrets``), else unchanged."""
        raise NotImplementedError

    def _audit_curated(self, action: str, store: str, diff: dict[str, Any]) -> None:
        """Hook: record a curated write in the audit log (MemoryAPI writes it to Tier 2's log)."""

    def _curated_write(self, action: str, result: CuratedResult, diff: dict[str, Any]) -> dict[str, Any]:
        if result.changed:
            self._audit_curated(action, result.store, {"store": result.store, **diff})
        return _result(result)

    def curated_get(self, store: str = "memory") -> Envelope:
        """The live entries of a curated store ("memory" or "user"), as Hermes' file text."""
        return run("tier1", lambda: self._curated().get(store))

    def curated_entries(self, store: str = "memory") -> Envelope:
        """The live entries of a curated store as a list."""
        return run("tier1", lambda: self._curated().entries(store))

    def curated_add(self, content: str, store: str = "memory") -> Envelope:
        """Append an entry (exact duplicates are a no-op; over the limit is refused with the entries)."""

        def call() -> dict[str, Any]:
            text = _clean("content", content)
            ensure_safe(text, scope="strict")  # before redaction: what Hermes refuses stays refused
            text = self._secret_free(text)
            return self._curated_write("curated_add", self._curated().add(store, text), {"new": text})

        return run("tier1", call)

    def curated_replace(self, old: str, new: str, store: str = "memory") -> Envelope:
        """Replace the one entry containing ``old`` with ``new``."""

        def call() -> dict[str, Any]:
            old_text, new_text = _clean("old", old), _clean("new", new)
            ensure_safe(new_text, scope="strict")
            new_text = self._secret_free(new_text)
            result = self._curated().replace(store, old_text, new_text)
            return self._curated_write("curated_replace", result, {"old": old_text, "new": new_text})

        return run("tier1", call)

    def curated_remove(self, substring: str, store: str = "memory") -> Envelope:
        """Remove the one entry containing ``substring``."""

        def call() -> dict[str, Any]:
            result = self._curated().remove(store, _clean("substring", substring))
            # Like fact_delete, the audit log keeps that a removal happened, not the removed text.
            return self._curated_write("curated_remove", result, {})

        return run("tier1", call)

    def curated_snapshot(self) -> Envelope:
        """The frozen snapshot taken when this API was opened (what the system prompt shows)."""

        def call() -> dict[str, Any]:
            snap = self._snapshot if self._snapshot is not None else CuratedSnapshot.capture(self._curated())
            return {
                "memory": list(snap.memory_entries),
                "user": list(snap.user_entries),
                "blocked": len(snap.blocked),
                "rendered": snap.render(),
            }

        return run("tier1", call)
