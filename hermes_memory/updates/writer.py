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

import functools
import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from hermes_memory.extract import classify
from hermes_memory.extract.kin import LASTING_PREDICATES
from hermes_memory.extract.temporal import find_temporal
from hermes_memory.extract.types import TemporalMention
from hermes_memory.extract.wording import in_third_person, is_low_value, is_small_talk
from hermes_memory.records import RESTATEMENT, Episode, Fact
from hermes_memory.tier2 import Tier2
from hermes_memory.updates.detector import UpdateDetector
from hermes_memory.updates.holders import about_same, holder_forms, speaks_of_any, users_own
from hermes_memory.updates.message import read_message
from hermes_memory.updates.person import in_words_of_the_user
from hermes_memory.updates.readings import content, timeless_values, values
from hermes_memory.updates.statement import USER, Known, Statement, arranged_at, read

log = logging.getLogger(__name__)

#: Entity types that hold attributes of their own (a name of one of these at a clause's start is its
#: holder; any other capitalised word there is part of the user's world: "Jenkins got replaced").
HOLDER_TYPES = frozenset({"person", "pet", "project"})
NOTHING_KNOWN = Known()
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
    """What one message changed: the facts it closed."""

    closed: tuple[Closed, ...] = ()


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

    def apply(
        self,
        tier2: Tier2,
        episode: Episode,
        stored: Sequence[tuple[tuple[int, int], Fact]],
        known: Known = NOTHING_KNOWN,
    ) -> Applied:
        """Close the facts the user's ``episode`` replaces; ``stored`` holds the facts extracted from it
        (their character span in the message, the stored fact), ``known`` the names the memory knows.
        Returns what was closed. A fact it stores for a statement extraction had no fact for restates the
        clause (``records.RESTATEMENT``): it is not embedded, its turn is what recall finds."""
        if episode.role != "user" or not episode.text.strip():
            return Applied()
        detector = self.detector
        if detector is None:
            return Applied()
        speaker = episode.speaker or USER
        text = episode.text.replace("’", "'")
        own = {fact.uuid for _, fact in stored}
        closed: list[Closed] = []
        said = datetime.fromtimestamp(episode.timestamp, tz=UTC)
        pending: list[tuple[str, Statement, list[Fact], list[Statement]]] = []
        # Every clause of the message is context for the others, asserting or not: in "Spanish never
        # clicked, so I'm on Italian now" the negated first clause names the value the second one ends.
        # A clause may be read twice: as said, and as what an apposition in it sets ("My partner, Alex,
        # says hi": "my partner is Alex"); each reading is weighed, each stated by the clause.
        told = _Told(tier2)  # "femi moved up a group": the Femi the memory was told of, in lower case
        heard = read_message(
            text, speaker=speaker, when=said, holders=known.holders, things=known.things, subjects=told
        )
        for clause, new in heard:
            rearranges = detector.rearranges(new)  # an arrangement said anew asserts nothing yet
            if not (new.asserts or rearranges) or not speaks_of_any(new) or not self.stated(new, clause):
                continue  # small talk ("Thanks, Mel", "I agree") neither updates nor is updated
            candidates = [
                f for f in self._candidates(tier2, new, speaker, clause)
                if f.uuid not in own and episode.uuid not in f.source_episodes
                and _said_before(tier2, f, episode.timestamp) and _statement(f.content)
                and f.predicate not in LASTING_PREDICATES
            ]  # fmt: skip
            read_back = [(f, _READ_BACK.read(f.content, speaker, known)) for f in candidates]
            # A fact that names a day after this message is an arrangement still to come: what an
            # arrangement said anew replaces, and a state even when told in the past or as a plan.
            read_back = [(f, arranged_at(old, said) if rearranges or not detector.states(old) else old)
                         for f, old in read_back]  # fmt: skip
            mine = [(f, old) for f, old in read_back if not _someone_elses(f, old, new, speaker)]
            pending.append((clause, new, [f for f, _ in mine], [old for _, old in mine]))
        # One encoder call for the whole message (the candidates' vectors are mostly cached), for the
        # statements ``replaced`` will weigh: most clauses have no earlier statement it could end, and
        # embedding them all cost a third of the texts ingest embedded.
        weighed = [detector.comparable(new, olds) for _, new, _, olds in pending]
        detector.vectors([
            t for (_, new, _, olds), weighs in zip(pending, weighed, strict=True) if weighs
            for s in (new, *(olds[i] for i in weighs)) for t in (s.normal, s.masked)
        ])  # fmt: skip
        for (clause, new, candidates, earlier), weighs in zip(pending, weighed, strict=True):
            found = detector.replaced(
                new, earlier, [n for _, n in heard if n is not new],
                [frozenset(f.source_episodes) for f in candidates], comparable=weighs,
            )  # fmt: skip
            # A statement about a holder is something a later one can replace: it gets a fact even
            # when extraction found no pattern in it ("My GP is Dr. Lindqvist").
            # A clause about nobody known ("The book club fizzled out") gets one only when it replaced, and
            # so does what a clause takes as given ("my Pixel 8" in "how do I stop my Pixel 8 from ...").
            own_fact = [None] if (new.holder is not None or new.mentions) and not new.presupposed else []
            for hit in [*own_fact, *found]:
                said_by, reading = (
                    (clause, new)
                    if hit is None
                    else self._replacement(detector, pending, clause, new, earlier[hit.index], known)
                )
                start = text.find(said_by)
                # A reading the clause does not say word for word (an apposition's) states its own fact.
                extracted = stored if reading.text == said_by else ()
                by = self._fact_of(tier2, episode, reading, extracted, (start, start + len(said_by)))
                if hit is None:
                    continue
                old = candidates[hit.index]
                # Ended when the user said so, a plan given up before its day too (it never held then).
                if tier2.facts.supersede(
                    old.uuid, by.uuid, actor="ingest", valid_to=episode.timestamp,
                    reason=f"replaced by a newer statement (p={hit.probability:.2f})",
                ):  # fmt: skip
                    closed.append(Closed(old.uuid, by, hit.probability))
        return Applied(tuple(closed))

    @staticmethod
    def _replacement(
        detector: UpdateDetector,
        pending: Sequence[tuple[str, Statement, list[Fact], list[Statement]]],
        clause: str,
        new: Statement,
        old: Statement,
        known: Known = NOTHING_KNOWN,
    ) -> tuple[str, Statement]:
        """The clause of the message that states the new value of ``old``'s attribute: in "Traded the
        Mazda in, and I drive a Volvo now" the first clause ends the old value, the second names the new
        one. The clause nearest ``old`` in meaning that names a value ``old`` lacks (a name or number, or
        an entity the memory knows even at the clause's start: "McFit is my gym"), with its reading; else
        ``clause`` and ``new``, the reading that replaced ``old``."""
        mine = values(old) | set(old.words)

        def named(n: Statement) -> set[str]:
            return values(n) | {w for w in n.words if w in known.things or w in known.holders}

        options = [(c, n) for c, n, _, _ in pending if c != clause and about_same(old, n) and named(n) - mine]
        if not options:
            return clause, new
        vec = detector.vectors([old.normal, *(n.normal for _, n in options)])
        near, best = max((float(vec[old.normal] @ vec[n.normal]), k) for k, (_, n) in enumerate(options))
        return options[best] if near >= detector.model.floor else (clause, new)

    @staticmethod
    def stated(new: Statement, clause: str) -> bool:
        """Whether a clause says enough to be a fact of its own: not small talk, and some content or a
        value ("I agree" is none; "My GP is Dr. Lindqvist" is one)."""
        if clause.lstrip().startswith("["):
            return False  # "[shares an image: ...]": a caption, not the user's words
        named = {m.casefold() for m in new.mentions} | {(new.holder or "").casefold()}
        if is_small_talk(clause):  # "I keep trying", but not "I keep my notes in Notion"
            return bool(values(new) - named)
        return not is_low_value(clause) or bool(content(new) - named)

    @staticmethod
    def _candidates(tier2: Tier2, new: Statement, speaker: str, clause: str) -> list[Fact]:
        if new.holder is None:  # "The vet put Luna on a renal diet": about the holders it names
            names = sorted(new.mentions)
            facts = {f.uuid: f for f in tier2.facts.believed_about(names, limit=RECENT)} if names else {}
            if new.topic or new.set_right or values(new):  # "The book club fizzled out": whoever spoke of it
                facts.update(tier2.facts.get_many(list(tier2.facts.bm25_scores(clause, limit=MATCHING))))
            return list(facts.values())
        holder = new.holder
        if holder == USER:
            names = [USER, speaker] if speaker.casefold() != USER else [USER]
        elif holder.startswith("user's "):
            forms = holder_forms(holder)  # "Dad ..." speaks of what was said of "my father"
            names = forms + ([f"{speaker}'s {f[7:]}" for f in forms] if speaker.casefold() != USER else [])
        else:
            names = [holder]
        facts = {f.uuid: f for f in tier2.facts.believed_about(names, limit=RECENT)}
        matching = [u for u in tier2.facts.bm25_scores(clause, limit=MATCHING) if u not in facts]
        if matching:
            facts.update(tier2.facts.get_many(matching))
        return list(facts.values())

    @staticmethod
    def _fact_of(
        tier2: Tier2,
        episode: Episode,
        new: Statement,
        stored: Sequence[tuple[tuple[int, int], Fact]],
        span: tuple[int, int],
    ) -> Fact:
        """The fact that states the clause: one extracted from it that names the clause's values (in "I
        cancelled my FitX contract; McFit is my gym" a fact of the first clause may span both; a day or
        month is no such value, extraction writes it as a date), else a new one in the third person. A
        fact this message first told comes before one an earlier message told and this one said again
        (in "Passed the bar! I'm an associate at Brandt & Koenig now" the associate is what is new, not
        "the user works at Brandt & Koenig", which the paralegal's message told)."""
        overlap = {f.uuid: min(b, span[1]) - max(a, span[0]) for (a, b), f in stored if f.is_active}
        inside = [f for _, f in stored if overlap.get(f.uuid, 0) > 0 and states_values(f.content, new)]
        if inside:  # the extracted fact that covers most of the clause, one first told here if any
            return max(inside, key=lambda f: (f.source_episodes[:1] == (episode.uuid,), overlap[f.uuid]))
        said = datetime.fromtimestamp(episode.timestamp, tz=UTC)
        content = _said_by(new, episode.speaker, find_temporal(new.text, said))
        category = classify.category_for("states", content)
        return tier2.facts.store(
            content, category=category, confidence=0.6, source_type="session", source_id=episode.session_id,
            actor="ingest", valid_from=episode.timestamp, subject=_subject(new, episode), predicate="states",
            exclusive=False, source_episodes=(episode.uuid,), extractor=RESTATEMENT,
            importance=classify.salience(content, category, first_person=True, confidence=0.6),
        ).fact  # fmt: skip


