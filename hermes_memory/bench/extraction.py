"""Extraction-quality benchmark: hand-labelled conversational turns, scored against what the store keeps.

    python -m hermes_memory.bench.extraction [--data F] [--json OUT] [--misses N]

Each conversation of the labelled set (``tests/data/extraction_bench.json``; its ``about`` field holds the
labelling rules) goes into a fresh memory through the public write path, as Hermes would write it:
"hermes" conversations as ``remember_turn(user, assistant, user_name=..., assistant_name=...)`` pairs,
"human" (LoCoMo-style) ones one ``remember_message`` per turn with the speaker's name; each turn at its own
time; then ``flush``. What the store then holds is compared with the labels (hashing embedder: vectors
play no part in extraction).

Matching (documented here, tested in tests/unit/test_extraction_bench.py):
- names are compared case-insensitively with whitespace, punctuation (but apostrophes) and a leading
  article dropped ("&" reads "and"); in "hermes" conversations "user", "the user", "me" and the user's
  name all read "user", also as an owner ("Dana's dog" = "user's dog");
- entities, per conversation: (name, type), tool and tech one type; a stored entity matches by its name or
  any of its aliases; the conversation's participants are left out on both sides;
- relations, per conversation: (subject, type, object) with the endpoints alias-aware ("a|b" objects
  too); moved_to and lives_in count as one edge type, like adopted/has_pet, likes/loves/enjoys and
  works_at/works_for;
- facts, per turn (a stored fact belongs to every turn in its ``source_episodes``): subject alias-aware;
  predicate equal up to synonyms (owns = has_pet); the object equal for predicates whose object is an
  entity (lives_in, works_at, has_pet, ...), else the labelled key phrase must occur (whole words) in the
  stored object, or in the stored sentence when there is no object; a labelled ``states`` fact matches a
  stored fact of any predicate whose sentence contains the key phrase; "a|b" in a label lists acceptable
  alternatives. "facts" also lets a stored ``states`` sentence (no predicate) match a labelled fact of any
  predicate when it names the subject and contains the object: the sentence is right, only untyped;
  "typed facts" does not (supersession needs the predicate);
- dates, per turn: the (start, end) days of the timeline events that came from the turn against the
  labelled periods (end exclusive). ``date_resolution`` checks the resolver alone: for each labelled date
  phrase, the time mention ``extract`` finds in it and whether its period is the labelled one.
Error classes: facts with the assistant as subject, facts from assistant turns, facts from user turns
that are only questions/greetings/acknowledgements, junk entities (sentence-length names, booleans,
status strings, tool echoes), one name stored as several entities, dates in the future of a turn that only
states past periods.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from hermes_memory.errors import ValidationError

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "tests" / "data" / "extraction_bench.json"
CATEGORIES = ("entities", "relations", "facts", "typed facts", "dates")
ENTITY_TYPES = frozenset(
    {"person", "place", "org", "project", "tool", "tech", "concept", "event", "pet", "other"}
)
ROLES = frozenset({"user", "assistant", "human"})
KINDS = frozenset({"hermes", "human"})
_TYPE_CLASS = {"tech": "tool"}
_SYNONYMS = {
    "loves": "likes",
    "enjoys": "likes",
    "hates": "dislikes",
    "works_for": "works_at",
    "employed_by": "works_at",
    "from": "is_from",
    "grew_up_in": "is_from",
    "owns_pet": "has_pet",
    "owns": "has_pet",
}
_EDGE_SYNONYMS = {**_SYNONYMS, "moved_to": "lives_in", "adopted": "has_pet"}
#: Predicates whose object is an entity: matched by equality, not by key phrase.
ENTITY_PREDICATES = frozenset(
    """lives_in lived_in moved_to moved_from works_at worked_at studies_at studied_at is_from has_pet
    sibling_of child_of parent_of married_to partner_of friend_of relative_of colleague_of knows member_of
    visited""".split()
)
_STATUS = frozenset(
    {"ok", "okay", "true", "false", "none", "null", "yes", "no", "done", "success", "error", "failed",
     "saved", "noted", "got it", "entry added", "entry updated", "entry removed", "memory saved",
     "not found"}
)  # fmt: skip
_JUNK_CHARS = re.compile(r"[=<>{}\[\]()|]")
_PUNCT = re.compile(r"[^\w\s']")
_POSSESSIVE = re.compile(r"^(.+?)'s (.+)$")


# ---------------------------------------------------------------------------------------------- dataset


@dataclass(frozen=True, slots=True)
class Turn:
    """One labelled turn. Label tuples: entities (name, type), relations and facts (subject, predicate,
    object), dates (phrase, start, end) with ISO days, end exclusive."""

    index: int
    speaker: str
    role: str
    time: datetime
    text: str
    entities: tuple[tuple[str, str], ...]
    relations: tuple[tuple[str, str, str], ...]
    facts: tuple[tuple[str, str, str], ...]
    dates: tuple[tuple[str, str, str], ...]

    @property
    def is_empty(self) -> bool:
        return not (self.entities or self.relations or self.facts or self.dates)


@dataclass(frozen=True, slots=True)
class Conversation:
    id: str
    kind: str
    turns: tuple[Turn, ...]
    user_name: str | None = None
    assistant_name: str = "Hermes"
    speakers: tuple[str, ...] = ()

    @property
    def participants(self) -> tuple[str, ...]:
        if self.kind == "hermes":
            return (
                "user",
                "the user",
                *([self.user_name] if self.user_name else []),
                *self._assistant_names(),
            )
        return self.speakers

    def _assistant_names(self) -> tuple[str, ...]:
        return (self.assistant_name, "assistant", "the assistant")

    @property
    def assistant_names(self) -> frozenset[str]:
        return frozenset(norm(n) for n in self._assistant_names()) if self.kind == "hermes" else frozenset()


def _need(cond: bool, where: str, what: str) -> None:
    if not cond:
        raise ValidationError(f"{where}: {what}")


def _strings(item: Any, keys: tuple[str, ...], where: str) -> tuple[str, ...]:
    _need(isinstance(item, dict) and set(item) == set(keys), where, f"expected an object with keys {keys}")
    values = tuple(item[k] for k in keys)
    _need(
        all(isinstance(v, str) and v.strip() for v in values), where, "every value must be a non-empty string"
    )
    return values


def _day(text: str, where: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError as exc:
        raise ValidationError(f"{where}: {text!r} is not an ISO date (YYYY-MM-DD)") from exc


def _turn(raw: Any, index: int, where: str) -> Turn:
    keys = {"speaker", "role", "time", "text", "entities", "relations", "facts", "dates"}
    _need(isinstance(raw, dict) and set(raw) == keys, where, f"a turn has exactly the keys {sorted(keys)}")
    _need(raw["role"] in ROLES, where, f"role must be one of {sorted(ROLES)}, got {raw['role']!r}")
    _need(
        isinstance(raw["text"], str) and bool(raw["text"].strip()), where, "text must be a non-empty string"
    )
    _need(isinstance(raw["speaker"], str) and bool(raw["speaker"].strip()), where, "speaker must be a name")
    try:
        when = datetime.fromisoformat(str(raw["time"]).replace("Z", "+00:00"))
    except ValueError as exc:
        raise ValidationError(f"{where}: time {raw['time']!r} is not ISO 8601") from exc
    _need(when.tzinfo is not None, where, "time must carry a zone (UTC, 'Z')")
    for key in ("entities", "relations", "facts", "dates"):
        _need(isinstance(raw[key], list), where, f"{key} must be a list")
    entities = tuple(_strings(e, ("name", "type"), f"{where} entity") for e in raw["entities"])
    for name, etype in entities:
        _need(etype in ENTITY_TYPES, where, f"entity {name!r} has unknown type {etype!r}")
    relations = tuple(
        _strings(r, ("subject", "type", "object"), f"{where} relation") for r in raw["relations"]
    )
    facts = tuple(_strings(f, ("subject", "predicate", "object"), f"{where} fact") for f in raw["facts"])
    dates = tuple(_strings(d, ("phrase", "start", "end"), f"{where} date") for d in raw["dates"])
    for phrase, start, end in dates:
        _need(_day(start, where) < _day(end, where), where, f"date {phrase!r} must end after it starts")
        _need(phrase.lower() in raw["text"].lower(), where, f"date phrase {phrase!r} is not in the text")
    return Turn(
        index, raw["speaker"], raw["role"], when.astimezone(UTC), raw["text"],
        entities, relations, facts, dates,  # type: ignore[arg-type]
    )  # fmt: skip


def load_dataset(path: str | Path) -> list[Conversation]:
    """The labelled conversations of ``path``. Raises ValidationError naming the first bad place."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValidationError(f"cannot read {path}: {exc}") from exc
    _need(isinstance(data, dict) and isinstance(data.get("conversations"), list), str(path),
          "expected an object with a 'conversations' list")  # fmt: skip
    out: list[Conversation] = []
    seen: set[str] = set()
    for raw in data["conversations"]:
        where = f"conversation {raw.get('id') if isinstance(raw, dict) else raw!r}"
        _need(isinstance(raw, dict) and isinstance(raw.get("id"), str), where, "needs a string 'id'")
        _need(raw["id"] not in seen, where, "duplicate id")
        seen.add(raw["id"])
        _need(raw.get("kind") in KINDS, where, f"kind must be one of {sorted(KINDS)}")
        _need(
            isinstance(raw.get("turns"), list) and bool(raw["turns"]), where, "needs a non-empty 'turns' list"
        )
        turns = tuple(_turn(t, i, f"{where} turn {i}") for i, t in enumerate(raw["turns"]))
        if raw["kind"] == "hermes":
            user_name, assistant = raw.get("user_name"), raw.get("assistant_name") or "Hermes"
            _need(
                user_name is None or isinstance(user_name, str), where, "user_name must be a string or null"
            )
            for turn in turns:
                expected = assistant if turn.role == "assistant" else (user_name or "user")
                _need(turn.role != "human", where, "a hermes conversation has user and assistant turns")
                _need(turn.speaker == expected, where, f"turn {turn.index} speaker should be {expected!r}")
            out.append(Conversation(raw["id"], "hermes", turns, user_name, assistant))
        else:
            speakers = raw.get("speakers")
            _need(isinstance(speakers, list) and len(speakers) >= 2, where, "needs a 'speakers' list")
            for turn in turns:
                _need(turn.role == "human" and turn.speaker in speakers, where,
                      f"turn {turn.index} must be role 'human' by one of the speakers")  # fmt: skip
            out.append(Conversation(raw["id"], "human", turns, speakers=tuple(speakers)))
    return out


