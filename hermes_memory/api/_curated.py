"""MemoryAPI's Tier 1: Hermes' curated MEMORY.md / USER.md, and its writes mirrored as Tier 2 facts."""

from __future__ import annotations

from typing import Any

from hermes_memory import validation as v
from hermes_memory.api import _write_checks as c
from hermes_memory.api._edge import EnvelopeEdge
from hermes_memory.api.envelope import Envelope
from hermes_memory.errors import ValidationError


class CuratedAPI(EnvelopeEdge):
    """The curated stores (``Memory.curated``) and their mirror in Tier 2 (``Memory.mirror``)."""

    # -- the host's curated writes, mirrored as facts (Memory.mirror) ------------------------------
    def mirror_curated_write(
        self,
        action: str,
        store: str,
        content: str,
        old_text: str | None = None,
        *,
        speaker: str | None = None,
        source_id: str | None = None,
    ) -> Envelope:
        """Mirror one curated write (``add`` / ``replace`` / ``remove`` of an entry in ``store``).

        The new entry is stored as a fact (source ``memory``) and so are the statements extracted from it
        (as said by ``speaker``, the user); those supersede older facts they contradict. For replace and
        remove, the entry that ``old_text`` identifies (a substring, as the host's tool takes it) is found
        among the mirrored facts and the session-start snapshot, and every fact that came from it is
        closed: superseded by the new entry (replace) or archived (remove). data: ``stored``,
        ``superseded``, ``archived`` (fact uuids). Raises ValidationError for a bad action or store,
        ThreatDetectedError for unsafe content."""

        def call() -> dict[str, Any]:
            checked = c.mirror_write(action, store, content, old_text, speaker=speaker, source_id=source_id,
                                     max_chars=self._core.tiers.max_chars)  # fmt: skip
            return self._core.mirror.write(**checked).to_dict()

        return self._run("tier2", call)

    # -- Tier 1: Hermes' curated MEMORY.md / USER.md (Memory.curated) -----------------------------
    def curated_get(self, store: str = "memory") -> Envelope:
        """The live entries of a curated store ("memory" or "user"), as Hermes' file text."""
        return self._run("tier1", lambda: self._core.curated.get(store))

    def curated_entries(self, store: str = "memory") -> Envelope:
        """The live entries of a curated store as a list."""
        return self._run("tier1", lambda: self._core.curated.entries(store))

    def curated_add(self, content: str, store: str = "memory") -> Envelope:
        """Append an entry (exact duplicates are a no-op; over the limit is refused with the entries)."""
        return self._run("tier1", lambda: self._core.curated.add(store, _entry("content", content)).to_dict())

    def curated_replace(self, old: str, new: str, store: str = "memory") -> Envelope:
        """Replace the one entry containing ``old`` with ``new``."""

        def call() -> dict[str, Any]:
            old_text, new_text = _entry("old", old), _entry("new", new)
            return self._core.curated.replace(store, old_text, new_text).to_dict()

        return self._run("tier1", call)

    def curated_remove(self, substring: str, store: str = "memory") -> Envelope:
        """Remove the one entry containing ``substring``."""
        return self._run(
            "tier1", lambda: self._core.curated.remove(store, _entry("substring", substring)).to_dict()
        )

    def curated_migrate(self, force: bool = False) -> Envelope:
        """Read the existing MEMORY.md / USER.md entries into Tier 2 facts (source ``curated``), once per
        scope (HMNL §14; the Hermes provider runs it when it first opens a store): a user who had curated
        memory before keeps it searchable as facts. ``force`` runs it again; facts deduplicate, so nothing
        is stored twice. data: ran, entries, stored, flagged (entries the threat scan refused)."""

        def call() -> dict[str, Any]:
            if not isinstance(force, bool):
                raise ValidationError(f"force must be true or false, got {v.shown(force)}")
            return self._core.mirror.migrate(force=force).to_dict()

        return self._run("tier2", call, tiers=["tier1", "tier2"])

    def curated_snapshot(self) -> Envelope:
        """The frozen snapshot taken when this API was opened (what the system prompt shows)."""
        return self._run("tier1", lambda: self._core.curated.snapshot().to_dict())


def _entry(name: str, value: Any) -> str:
    # NUL bytes and lone surrogates cannot be written to a UTF-8 markdown file: refuse them here.
    return v.text(name, value).strip()


__all__ = ["CuratedAPI"]