def states_values(content: str, statement: Statement) -> bool:
    """Whether an extracted fact's ``content`` can stand for a clause it overlaps: it names one of the
    clause's values, if the clause has any (a day or month is none: extraction writes the date). "User has
    a sister named Ana" does not state "Ana, my sister, lives in Porto"."""
    named = timeless_values(statement)
    return not named or any(v in content.lower() for v in named)


def _since(fact: Fact) -> float:
    """When a fact began to hold (its world time, else when it was recorded)."""
    if fact.valid_from is not None:
        return fact.valid_from
    return fact.recorded_at if fact.recorded_at is not None else fact.created_at


def _said_before(tier2: Tier2, fact: Fact, at: float) -> bool:
    """Whether ``fact`` was stated by ``at``: it held by then, or, dated later ("I'm flying to Oslo on
    Friday"), the turns it was taken from were said by then (a fact written without one: when it was
    recorded). A plan can be given up or changed before its day."""
    if _since(fact) <= at:
        return True
    if not fact.source_episodes:
        return (fact.recorded_at if fact.recorded_at is not None else fact.created_at) <= at
    rows = tier2.episodes.ids_for(list(fact.source_episodes))
    return any(e.timestamp <= at for e in tier2.episodes.by_ids(list(rows.values())).values())


@functools.lru_cache(maxsize=16384)
def _statement(content: str) -> bool:
    """Whether a stored fact states something a newer statement can replace: not small talk
    ("The user is so happy for you"), not a shared picture's caption."""
    return not content.lstrip().startswith("[") and not is_low_value(content)