# ----------------------------------------------------------------------------------------- normalising


def norm(text: str) -> str:
    """Lower case, "&" as "and", punctuation (but apostrophes) and a leading article dropped."""
    text = text.replace("’", "'").replace("&", " and ").casefold()
    text = " ".join(_PUNCT.sub(" ", text).split())
    for article in ("the ", "a ", "an "):
        if text.startswith(article):
            return text[len(article) :]
    return text


def canonical(name: str, users: frozenset[str]) -> str:
    """``norm`` with every name of the user read as "user", also as an owner ("Dana's dog")."""
    key = norm(name)
    if key in users:
        return "user"
    match = _POSSESSIVE.match(key)
    if match and match.group(1) in users:
        return f"user's {match.group(2)}"
    return key


def user_names(conv: Conversation) -> frozenset[str]:
    if conv.kind != "hermes":
        return frozenset()
    names = {"user", "me", "i"}
    if conv.user_name:
        names.add(norm(conv.user_name))
    return frozenset(names)


def _contains(haystack: str, needle: str) -> bool:
    return bool(needle) and re.search(rf"(?<!\w){re.escape(needle)}(?!\w)", haystack) is not None


def is_junk_entity(name: str) -> bool:
    """A name no graph node should have: a sentence, a boolean/status word, a tool echo."""
    key = norm(name)
    return (
        not key
        or len(key.split()) >= 6
        or len(name) > 60
        or key in _STATUS
        or _JUNK_CHARS.search(name) is not None
        or key.isdigit()
    )


