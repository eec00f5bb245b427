"""What a question asks for, and which remembered turns can answer it: cues recall's priors use.

All cues are generic English: nothing here is taken from a benchmark's questions.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any

from hermes_memory.extract.speech import chatter_kind
from hermes_memory.records import Episode

#: Episode metadata key ingestion writes: the chatter kind, or null for a turn that tells something.
CHATTER_KEY = "chatter"

# A question about what used to be true wants the superseded statements too.
_PAST = re.compile(
    r"\b(?:before|previous(?:ly)?|used to|former(?:ly)?|originally|earlier|past|old|anymore|no longer"
    r"|history)\b",
    re.I,
)
# A question about how things are now: superseded statements on its topic are left out of its answer.
# Present tense is an auxiliary ("Where do I live?") or a verb in its -s form right after "who" or after
# "what"/"which" and a noun ("Who teaches me piano?", "What app holds my notes?"); a word in -s with an
# auxiliary after it is a plural noun ("What special items did ...", "Which towns has ...").
_AUXILIARY = r"(?:has|have|had|did|do|does|is|are|was|were|can|could|may|might|will|would|shall|should|must)"
_PRESENT = re.compile(
    r"\b(?:now|currently|current|nowadays|these days|at the moment|at present|today|still)\b"
    r"|^\W*(?:where|what|who|which|how|whom)\b[^?.!]*?\b(?:do|does|am|is|are|'s)\b"
    rf"|^\W*(?:who|(?:what|which)\s+[a-z]+)\s+(?!{_AUXILIARY}\b)[a-z]+[^s\W']s(?=[\s?])(?!\s+{_AUXILIARY}\b)",
    re.I,
)
# A question asking for several things: a plural noun right after "what"/"which" ("what video games",
# "which cities"), "how many", "what kinds of", "the names of".
_LISTING = re.compile(
    r"\b(?:what|which)\s+(?:[\w'’]+\s+){0,3}?(?!(?:is|was|has|does|us|this|his|its)\b)\w{3,}s\b"
    r"|\bhow many\b|\bwhat (?:kinds?|types?|sorts?) of\b|\bnames of\b",
    re.I,
)
# Answer types. "Which cities / movies / bands …" is answered by names and titles. (Pastimes for "what
# hobbies / activities …", by the extraction's hobby words, measured slightly worse and is not used.)
_NAMED_HEADS = re.compile(
    r"\b(?:what|which)\s+(?:[\w'’]+\s+){0,3}?(?:cit(?:y|ies)|countr(?:y|ies)|places?|locations?|states?|areas?"
    r"|towns?|movies?|films?|books?|novels?|games?|bands?|artists?|musicians?|singers?|shows?|series|songs?"
    r"|albums?|restaurants?|compan(?:y|ies)|brands?|teams?|authors?|names?|pets?|dogs?|cats?)\b",
    re.I,
)
_SENTENCE = re.compile(r"[^.!?]+[.!?]*")
# A capitalised word that does not start a sentence, or a quoted title.
_CAPITALISED = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-zA-Z]+")
_QUOTED = re.compile(r"[\"“][^\"”]{2,60}[\"”]")
_NOT_NAMES = frozenset(
    """I I'm I've I'll I'd Thanks Thank Hey Hi Hello Wow Yeah Yes No Oh Ok Okay Congrats Congratulations
    Awesome Great Cool Sounds That This It Me My January February March April May June July August
    September October November December Monday Tuesday Wednesday Thursday Friday Saturday Sunday""".split()
)


def asks_about_past(question: str) -> bool:
    return bool(_PAST.search(question))


def asks_about_present(question: str) -> bool:
    """How things are now ("Where do I live?", "... currently ..."), and not about the past."""
    return not asks_about_past(question) and bool(_PRESENT.search(question))


# A question gathering what happened over time: "how many", two people at once ("both", "in common"),
# or a present perfect ("Where has X camped?", "Which places has X been to?").
_ACROSS_TIME = re.compile(
    r"\bhow many\b|\b(?:both|in common|each other|together)\b"
    r"|\b(?:has|have)\s+(?:[\w'’]+\s+){1,2}?(?:\w+ed|been|seen|taken|given|written|eaten|driven|ridden|"
    r"spoken|chosen|gotten|broken|grown|known|shown|drawn|begun|done|gone|made|had|read|met|won|bought|"
    r"found|built|kept|left|lost|taught|thought|told|heard|held|brought|sung|swum)\b",
    re.I,
)


def asks_across_time(question: str) -> bool:
    """Whether the question gathers what happened over time ("How many…", "both", "in common", a present
    perfect: "Where has X camped?"): its evidence is spread over sessions."""
    return bool(_ACROSS_TIME.search(question))


def asks_for_list(question: str) -> bool:
    return bool(_LISTING.search(question))


def answer_type(question: str) -> str | None:
    """``"named"`` (names, titles), or None when the question does not say."""
    return "named" if _NAMED_HEADS.search(question) else None


def is_question_turn(text: str) -> bool:
    """At least half of the turn's sentences are questions: it asks rather than tells."""
    if "?" not in text:  # no sentence can end with one (most turns: recall loads hundreds at scale)
        return False
    sentences = [s.strip() for s in _SENTENCE.findall(text) if len(s.strip()) > 3]
    return bool(sentences) and 2 * sum(s.endswith("?") for s in sentences) >= len(sentences)


def chatter_of(episode: Episode) -> str | None:
    """What kind of chatter the turn is (``extract.speech.CHATTER_KINDS``), or None when it tells
    something: as ingestion marked it, else (a turn stored before ingestion marked turns) as its text
    reads now."""
    return chatter_in(episode.metadata, episode.text, episode.role)


def chatter_in(metadata: Mapping[str, Any], text: str, role: str) -> str | None:
    """``chatter_of`` a turn with this metadata, text and role."""
    if CHATTER_KEY in metadata:
        kind = metadata[CHATTER_KEY]
        return str(kind) if kind else None
    return chatter_kind(text, role=role)


def is_chatter(episode: Episode) -> bool:
    """Whether the turn only asks, greets, acknowledges or (the AI) echoes: kept, not knowledge."""
    return chatter_of(episode) is not None


def can_answer(text: str, kind: str, people: Collection[str]) -> bool:
    """Whether a turn holds an answer of the type (``answer_type``); ``people`` (the participants) and
    greetings do not count as names."""
    return can_answer_with(answer_cues(text), kind, people)


def answer_cues(text: str) -> tuple[bool, tuple[str, ...]]:
    """What ``can_answer`` reads in a turn, worked out once: (holds a quoted title, its capitalised
    names that are not greetings, months or pronouns)."""
    found = (m.group() for m in _CAPITALISED.finditer(text))
    names = tuple(dict.fromkeys(name for name in found if name not in _NOT_NAMES))
    return bool(_QUOTED.search(text)), names


def can_answer_with(found: tuple[bool, tuple[str, ...]], kind: str, people: Collection[str]) -> bool:
    """``can_answer`` from a turn's ``answer_cues``."""
    if kind == "named":
        quoted, names = found
        return quoted or any(name not in people for name in names)
    return False


__all__ = [
    "CHATTER_KEY",
    "answer_cues",
    "answer_type",
    "asks_about_past",
    "asks_about_present",
    "asks_across_time",
    "asks_for_list",
    "can_answer",
    "can_answer_with",
    "chatter_in",
    "chatter_of",
    "is_chatter",
    "is_question_turn",
]
