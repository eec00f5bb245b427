"""What update detection reads off a statement's words: its values, its content words, its change-cue
tokens, whether it tells an occasion of one day. Each reading is memoised by the text it reads: one new
clause is weighed against dozens of stored statements, and each stored statement against every later
clause about its holder.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Collection
from collections.abc import Set as AbstractSet
from datetime import UTC, datetime

from hermes_memory.extract.temporal import find_temporal
from hermes_memory.updates.asserting import SUBJECT_PRONOUNS, subject_parts
from hermes_memory.updates.lexicon import (
    DISCOURSE,
    FIRST_PLURAL,
    FIRST_SINGULAR,
    HONORIFICS,
    MIXED_CASE,
    NEGATION,
    NOT_NEGATING,
    PRESENT_STRETCH,
    SECOND,
    THIRD,
    calendar_word,
)
from hermes_memory.updates.statement import USER, Statement
from hermes_memory.updates.subject import opening_names

STOP = frozenset(
    """the a an user user's is are was were be been am to of in on at for with and or but it it's its that
    this these those my our i me we us now so just really very""".split()
)
_VALUE = re.compile(r"^(?:[A-Z][\w'-]*|[a-z-]*\d[\w.,:-]*)$")
_PRONOUNS = FIRST_SINGULAR | FIRST_PLURAL | SECOND | THIRD
#: The word an adverbial of the present stretch is read as among a clause's cues (``masked_cues``).
STRETCH = "these days"
#: Readings memoised per text (a store's statements and the clauses weighed against them).
MEMO = 16384


def cue_tokens(statement: Statement) -> set[str]:
    """The words and two-word sequences of a statement's masked form (values masked out)."""
    return set(masked_cues(statement.masked))


def news_cues(statement: Statement, since: Statement) -> AbstractSet[str]:
    """The statement's ``masked_cues`` that ``since`` does not carry too: a cue both say is no news of a
    change from it ("now" in "I'm learning the cello now" after "I'm learning Greek now")."""
    return masked_cues(statement.masked) - masked_cues(since.masked)


@functools.lru_cache(maxsize=MEMO)
def masked_cues(masked: str) -> AbstractSet[str]:
    """``cue_tokens`` of a masked form; the set as built (a copy could iterate in another order, and
    ``Cues`` sums floats in the order of its sets). Read only. Every adverbial of the present stretch is
    read as its commonest member ("lately" as "these days"): a cue is learned for the class, so a member
    the labelled pairs seldom use weighs what the others do."""
    masked = PRESENT_STRETCH.sub(STRETCH, masked)
    words = [w.lower().strip('.,;:!?"()') for w in masked.split()]
    words = [w for w in words if w and w != "something"]
    return set(words) | {f"{a} {b}" for a, b in itertools.pairwise(words)}


def values(statement: Statement) -> set[str]:
    """Names and numbers of a statement (capitalised words after the first, names in mixed case, words
    with a digit: "7:42", "sub-22", "ps5"),
    and a name opening a clause about the user as its subject ("Zed's what the user codes in":
    ``opening_names``); not the name of whom it speaks to ("Hey John, been good": John is no value)."""
    found = set(_values(statement.normal, statement.addressed))
    if statement.holder == USER:
        found.update(opening_names(statement.normal, statement.mentions))
    return found


def timeless_values(statement: Statement) -> set[str]:
    """``values`` less the days and months it names: a time, no value ("Swapped my Saturday shift" names
    nothing of "I volunteer on Saturdays"; "On Wednesdays" restates no value)."""
    return {v for v in values(statement) if not calendar_word(v)}


def whom(statement: Statement) -> set[str]:
    """The words of the name of whom a statement speaks, when that is someone other than the user ("the
    user's girlfriend Lucía is a vet nurse": lucía): no value of it, whatever else names her."""
    holder = statement.holder
    return set(holder.casefold().split()) if holder and holder != USER else set()


@functools.lru_cache(maxsize=MEMO)
def _values(normal: str, addressed: frozenset[str]) -> frozenset[str]:
    out = set()
    for i, token in enumerate(normal.split()):
        core = _core(token)
        if (
            core
            and ((_VALUE.match(core) and (i > 0 or not core[0].isupper())) or MIXED_CASE.fullmatch(core))
            and core.lower() not in ("the", "user")
            and core.lower() not in HONORIFICS
            and core.lower() not in DISCOURSE
            and core.lower() not in addressed
        ):
            out.add(core.lower())
    return frozenset(out)


# The additive focus particles (a closed class): "also" (not "Also," opening the clause as a discourse
# marker), and "too" or "as well" closing the clause or a part of it ("too pricey" is a degree adverb).
_ADDITIVE = re.compile(r"\balso\b(?!\s*,)|\b(?:too|as well)\s*(?:[,.;:!?)]|$)", re.IGNORECASE)


# An additive determiner opening the clause's subject ("Another band I love is ...", "One more show I'm
# into is ..."): a closed class.
_ONE_MORE = re.compile(r"^\W*(?:another|one more)\b", re.IGNORECASE)


def one_more(statement: Statement) -> bool:
    """Whether a clause's subject opens with an additive determiner ("Another podcast I never miss is
    Hidden Brain"): it names one more of several, beside the others, whatever the shape of what follows;
    not "another" after the verb ("I found another flat", where it means a different one)."""
    return _ONE_MORE.search(statement.text) is not None


def additive(statement: Statement) -> bool:
    """Whether a clause carries an additive focus particle ("I'm also on call on Sundays", "My cousin
    lives with us too"): what it says holds beside something else, not in its place."""
    return _ADDITIVE.search(statement.text) is not None