# ------------------------------------------------------------------------------------------ prediction


@dataclass(slots=True)
class StoredFact:
    subject: str
    predicate: str
    object: str | None
    content: str


@dataclass(slots=True)
class Prediction:
    """What the store holds after one conversation, facts and dates by turn index."""

    entities: list[tuple[str, str, tuple[str, ...]]] = field(default_factory=list)  # name, type, aliases
    relations: list[tuple[str, str, str]] = field(default_factory=list)
    facts: dict[int, list[StoredFact]] = field(default_factory=dict)
    dates: dict[int, set[tuple[str, str]]] = field(default_factory=dict)
    facts_all: list[StoredFact] = field(default_factory=list)
    #: turns no stored episode stands for (their facts and dates cannot be attributed)
    unmapped_turns: int = 0


def predict(conv: Conversation, overrides: dict[str, Any] | None = None) -> Prediction:
    """Ingest ``conv`` into a fresh temporary memory and read back what it stored."""
    from hermes_memory.api.memory_api import MemoryAPI

    settings = {"tier3.embedding_model": "hashing", "tier3.backend": "memory", **(overrides or {})}
    with (
        tempfile.TemporaryDirectory(prefix="hm-xbench-") as home,
        MemoryAPI(hermes_home=home, actor="bench", **settings) as api,
    ):
        _ingest(api, conv)
        flushed = api.flush(timeout=None)
        if not flushed["success"] or not flushed["data"]["drained"]:
            raise RuntimeError(f"flush failed: {flushed}")
        return _read_back(api, conv)