class _Asked(Collection[str]):
    """Known names as ``read`` takes them, noting each name it asks about and the answer: a reading
    depends on the known names only through these answers."""

    def __init__(self, names: frozenset[str]):
        self._names = names
        self.known: set[object] = set()  # the names asked about that it holds
        self.unknown: set[object] = set()  # and those it does not
        self.whole = False  # listed or counted: the reading may depend on every name

    def __contains__(self, name: object) -> bool:
        found = name in self._names
        (self.known if found else self.unknown).add(name)
        return found

    def __iter__(self) -> Iterator[str]:
        self.whole = True
        return iter(self._names)

    def __len__(self) -> int:
        self.whole = True
        return len(self._names)

    def same_for(self, names: frozenset[str]) -> bool:
        """Whether ``names`` answer every question this reading asked as its own names did."""
        if self.whole:
            return names == self._names
        return self.known <= names and names.isdisjoint(self.unknown)


@dataclass(frozen=True, slots=True)
class _Reading:
    statement: Statement
    holders: _Asked
    things: _Asked


class _ReadBack:
    """Stored facts read as statements: the same facts are candidates for many later clauses, while
    the names the memory knows grow with every turn. A reading is reused while the known names answer
    every name it asked about as before (most facts name none of the names learned since)."""

    def __init__(self, size: int = 16384, variants: int = 4):
        self._readings: OrderedDict[tuple[str, str], list[_Reading]] = OrderedDict()
        self._size = size
        self._variants = variants
        self._lock = threading.Lock()

    def read(self, content: str, speaker: str, known: Known) -> Statement:
        key = (content, speaker)
        with self._lock:
            seen = list(self._readings.get(key, ()))
        for r in seen:
            if r.holders.same_for(known.holders) and r.things.same_for(known.things):
                return r.statement
        holders, things = _Asked(known.holders), _Asked(known.things)
        statement = read(content, speaker=speaker, holders=holders, things=things)
        with self._lock:
            kept = self._readings.setdefault(key, [])
            kept.insert(0, _Reading(statement, holders, things))
            del kept[self._variants :]
            self._readings.move_to_end(key)
            while len(self._readings) > self._size:
                self._readings.popitem(last=False)
        return statement


