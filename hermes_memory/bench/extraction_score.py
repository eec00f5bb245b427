"""Scoring a prediction against the labels: alias-aware name matching, per-category tallies, error classes."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from hermes_memory.bench.extraction_labels import Conversation, Turn, norm
from hermes_memory.bench.extraction_predict import Prediction, StoredFact

CATEGORIES = ("entities", "relations", "facts", "typed facts", "dates")
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
    sibling_of child_of parent_of married_to partner_of friend_of relative_of colleague_of reports_to knows
    member_of visited""".split()
)
_STATUS = frozenset(
    {"ok", "okay", "true", "false", "none", "null", "yes", "no", "done", "success", "error", "failed",
     "saved", "noted", "got it", "entry added", "entry updated", "entry removed", "memory saved",
     "not found"}
)  # fmt: skip
_JUNK_CHARS = re.compile(r"[=<>{}\[\]()|]")
_POSSESSIVE = re.compile(r"^(.+?)'s (.+)$")


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


__all__ = [
    "CATEGORIES",
    "ENTITY_PREDICATES",
    "Report",
    "Tally",
    "canonical",
    "is_junk_entity",
    "score_conversation",
    "score_resolution",
    "user_names",
]