def _ingest(api: Any, conv: Conversation) -> None:
    session = f"bench-{conv.id}"
    turns = list(conv.turns)
    i = 0
    while i < len(turns):
        turn = turns[i]
        if conv.kind == "human":
            env = api.remember_message(turn.text, session, turn.time, role="user", speaker=turn.speaker,
                                       metadata={"bench_turn": {"user": turn.index}})  # fmt: skip
            i += 1
        else:
            user = turn if turn.role == "user" else None
            reply_at = i + 1 if user is not None else i
            reply = turns[reply_at] if reply_at < len(turns) and turns[reply_at].role == "assistant" else None
            indexes = {role: t.index for role, t in (("user", user), ("assistant", reply)) if t is not None}
            env = api.remember_turn(
                user.text if user else None, reply.text if reply else None, session,
                (user or turn).time, user_name=conv.user_name, assistant_name=conv.assistant_name,
                metadata={"bench_turn": indexes},
            )  # fmt: skip
            i += len(indexes)
        if not env["success"]:
            raise RuntimeError(f"ingest of {conv.id} turn {turn.index} failed: {env['error']}")


def _read_back(api: Any, conv: Conversation) -> Prediction:
    from hermes_memory.tier2.readback import all_episodes, all_facts, event_spans

    db, admin = api.tier2.db, api.tier2.admin()
    turn_of: dict[str, int] = {}
    for episode in all_episodes(db):
        index = (episode.metadata.get("bench_turn") or {}).get(episode.role)
        if isinstance(index, int):
            turn_of[episode.uuid] = index
    pred = Prediction(unmapped_turns=len({t.index for t in conv.turns} - set(turn_of.values())))
    names: dict[str, str] = {}
    for entity in admin.entities.all():
        names[entity.uuid] = entity.name
        pred.entities.append((entity.name, entity.entity_type, entity.aliases))
    for relation in admin.relations.all():
        src, dst = names.get(relation.from_entity_id), names.get(relation.to_entity_id)
        if src is not None and dst is not None:
            pred.relations.append((src, relation.relation_type, dst))
    for stored in all_facts(db):
        fact = StoredFact(stored.subject or "", stored.predicate or "", stored.object, stored.content)
        pred.facts_all.append(fact)
        for source in stored.source_episodes:
            if source in turn_of:
                pred.facts.setdefault(turn_of[source], []).append(fact)
    for span in event_spans(db, "event"):
        start = datetime.fromtimestamp(span.timestamp, tz=UTC)
        end = datetime.fromtimestamp(span.end_timestamp, tz=UTC) if span.end_timestamp else start
        end_day = (
            end.date() if end > start and end.time() == datetime.min.time() else end.date() + timedelta(1)
        )
        for source in span.source_episodes:
            if source in turn_of:
                pred.dates.setdefault(turn_of[source], set()).add(
                    (start.date().isoformat(), end_day.isoformat())
                )
    return pred