_READ_BACK = _ReadBack()


class _Told:
    """The names the memory holds facts about (``read``'s ``subjects``), each asked of Tier 2 once."""

    def __init__(self, tier2: Tier2) -> None:
        self._tier2 = tier2
        self._asked: dict[str, bool] = {}

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        if name not in self._asked:
            self._asked[name] = self._tier2.facts.speaks_of(name)
        return self._asked[name]


def _someone_elses(fact: Fact, old: Statement, new: Statement, speaker: str) -> bool:
    """Whether ``fact`` reads (as ``old``) as the speaker's own, as ``new`` does, while its subject is
    someone else: a statement with no subject ("Learning the cello on Sundays") or an older one kept as
    "the user ..." that another person made. Where several people speak, Alice's "My GP is Dr. Osei now"
    ends nothing Bob said of his GP; her own and her people's ("Alice's dad") stay hers to update."""
    owner = (fact.subject or "").casefold()
    if not owner or not (users_own(new.holder) and users_own(old.holder)):
        return False  # a curated entry or a tool's write names no one: the user's, as ever
    mine = (speaker.casefold(), USER, f"the {USER}")
    return owner not in mine and not owner.startswith(tuple(f"{name}'s " for name in mine))


def _said_by(new: Statement, speaker: str | None, times: Sequence[TemporalMention]) -> str:
    """A statement as a fact, in the third person as extraction words it ("I've been vegetarian for years
    and still love it": "The user has been vegetarian for years and still loves it"), the user named as
    extraction names them: "Bob's GP is Dr. Lindqvist" when Bob said "My GP is Dr. Lindqvist" (in a
    store where several people speak, "the user" would be whoever reads it next). A clause spoken to
    someone ("you") is its normal form with its verbs agreeing ("I am sending you the photos": "The user is
    sending you the photos"). ``times``: the dates in the clause, written as dates ("last Saturday" -> "on
    28 November 2026")."""
    named = speaker if speaker and speaker.casefold() not in (USER, f"the {USER}") else None
    worded = in_third_person(new.text, named or f"the {USER}", times)
    if worded is not None:
        return worded
    normal = in_words_of_the_user(new.text, named or USER)
    if named:
        normal = re.sub(r"\bthe user\b", lambda _: named, normal, flags=re.IGNORECASE)
    return normal[:1].upper() + normal[1:]


def _subject(new: Statement, episode: Episode) -> str:
    """The fact's subject as extraction spells it: the speaker's name ("the user" without one) for the
    user's own statements, the holder's name otherwise."""
    speaker = episode.speaker or f"the {episode.role}"
    if new.holder == USER or new.holder is None:
        return speaker
    if new.holder.startswith("user's "):
        return f"{speaker}'s {new.holder[len(USER) + 3 :]}"
    return new.holder


__all__ = ["HOLDER_TYPES", "Applied", "Closed", "StatementUpdates", "states_values"]