# Any day will do to read how long a time the clause names (its length, not where it falls).
_SOME_DAY = datetime(2024, 6, 12, 12, tzinfo=UTC)
# Words that make a dated time the start or end of a lasting span ("since Tuesday", "as of Friday").
_ONWARD = re.compile(r"\b(?:since|as of|from|starting|until|till|by)\s+(?:\w+\s+)?$", re.I)


def brief(statement: Statement) -> bool:
    """Whether a clause told in the past dates itself to one day or part of one ("on Monday", "this
    morning", "yesterday"), not as where a lasting span starts ("since last Tuesday"): an occasion."""
    return statement.tense == "past" and _one_day(statement.text)


@functools.lru_cache(maxsize=MEMO)
def _one_day(text: str) -> bool:
    return any(
        m.granularity == "day" and _ONWARD.search(text[: m.span[0]]) is None
        for m in find_temporal(text, _SOME_DAY)
    )


# A preposition that may open a time ("in April", "on Monday"; a closed class).
_TIME_PREPOSITION = re.compile(r"(?:(?:in|on|at|during|over|around|by|until|before|after)\s+)?", re.I)


def opens_with_time(text: str) -> bool:
    """Whether ``text`` begins with a time expression, maybe after a preposition ("last month", "in
    April", "on Monday")."""
    return _opens_with_time(text.strip())


@functools.lru_cache(maxsize=MEMO)
def _opens_with_time(text: str) -> bool:
    opening = _TIME_PREPOSITION.match(text)
    at = opening.end() if opening is not None else 0
    return any(m.span[0] == at for m in find_temporal(text, _SOME_DAY))


def lemma(word: str) -> str:
    """A word without its possessive or plural ending, lower case: "Hokas", "Hoka's" -> "hoka";
    "boxes" -> "box"; "batteries" -> "battery" (not "Swiss", "campus", "Paris")."""
    w = word.lower().removesuffix("'s").rstrip("'")
    if len(w) > 3 and w.endswith("s") and not w.endswith(("ss", "us", "is")):
        if w.endswith("ies") and len(w) > 4:
            return w[:-3] + "y"
        if w.endswith(("sses", "ches", "shes", "xes", "zes")):
            return w[:-2]
        return w[:-1]
    return w


@functools.lru_cache(maxsize=MEMO)
def _lemmas(words: frozenset[str]) -> frozenset[str]:
    return frozenset(lemma(w) for w in words)


def meets(these: Collection[str], words: Collection[str]) -> set[str]:
    """The words of ``these`` said among ``words`` in any inflected form (plural, possessive): the value
    "hoka" of "I run in Hoka Cliftons" in "Dried my Hokas by the radiator"."""
    if not these or not words:
        return set()
    said = _lemmas(frozenset(words))
    return {w for w in these if lemma(w) in said}


def beyond(these: Collection[str], *others: Collection[str]) -> set[str]:
    """The words of ``these`` said in none of ``others``, in any inflected form."""
    said = _lemmas(frozenset(w for other in others for w in other))
    return {w for w in these if lemma(w) not in said}


def named(statement: Statement) -> set[str]:
    """The words a statement says of something: all but the names of whom it speaks to."""
    return set(statement.words) - statement.addressed


def apart(statement: Statement, other: Statement) -> str:
    """What ``statement`` says that ``other`` does not: its content words the other lacks, in its order
    ("vegan fully plant-based" of "I'm vegan, fully plant-based" beside "I eat fish again, so
    pescatarian"; "phone samsung galaxy s22" beside "Typing this on my OnePlus 12"). Two remainders alike
    in meaning name two values of one kind (two phones, two diets); "" when it says nothing the other does
    not. Pronouns, function words and days or months (who and when, not what) are no part of it."""
    return _apart(statement.words, other.words)


@functools.lru_cache(maxsize=MEMO)
def _apart(words: tuple[str, ...], others: tuple[str, ...]) -> str:
    theirs = {_core(w) for w in others}
    kept = (_core(w) for w in words)
    return " ".join(dict.fromkeys(
        w for w in kept
        if w and w not in theirs and w not in STOP and w not in _PRONOUNS and not calendar_word(w)
        and (len(w) > 2 or any(c.isdigit() for c in w))
    ))  # fmt: skip


def _core(word: str) -> str:
    """A word without the punctuation around it and its possessive "'s"."""
    return word.strip(".,;:!?\"'()").removesuffix("'s")


def content(statement: Statement) -> set[str]:
    return set(_content(statement.words))


@functools.lru_cache(maxsize=MEMO)
def _content(words: tuple[str, ...]) -> frozenset[str]:
    return frozenset(w for w in words if w not in STOP and len(w) > 2)


# Pronouns that open a part of a clause about someone or something other than its holder: for the user,
# "he", "she", "they" and "it"; for anyone else, the speaker's own (``SUBJECT_PRONOUNS``).
_OTHER_THAN_USER = frozenset("he he's she she's they they're it it's".split())


def negates_itself(statement: Statement) -> bool:
    """Whether a negated clause's negation may be of what its holder does: one outside a part that a
    pronoun for someone or something else opens after a comma or conjunction ("Paid the deposit, they
    wouldn't hold the table without one": the negation is the restaurant's)."""
    if not statement.negated:
        return False
    others = _OTHER_THAN_USER if statement.holder == USER else SUBJECT_PRONOUNS
    return any(
        NEGATION.search(NOT_NEGATING.sub("", part)) is not None
        for opening, part in subject_parts(statement.text)
        if opening not in others
    )


__all__ = [
    "MEMO",
    "STOP",
    "additive",
    "apart",
    "beyond",
    "brief",
    "content",
    "cue_tokens",
    "lemma",
    "masked_cues",
    "meets",
    "named",
    "negates_itself",
    "news_cues",
    "one_more",
    "opens_with_time",
    "timeless_values",
    "values",
    "whom",
]