def prediction_from_labels(conv: Conversation) -> Prediction:
    """The prediction a perfect extractor would store for ``conv`` (the scorer's fixed point)."""
    pred = Prediction()
    seen: set[tuple[str, str]] = set()
    for turn in conv.turns:
        for name, etype in turn.entities:
            if (name, etype) not in seen:
                seen.add((name, etype))
                pred.entities.append((name, etype, ()))
        for subject, edge, obj in turn.relations:
            rel = (subject, edge, obj.split("|")[0])
            if rel not in pred.relations:
                pred.relations.append(rel)
        for subject, predicate, obj in turn.facts:
            first = obj.split("|")[0]
            fact = StoredFact(subject, predicate, None if predicate == "states" else first,
                              f"{subject} {predicate.replace('_', ' ')} {first}")  # fmt: skip
            pred.facts.setdefault(turn.index, []).append(fact)
            pred.facts_all.append(fact)
        if turn.dates:
            pred.dates[turn.index] = {(start, end) for _, start, end in turn.dates}
    return pred


# --------------------------------------------------------------------------------------------- scoring


@dataclass(slots=True)
class Tally:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else float(self.fn == 0)

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    def as_dict(self) -> dict[str, float | int]:
        return {
            "labelled": self.tp + self.fn,
            "stored": self.tp + self.fp,
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
            "precision": round(self.precision, 4),
            "recall": round(self.recall, 4),
            "f1": round(self.f1, 4),
        }


@dataclass(slots=True)
class Report:
    tallies: dict[str, Tally] = field(default_factory=lambda: {c: Tally() for c in CATEGORIES})
    resolution: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    misses: dict[str, list[str]] = field(default_factory=dict)
    turns: int = 0
    conversations: int = 0
    unmapped_turns: int = 0

    def miss(self, category: str, line: str) -> None:
        self.misses.setdefault(category, []).append(line)


def _type_class(entity_type: str) -> str:
    return _TYPE_CLASS.get(entity_type, entity_type)


class _Names:
    """Alias-aware name forms of one conversation's stored entities."""

    def __init__(self, conv: Conversation, pred: Prediction):
        self.users = user_names(conv)
        self._forms: dict[str, set[str]] = {}
        for name, _, aliases in pred.entities:
            forms = {self.key(name), *(self.key(a) for a in aliases)}
            for form in list(forms):
                self._forms.setdefault(form, set()).update(forms)

    def key(self, name: str) -> str:
        return canonical(name, self.users)

    def forms(self, name: str) -> set[str]:
        key = self.key(name)
        return {key, *self._forms.get(key, ())}


