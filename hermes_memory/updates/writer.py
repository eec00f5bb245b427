"""Close what a new statement of the user makes no longer true, inside the turn's transaction.

For each clause of a user's message that asserts something about a holder (the user, a named person,
pet, project), the holder's believed facts are candidates: the newest ones and those sharing its words.
The detector decides which of them the clause replaces; each is closed bitemporally at the statement's
time (``valid_to``; ``superseded_at`` now) and points at the fact that replaced it (``superseded_by``):
the fact extracted from that clause, or, when extraction found none, a fact stating the clause in the
third person. Nothing is deleted; the raw turns stay as they are, and recall marks the turn whose fact
was closed (``FactStore.superseded_sources``).

The assistant's words are never read here: an update is something the user says.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from hermes_memory.extract import classify
from hermes_memory.extract.wording import is_low_value
from hermes_memory.records import Episode, Fact
from hermes_memory.tier2 import Tier2
from hermes_memory.updates.detector import UpdateDetector
from hermes_memory.updates.model import values
from hermes_memory.updates.statement import USER, Statement, clauses, read

log = logging.getLogger(__name__)

EXTRACTOR = "updates-v1"
#: Candidates per clause: the holder's newest believed facts, and those sharing the clause's words.
RECENT = 60
MATCHING = 30


@dataclass(frozen=True, slots=True)
class Closed:
    """One fact closed by a newer statement (``new``: the fact that replaced it)."""

    old: str
    new: Fact
    probability: float


@dataclass(frozen=True, slots=True)
class Applied:
    """What one message changed: the facts it closed, the facts it stored for its own statements."""

    closed: tuple[Closed, ...] = ()
    stored: tuple[Fact, ...] = ()


class StatementUpdates:
    """Applies update decisions to Tier 2. ``detector`` is made on first use (it loads the embedder);
    when it returns None (no meaning-capable embedder) nothing is decided here."""

    def __init__(self, detector: Callable[[], UpdateDetector | None]):
        self._make = detector
        self._detector: UpdateDetector | None = None
        self._made = False
        self._lock = threading.Lock()

    @property
    def detector(self) -> UpdateDetector | None:
        with self._lock:
            if not self._made:
                self._detector = self._make()
                self._made = True
            return self._detector

    def apply(self, tier2: Tier2, episode: Episode, stored: Sequence[tuple[tuple[int, int], Fact]]) -> Applied:
        """Close the facts the user's ``episode`` replaces; ``stored`` holds the facts extracted from it
        (their character span in the message, the stored fact). Returns what was closed and the facts
        it stored for statements extraction had no fact for."""
        if episode.role != "user" or not episode.text.strip():
            return Applied()
        detector = self.detector
        if detector is None:
            return Applied()
        speaker = episode.speaker or USER
        text = episode.text.replace("’", "'")
        own = {fact.uuid for _, fact in stored}
        created: list[Fact] = []
        closed: list[Closed] = []
        said = datetime.fromtimestamp(episode.timestamp, tz=UTC)
        pending: list[tuple[str, Statement, list[Fact], list[Statement]]] = []
        for clause in clauses(text):
            new = read(clause, speaker=speaker, when=said)
            if not new.asserts or new.holder is None:
                continue
            candidates = [
                f for f in self._candidates(tier2, new, speaker, clause)
                if f.uuid not in own and episode.uuid not in f.source_episodes
                and (f.valid_from or f.recorded_at) <= episode.timestamp
            ]  # fmt: skip
            earlier = [read(f.content, speaker=speaker) for f in candidates]
            pending.append((clause, new, candidates, earlier))
        # One encoder call for the whole message (the candidates' vectors are mostly cached).
        detector.vectors([t for _, new, _, earlier in pending for s in (new, *earlier) for t in (s.normal, s.masked)])
        for clause, new, candidates, earlier in pending:
            found = detector.replaced(new, earlier)
            if not found and not self.stated(new, clause):
                continue
            # A statement about a holder is something a later one can replace: it gets a fact even
            # when extraction found no pattern in it ("My GP is Dr. Lindqvist").
            start = text.find(clause)
            by = self._fact_of(tier2, episode, new, stored, (start, start + len(clause)))
            if by.uuid not in own:
                own.add(by.uuid)
                created.append(by)
            for hit in found:
                old = candidates[hit.index]
                if tier2.facts.supersede(
                    old.uuid, by.uuid, actor="ingest", valid_to=episode.timestamp,
                    reason=f"replaced by a newer statement (p={hit.probability:.2f})",
                ):  # fmt: skip
                    closed.append(Closed(old.uuid, by, hit.probability))
        return Applied(tuple(closed), tuple(created))

    @staticmethod
    def stated(new: Statement, clause: str) -> bool:
        """Whether a clause says enough to be a fact of its own: not small talk, and some content or a
        value ("I agree" is none; "My GP is Dr. Lindqvist" is one)."""
        return not is_low_value(clause) or bool(values(new) and not new.negated)

    @staticmethod
    def _candidates(tier2: Tier2, new: Statement, speaker: str, clause: str) -> list[Fact]:
        holder = new.holder or USER
        if holder == USER:
            names = [USER, speaker] if speaker.casefold() != USER else [USER]
        elif holder.startswith("user's "):
            names = [holder] + ([f"{speaker}'s {holder[7:]}"] if speaker.casefold() != USER else [])
        else:
            names = [holder]
        facts = {f.uuid: f for f in tier2.facts.believed_about(names, limit=RECENT)}
        matching = [u for u in tier2.facts.bm25_scores(clause, limit=MATCHING) if u not in facts]
        if matching:
            facts.update(tier2.facts.get_many(matching))
        return list(facts.values())

    @staticmethod
    def _fact_of(
        tier2: Tier2, episode: Episode, new: Statement, stored: Sequence[tuple[tuple[int, int], Fact]],
        span: tuple[int, int],
    ) -> Fact:
        """The fact that states the clause: one extracted from it, else a new one in the third person."""
        inside = [f for (a, b), f in stored if a < span[1] and span[0] < b and f.is_active]
        if inside:
            return inside[0]
        content = new.normal[:1].upper() + new.normal[1:]
        category = classify.category_for("states", content)
        return tier2.facts.store(
            content, category=category, confidence=0.6, source_type="session", source_id=episode.session_id,
            actor="ingest", valid_from=episode.timestamp, subject=new.holder, predicate="states",
            exclusive=False, source_episodes=(episode.uuid,), extractor=EXTRACTOR,
            importance=classify.salience(content, category, first_person=True, confidence=0.6),
        ).fact  # fmt: skip


__all__ = ["EXTRACTOR", "Applied", "Closed", "StatementUpdates"]
