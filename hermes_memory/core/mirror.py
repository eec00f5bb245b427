"""The core's mirror of a host's curated-memory writes (Hermes' built-in MEMORY.md / USER.md ``memory``
tool): the entry becomes a fact, the statements in it become facts with subject/predicate/object (so a
new entry supersedes what it contradicts, as a spoken statement would), and a replaced or removed entry
closes the facts that came from it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from hermes_memory.core.tiers import Tiers
from hermes_memory.errors import ThreatDetectedError, ValidationError
from hermes_memory.extract import MessageInput, extract
from hermes_memory.extract.types import ExtractedFact
from hermes_memory.ingest.knowledge import EXTRACTOR, implied_state
from hermes_memory.records import Fact
from hermes_memory.security.threats import ensure_safe
from hermes_memory.tier1.curated_store import STORE_FILES
from hermes_memory.tier2 import Tier2
from hermes_memory.tier2._util import content_hash
from hermes_memory.tier2.fact_rows import StoredFact

ACTIONS = ("add", "replace", "remove")
# The provenance of the facts read from the curated files at first activation (``Mirror.migrate``), and
# the audit action that marks the migration as done for a fact scope.
CURATED_SOURCE = "curated"
MIGRATION_MARK = "curated_migration"
# Both kinds of fact that came from a curated entry: mirrored writes and the first-activation migration.
_ENTRY_SOURCES = ("memory", CURATED_SOURCE)
# "User …", "The user …", "User's …" at the start of an entry or of one of its sentences.
_USER_REF = re.compile(r"(?:(?<=^)|(?<=[.;!]\s))(?:the\s+)?user(?P<own>['’]s)?\b\s*(?P<verb>[a-z]+)?", re.I)
_IRREGULAR = {"is": "am", "was": "was", "has": "have", "does": "do", "goes": "go"}
MIRROR_EXTRACTOR = f"{EXTRACTOR}:curated"


def first_person(entry: str) -> str:
    """An entry written about the user ("User lives in Porto", "The user's dog is Biscuit") as the user
    would say it ("I live in Porto", "My dog is Biscuit"), so it is extracted like a spoken statement."""

    def swap(match: re.Match[str]) -> str:
        verb = match.group("verb") or ""
        if match.group("own"):
            return f"My {verb}".rstrip()
        return f"I {_base_form(verb)}".rstrip() if verb else "I"

    return _USER_REF.sub(swap, entry.strip())


def _base_form(verb: str) -> str:
    low = verb.casefold()
    if low in _IRREGULAR:
        return _IRREGULAR[low]
    if low.endswith("ies") and len(low) > 4:
        return verb[:-3] + "y"
    if low.endswith(("ches", "shes", "sses", "xes", "zes", "oes")):
        return verb[:-2]
    if low.endswith("s") and not low.endswith("ss") and len(low) > 3:
        return verb[:-1]
    return verb


@dataclass(frozen=True, slots=True)
class Mirrored:
    """The fact uuids a mirrored curated write ``stored``, ``superseded`` and ``archived``."""

    stored: tuple[str, ...]
    superseded: tuple[str, ...]
    archived: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "stored": list(self.stored),
            "superseded": list(self.superseded),
            "archived": list(self.archived),
        }


@dataclass(frozen=True, slots=True)
class Migrated:
    """What ``Mirror.migrate`` did: ``ran`` False when the scope was migrated before (nothing read);
    ``entries`` read, facts ``stored`` (new ones; an entry already a fact adds none) and the entries
    ``flagged`` by the threat scan (left in the file, not made facts)."""

    ran: bool
    entries: int
    stored: int
    flagged: int

    def to_dict(self) -> dict[str, Any]:
        return {"ran": self.ran, "entries": self.entries, "stored": self.stored, "flagged": self.flagged}


class Mirror:
    """Mirrors a host's curated writes into the Tier 2 facts of one ``Tiers``."""

    def __init__(self, tiers: Tiers) -> None:
        self._tiers = tiers

    def write(
        self,
        action: str,
        store: str,
        content: str,
        old_text: str | None = None,
        *,
        speaker: str | None = None,
        source_id: str | None = None,
    ) -> Mirrored:
        """Mirror one curated write (``add`` / ``replace`` / ``remove`` of an entry in ``store``; the
        arguments are checked by the caller, ``content`` stripped). See ``MemoryAPI.mirror_curated_write``.
        Raises ValidationError when the action lacks its text, ThreatDetectedError for unsafe content."""
        t = self._tiers
        # Mirrored facts hold redacted text: the entry is looked for as stored.
        old = t.secret_free((old_text or (content if action == "remove" else "")).strip())
        if action in ("replace", "remove") and not old:
            raise ValidationError(f"{action} needs old_text (the entry it changes)")
        if action != "remove" and not content:
            raise ValidationError(f"{action} needs the entry's content")
        text = content
        if text:
            ensure_safe(text)
            text = t.secret_free(text)
        t2 = t.tier2()
        stored: list[StoredFact] = []
        superseded: list[str] = []
        archived: list[str] = []
        with t2.db.atomic():
            old_facts = self._entry_facts(t2, store, old, speaker) if old else []
            if action != "remove":
                stored = self._store_entry(t2, store, text, speaker, source_id)
            kept = {s.fact.uuid for s in stored}
            main = stored[0].fact.uuid if stored else None
            for fact in old_facts:
                if fact.uuid in kept:
                    continue  # the new entry says it again
                replacement = _replacement(fact, stored) or main
                if replacement is not None:
                    if t2.facts.supersede(fact.uuid, replacement, actor=t.actor):
                        superseded.append(fact.uuid)
                elif t2.facts.delete(fact.uuid, soft=True, actor=t.actor):
                    archived.append(fact.uuid)
            for item in stored:
                if item.created:
                    t.on_fact_change(item.fact)
        return Mirrored(tuple(s.fact.uuid for s in stored), tuple(superseded), tuple(archived))

    def migrate(self, *, force: bool = False) -> Migrated:
        """Read the curated files' entries (MEMORY.md, USER.md) into Tier 2 facts of this scope, source
        ``curated`` (source_id the file name), as a mirrored write would store them — once per fact scope:
        an audit mark records it, in the same transaction as the facts; ``force`` runs it again (facts
        deduplicate by content, so nothing is stored twice). Entries the threat scan flags stay in the
        file and are counted, not stored. An entry mirrored before whose statement the memory has since
        seen replaced is not read in again as believed (it stays closed; recall marks it). A no-op without
        Tier 1 or Tier 2."""
        t = self._tiers
        if t.curated is None or t.t2 is None:
            return Migrated(False, 0, 0, 0)
        t2 = t.t2
        scope = t2.view.fact_scope
        marks = t2.audit.entries(action=MIGRATION_MARK)
        if not force and any((e.diff or {}).get("scope") == scope for e in marks):
            return Migrated(False, 0, 0, 0)
        # Each entry as written (what the threat scan reads) and redacted (what is stored and matched).
        entries = {
            store: [(entry, t.secret_free(entry)) for entry in t.curated.entries(store)]
            for store in ("memory", "user")
        }
        replaced = t2.facts.superseded_entries([free for pairs in entries.values() for _, free in pairs])
        read = stored = flagged = 0
        created = []
        with t2.db.atomic() as conn:
            for store, pairs in entries.items():
                for entry, free in pairs:
                    read += 1
                    try:
                        ensure_safe(entry)
                    except ThreatDetectedError:
                        flagged += 1  # Hermes keeps it in the file (its snapshot blanks it); no fact
                        continue
                    if free in replaced:  # not read in again as believed
                        continue
                    facts = self._store_entry(
                        t2, store, free, None, STORE_FILES[store], source_type=CURATED_SOURCE
                    )
                    created += [f.fact for f in facts if f.created]
                    stored += sum(1 for f in facts if f.created)
            t2.audit.record(
                conn, action=MIGRATION_MARK, tier="tier1", actor=t.actor, target_uuid=None,
                diff={"scope": scope, "entries": read, "stored": stored, "flagged": flagged},
            )  # fmt: skip
            for fact in created:
                t.on_fact_change(fact)
        return Migrated(True, read, stored, flagged)

    def _store_entry(
        self,
        t2: Tier2,
        store: str,
        text: str,
        speaker: str | None,
        source_id: str | None,
        *,
        source_type: str = "memory",
    ) -> list[StoredFact]:
        category = "user" if store == "user" else "general"
        at = datetime.now(tz=UTC)
        statements = _statements(text, speaker, at)
        # One statement (the usual entry): the entry is stored once, as written, and understood (its
        # subject/predicate/object), so it replaces what it contradicts. More: each is a fact of its own.
        single = statements[0] if len(statements) == 1 else None
        out = [
            t2.facts.store(
                text, category=category, source_type=source_type, source_id=source_id,
                actor=self._tiers.actor, extractor=MIRROR_EXTRACTOR,
                subject=single.subject if single else None, predicate=single.predicate if single else None,
                object=single.object if single else None,
                exclusive=bool(single and single.exclusive and not single.negated),
            )
        ]  # fmt: skip
        for fact in statements:
            if fact is single:
                out.extend(self._implied(t2, fact, source_id, source_type))
                continue
            out.append(
                t2.facts.store(
                    fact.content, category=fact.category, confidence=max(0.0, min(1.0, fact.confidence)),
                    source_type=source_type, source_id=source_id, actor=self._tiers.actor,
                    subject=fact.subject, predicate=fact.predicate, object=fact.object,
                    exclusive=fact.exclusive and not fact.negated, extractor=MIRROR_EXTRACTOR,
                    importance=max(0.0, min(1.0, fact.salience)),
                )
            )  # fmt: skip
            out.extend(self._implied(t2, fact, source_id, source_type))
        return out

    def _implied(
        self, t2: Tier2, fact: ExtractedFact, source_id: str | None, source_type: str
    ) -> list[StoredFact]:
        """The current state a change implies ("moved to Porto": lives in Porto), as its own fact."""
        state = implied_state(fact)
        if state is None:
            return []
        predicate, obj, content = state
        return [
            t2.facts.store(
                content, category="user", source_type=source_type, source_id=source_id,
                actor=self._tiers.actor, subject=fact.subject, predicate=predicate, object=obj,
                exclusive=True, extractor=MIRROR_EXTRACTOR,
            )
        ]  # fmt: skip

    def _entry_facts(self, t2: Tier2, store: str, old_text: str, speaker: str | None) -> list[Fact]:
        """The believed facts that came from the entry ``old_text`` identifies: its mirrored fact(s) and
        the statements extracted from it (only those the mirror or the migration stored, source ``memory``
        or ``curated``)."""
        entries = [f.content for f in t2.facts.mirrored_containing(old_text)]
        if self._tiers.snapshot is not None:
            entries += [e for e in self._tiers.snapshot.entries(store) if old_text in e and e not in entries]
        if not entries:
            return []
        at = datetime.now(tz=UTC)
        contents = set(entries)
        for entry in entries:
            statements = _statements(entry, speaker, at)
            contents.update(f.content for f in statements)
            contents.update(s[2] for f in statements if (s := implied_state(f)))
        found: dict[str, Fact] = {}
        for content in contents:
            for source in _ENTRY_SOURCES:
                fact = t2.facts.believed_by_hash(content_hash(content), source_type=source)
                if fact is not None:
                    found[fact.uuid] = fact
        return list(found.values())


def _statements(entry: str, speaker: str | None, at: datetime) -> list[ExtractedFact]:
    result = extract(MessageInput(text=first_person(entry), time=at, speaker=speaker, role="user"))
    return [] if result.is_noise else list(result.facts)


def _replacement(old: Fact, stored: list[StoredFact]) -> str | None:
    """The new fact that says the same kind of thing (same subject and predicate) as ``old``."""
    for item in stored:
        new = item.fact
        if (
            old.predicate
            and new.predicate == old.predicate
            and (new.subject or "").casefold() == (old.subject or "").casefold()
        ):
            return new.uuid
    return None


__all__ = [
    "ACTIONS",
    "CURATED_SOURCE",
    "MIGRATION_MARK",
    "MIRROR_EXTRACTOR",
    "Migrated",
    "Mirror",
    "Mirrored",
    "first_person",
]