def _fact_matches(gold: tuple[str, str, str], fact: StoredFact, names: _Names, *, typed: bool) -> bool:
    """Whether a stored fact says what a labelled one says; untyped, a stored ``states`` sentence that
    names the labelled subject and object counts whatever the labelled predicate."""
    subject, predicate, obj = gold
    if names.key(subject) not in names.forms(fact.subject):
        return False
    keys = [norm(alt) for alt in obj.split("|")]
    sentence = norm(fact.content)
    if predicate == "states" or (fact.predicate == "states" and not typed):
        return any(_contains(sentence, k) for k in keys)
    if _SYNONYMS.get(fact.predicate, fact.predicate) != _SYNONYMS.get(predicate, predicate):
        return False
    if predicate in ENTITY_PREDICATES:
        forms = names.forms(fact.object or "")
        return any(names.key(alt) in forms for alt in obj.split("|"))
    text = norm(fact.object) if fact.object else sentence
    return any(_contains(text, k) for k in keys)


def score_conversation(conv: Conversation, pred: Prediction, report: Report) -> None:
    """Add one conversation's counts to ``report``."""
    names = _Names(conv, pred)
    participants = {names.key(p) for p in conv.participants}
    report.conversations += 1
    report.turns += len(conv.turns)
    report.unmapped_turns += pred.unmapped_turns
    _score_entities(conv, pred, names, participants, report)
    _score_relations(conv, pred, names, report)
    assistants = conv.assistant_names
    report.errors["facts_about_assistant"] += sum(norm(f.subject) in assistants for f in pred.facts_all)
    for turn in conv.turns:
        _score_facts(conv, turn, pred.facts.get(turn.index, []), names, report)
        _score_dates(conv, turn, pred.dates.get(turn.index, set()), report)


def _score_entities(
    conv: Conversation, pred: Prediction, names: _Names, participants: set[str], report: Report
) -> None:
    gold: dict[tuple[str, str], str] = {}
    for turn in conv.turns:
        for name, etype in turn.entities:
            key = names.key(name)
            if key not in participants:
                gold.setdefault((key, _type_class(etype)), f"{name} ({etype})")
    tally = report.tallies["entities"]
    stored = Counter(names.key(name) for name, _, _ in pred.entities)
    report.errors["names_stored_as_several_entities"] += sum(n - 1 for n in stored.values() if n > 1)
    gold_names = {k for k, _ in gold}
    for name, etype, aliases in pred.entities:
        forms = {names.key(name), *(names.key(a) for a in aliases)}
        if names.key(name) in participants:
            continue
        if is_junk_entity(name):
            report.errors["junk_entities"] += 1
        hit = next((k for k in gold if k[0] in forms and k[1] == _type_class(etype)), None)
        if hit is not None:
            tally.tp += 1
            del gold[hit]
            continue
        tally.fp += 1
        if forms & gold_names:
            report.errors["entities_with_wrong_type"] += 1
        report.miss("entities", f"FP {conv.id}: {name!r} ({etype})")
    for label in gold.values():
        tally.fn += 1
        report.miss("entities", f"FN {conv.id}: {label}")


def _score_relations(conv: Conversation, pred: Prediction, names: _Names, report: Report) -> None:
    gold: dict[tuple[str, str, frozenset[str]], str] = {}
    for turn in conv.turns:
        for s, t, o in turn.relations:
            objects = frozenset(names.key(alt) for alt in o.split("|"))
            gold.setdefault((names.key(s), _EDGE_SYNONYMS.get(t, t), objects), f"{s} {t} {o}")
    tally = report.tallies["relations"]
    for s, t, o in pred.relations:
        sf, of, edge = names.forms(s), names.forms(o), _EDGE_SYNONYMS.get(t, t)
        hit = next((k for k in gold if k[0] in sf and k[1] == edge and k[2] & of), None)
        if hit is not None:
            tally.tp += 1
            del gold[hit]
            continue
        tally.fp += 1
        report.miss("relations", f"FP {conv.id}: {s} {t} {o}")
    for label in gold.values():
        tally.fn += 1
        report.miss("relations", f"FN {conv.id}: {label}")


def _score_facts(
    conv: Conversation, turn: Turn, stored: list[StoredFact], names: _Names, report: Report
) -> None:
    typed = report.tallies["typed facts"]
    left = list(stored)
    for gold in turn.facts:
        hit = next((f for f in left if _fact_matches(gold, f, names, typed=True)), None)
        if hit is not None:
            left.remove(hit)
    typed.tp += len(stored) - len(left)
    typed.fp += len(left)
    typed.fn += len(turn.facts) - (len(stored) - len(left))
    tally = report.tallies["facts"]
    left = list(stored)
    if turn.role == "assistant":
        report.errors["facts_from_assistant_turns"] += len(stored)
    elif turn.is_empty:
        report.errors["facts_from_questions_and_acks"] += len(stored)
    where = f"{conv.id}#{turn.index} {turn.speaker}: {turn.text[:90]!r}"
    for gold in turn.facts:
        hit = next((f for f in left if _fact_matches(gold, f, names, typed=False)), None)
        if hit is None:
            tally.fn += 1
            got = "; ".join(f"{f.subject} {f.predicate} {f.object}" for f in left) or "nothing"
            report.miss("facts", f"FN {where}\n      want {' '.join(gold)} | got {got}")
        else:
            tally.tp += 1
            left.remove(hit)
    for fact in left:
        tally.fp += 1
        report.miss(
            "facts",
            f"FP {where}\n      stored {fact.subject} {fact.predicate} {fact.object} ({fact.content!r})",
        )


def _score_dates(conv: Conversation, turn: Turn, stored: set[tuple[str, str]], report: Report) -> None:
    tally = report.tallies["dates"]
    gold = {(start, end) for _, start, end in turn.dates}
    today = turn.time.date().isoformat()
    tally.tp += len(gold & stored)
    tally.fn += len(gold - stored)
    tally.fp += len(stored - gold)
    where = f"{conv.id}#{turn.index} at {turn.time:%Y-%m-%d %a}: {turn.text[:80]!r}"
    for start, end in sorted(gold - stored):
        report.miss("dates", f"FN {where} want {start}..{end} got {sorted(stored) or 'nothing'}")
    for start, end in sorted(stored - gold):
        report.miss("dates", f"FP {where} stored {start}..{end}")
    if not any(start > today for start, _ in gold):
        report.errors["future_dates_for_past_statements"] += sum(start > today for start, _ in stored)


def score_resolution(conv: Conversation, report: Report) -> None:
    """The resolver alone: the period ``extract`` gives each labelled date phrase."""
    from hermes_memory.extract import MessageInput, extract

    for turn in conv.turns:
        if not turn.dates:
            continue
        role = "assistant" if turn.role == "assistant" else "user"
        result = extract(MessageInput(turn.text, turn.time, speaker=turn.speaker, role=role))
        today = turn.time.date().isoformat()
        for phrase, start, end in turn.dates:
            at = turn.text.lower().index(phrase.lower())
            found = [
                (m.start.date().isoformat(), m.end.date().isoformat())
                for m in result.temporal
                if m.span[0] < at + len(phrase) and at < m.span[1]
            ]
            where = f"{conv.id}#{turn.index} at {turn.time:%Y-%m-%d %a}: {phrase!r} want {start}..{end}"
            if (start, end) in found:
                report.resolution["correct"] += 1
            elif found:
                report.resolution["wrong"] += 1
                if start <= today and any(s > today for s, _ in found):
                    report.resolution["future_for_past"] += 1
                report.miss("date_resolution", f"WRONG {where} got {found}")
            else:
                report.resolution["not_found"] += 1
                report.miss("date_resolution", f"NOT FOUND {where}")


# ------------------------------------------------------------------------------------------------- CLI


def summary(report: Report, seconds: float) -> dict[str, Any]:
    resolved = sum(report.resolution[k] for k in ("correct", "wrong", "not_found"))
    return {
        "per_category": {c: report.tallies[c].as_dict() for c in CATEGORIES},
        "date_resolution": {
            "phrases": resolved,
            "correct": report.resolution["correct"],
            "wrong": report.resolution["wrong"],
            "not_found": report.resolution["not_found"],
            "future_for_past": report.resolution["future_for_past"],
            "accuracy": round(report.resolution["correct"] / resolved, 4) if resolved else 1.0,
        },
        "errors": {
            key: report.errors[key]
            for key in (
                "facts_about_assistant",
                "facts_from_assistant_turns",
                "facts_from_questions_and_acks",
                "junk_entities",
                "names_stored_as_several_entities",
                "entities_with_wrong_type",
                "future_dates_for_past_statements",
            )
        },
        "conversations": report.conversations,
        "turns": report.turns,
        "turns_without_episode": report.unmapped_turns,
        "seconds": round(seconds, 1),
    }


def table(result: dict[str, Any]) -> str:
    """The table of docs/benchmarks.md (markdown)."""
    lines = [
        "| category | labelled | stored | precision | recall | F1 |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for cat, row in result["per_category"].items():
        lines.append(
            f"| {cat} | {row['labelled']} | {row['stored']} | {row['precision']:.3f} | {row['recall']:.3f} "
            f"| {row['f1']:.3f} |"
        )
    res = result["date_resolution"]
    lines += [
        "",
        f"Date phrases resolved by the resolver: {res['correct']}/{res['phrases']} right "
        f"({res['wrong']} wrong, {res['future_for_past']} of them in the future for a past statement; "
        f"{res['not_found']} not recognised).",
        "",
        "| error class | count |",
        "|---|---:|",
    ]
    lines += [f"| {key.replace('_', ' ')} | {value} |" for key, value in result["errors"].items()]
    return "\n".join(lines)


def run(conversations: Iterable[Conversation], overrides: dict[str, Any] | None = None) -> Report:
    """Ingest and score every conversation."""
    report = Report()
    for conv in conversations:
        score_conversation(conv, predict(conv, overrides), report)
        score_resolution(conv, report)
    return report


def print_misses(report: Report, per_category: int) -> None:
    for category in (*CATEGORIES, "date_resolution"):
        lines = report.misses.get(category, [])
        if lines:
            print(
                f"--- {category}: {len(lines)} misses and false positives, first {per_category}",
                file=sys.stderr,
            )
            for line in lines[:per_category]:
                print(f"  {line}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m hermes_memory.bench.extraction",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--data", default=str(DEFAULT_DATA), help="the labelled set (default: %(default)s)")
    parser.add_argument("--json", dest="json_out", help="write the numbers here")
    parser.add_argument(
        "--misses", type=int, default=0, help="print N misses and false positives per category"
    )
    args = parser.parse_args(argv)
    if args.misses < 0:
        parser.error("--misses must be >= 0")
    try:
        conversations = load_dataset(args.data)
    except ValidationError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    report = run(conversations)
    result = summary(report, time.perf_counter() - started)
    if args.misses:
        print_misses(report, args.misses)
    print(table(result))
    print(f"\n{result['turns']} turns in {result['conversations']} conversations, {result['seconds']} s")
    if report.unmapped_turns:
        print(
            f"warning: {report.unmapped_turns} turns have no stored episode; "
            "their facts and dates count as missed"
        )
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = [
    "CATEGORIES",
    "DEFAULT_DATA",
    "ENTITY_PREDICATES",
    "ENTITY_TYPES",
    "KINDS",
    "ROLES",
    "Conversation",
    "Prediction",
    "Report",
    "StoredFact",
    "Tally",
    "Turn",
    "canonical",
    "is_junk_entity",
    "load_dataset",
    "main",
    "norm",
    "predict",
    "prediction_from_labels",
    "print_misses",
    "run",
    "score_conversation",
    "score_resolution",
    "summary",
    "table",
    "user_names",
]
