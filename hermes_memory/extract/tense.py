"""The tense of the clause a time expression sits in: past, present or future (rules, no LLM).

A year-less "in May" or "on Friday" means the most recent one in "I moved in May" and the coming one
in "I'm moving in May"; the tense of the clause decides. The clause is the stretch of the sentence
between punctuation and clause-joining words ("and", "but", "because", ...). Within it the tense
marker nearest to the expression wins (so "I will never forget what happened in May" is past and
"I said I will move in May" is future); strong markers (a past verb form, "will", "going to") beat
weak ones (a progressive "I'm moving", "want to", "might", a verb whose past is its base: "split").
A clause without any marker borrows the sentence's nearest marker ("In May, I moved to Lisbon."); a
sentence without one is present. Other sentences of the text are never consulted.
"""

from __future__ import annotations

import functools
import re
from typing import Literal

Tense = Literal["past", "present", "future"]

# Irregular past forms that are not also present forms ("read", "put", "set" are left out).
_IRREGULAR_PAST = (
    "was were did had went came got saw took made met left bought began ran won ate drank flew gave found "
    "told thought felt said wrote spent sold built brought caught taught fought kept slept sent lost held "
    "stood sat heard knew grew threw drew wore broke chose spoke woke drove rode rose swam sang sank forgot "
    "became fell led paid laid meant dealt understood hung struck stuck shot shook hid bit fed fled lent "
    "dug quit"
).split()
# Verbs whose past form is their base form: "Sam and I split up in March" is past, but so could a
# present be ("I cut my own hair"). A weak past marker: any other marker of the clause wins over it.
SAME_PAST: tuple[str, ...] = tuple(
    "cut put set let hit shut split spread cost hurt bet burst cast upset".split()
)
# Words before which such a form is a noun or an adjective ("a cut", "my split", "it's set for May").
_NOT_VERB_BEFORE = frozenset("a an the my your his her its our their this that these those no".split())
# Before one of these a past-looking form is a bare verb ("I will quit", "to quit"): not a past marker.
_BARE_BEFORE = frozenset(
    "will shall would can could should might must may to do does don't doesn't let can't won't wouldn't "
    "couldn't shouldn't didn't".split()
)
# "-ed" words that are not past forms.
NOT_PAST_ED = frozenset(
    "need feed seed speed bleed breed greed weed indeed exceed proceed succeed bed red shed wed sled "
    "hundred sacred naked wicked kindred hatred rugged ragged beloved aged tired".split()
)
# A be-form before an "-ed" word makes it an adjective or a passive ("I'm excited", "is based").
_BE_BEFORE = frozenset(
    {"am", "is", "are", "'m", "'re", "'s", "be", "being", "get", "getting", "feel", "feeling", "seem", "so"}
    | {"very", "really"}
)
_SENTENCE_BREAK = re.compile(r"[.!?]+(?:\s|$)|\n")
_CLAUSE_BREAK = re.compile(
    r"[;:,!?()\u2013\u2014]|\s-\s|\b(?:and|but|because|although|though|whereas|whereby)\b"
)


@functools.cache
def _markers() -> re.Pattern[str]:
    past = "|".join(_IRREGULAR_PAST)
    return re.compile(
        rf"""
        (?P<past_future>\b(?:was|were)\s+(?:going\s+to|gonna|planning\s+to|about\s+to|supposed\s+to)\b
                      |\b(?:had|'d)\s+planned\b)
      | (?P<future_perfect>\b(?:will|'ll|shall)\s+have\s+\w+)
      | (?P<future>\b(?:will|shall|won't|wo\s+n't|gonna|going\s+to|plan(?:s|ning)?\s+to|intend(?:s|ing)?\s+to
                    |about\s+to|can't\s+wait|looking\s+forward|scheduled|due\s+to|upcoming|tomorrow)\b
                    |'ll\b|\bnext\b)
      | (?P<past>\b(?:{past}|used\s+to|ago|yesterday|last\s+night|didn't|wasn't|weren't|hadn't|haven't|hasn't|
                    (?:have|has|'ve)\s+(?:been|had|\w+ed)\b)\b
                  |\b[a-z]{{2,}}ed\b)
      | (?P<weak_past>\b(?:{"|".join(SAME_PAST)})\b)
      | (?P<weak_future>\b(?:am|is|are|'m|'re|be)\s+(?:\w+\s+)?\w+ing\b
                       |\b(?:want(?:s)?|hope(?:s)?|would\s+like|need(?:s)?|have|has)\s+to\b
                       |\b(?:might|could|should|may|gotta|wanna|plans?)\b)
        """,
        re.VERBOSE,
    )


def _marker_tense(match: re.Match[str], low: str) -> tuple[Tense, bool] | None:
    """(tense, strong) of one marker, or None when an "-ed" word is not a past form."""
    kind = match.lastgroup
    if kind == "past_future":
        return "past", True
    if kind in ("future", "future_perfect"):
        return "future", True
    if kind == "weak_future":
        return "future", False
    word = match.group()
    before = low[max(0, match.start() - 24) : match.start()].split()
    if " " not in word and before and (before[-1] in _BARE_BEFORE or before[-1].endswith(("'ll", "'d"))):
        return None
    if kind == "weak_past":
        last = before[-1] if before else ""
        if last in _NOT_VERB_BEFORE or last in _BE_BEFORE or last.endswith("'s"):
            return None
        return "past", False
    if word.endswith("ed") and " " not in word and word not in _IRREGULAR_PAST:
        if word in NOT_PAST_ED:
            return None
        if before and (before[-1] in _BE_BEFORE or before[-1].endswith(("'m", "'re", "'s"))):
            return None
    return "past", True


def _bounds(breaks: re.Pattern[str], low: str, start: int, end: int) -> tuple[int, int]:
    """The stretch of ``low`` between the breaks around [start, end)."""
    lo, hi = 0, len(low)
    for brk in breaks.finditer(low):
        if brk.end() <= start:
            lo = brk.end()
        elif brk.start() >= end:
            hi = brk.start()
            break
    return lo, hi


def _nearest(found: list[tuple[int, Tense, bool]], start: int, end: int, lo: int, hi: int) -> Tense | None:
    inside = [f for f in found if lo <= f[0] < hi]
    for strong in (True, False):
        picked = [f for f in inside if f[2] is strong]
        if picked:
            # distance to the expression; at equal distance the marker before it wins
            return min(picked, key=lambda f: (max(start - f[0], f[0] - end, 0), f[0] > start))[1]
    return None


def _found(text: str, low: str, start: int = 0, end: int = 0) -> list[tuple[int, Tense, bool]]:
    """Each tense marker of ``low`` (``text`` lower-cased) outside ``text[start:end]``: where it starts,
    its tense, and whether it is strong."""
    found: list[tuple[int, Tense, bool]] = []
    for match in _markers().finditer(low):
        if match.start() < end and start < match.end():
            continue
        if text[match.start() : match.end()] == "May":
            continue  # the month, not the verb
        marker = _marker_tense(match, low)
        if marker is not None:
            found.append((match.start(), *marker))
    return found


def strongly_past(text: str) -> bool:
    """Whether ``text`` carries a marker that puts it in the past by itself ("ago", "yesterday", "used
    to", a past auxiliary or form): what reads a form that is also the present ("set", "put") as a past."""
    low = text.lower().replace("\u2019", "'")
    return any(tense == "past" and strong for _, tense, strong in _found(text, low))


def clause_tense(text: str, start: int, end: int) -> Tense:
    """The tense of the clause of ``text`` holding the expression at ``text[start:end]``.

    Markers inside the expression itself ("next", "yesterday") are ignored: the expression's own
    words are resolved by the caller. Raises ValueError when the span is not inside the text.
    """
    if not 0 <= start <= end <= len(text):
        raise ValueError(f"span ({start}, {end}) is not inside a text of {len(text)} characters")
    low = text.lower().replace("\u2019", "'")
    found = _found(text, low, start, end)
    lo, hi = _bounds(_CLAUSE_BREAK, low, start, end)
    tense = _nearest(found, start, end, lo, hi)
    if tense is None:
        lo, hi = _bounds(_SENTENCE_BREAK, low, start, end)
        tense = _nearest(found, start, end, lo, hi)
    return tense or "present"


def past_forms() -> tuple[str, ...]:
    """The irregular past forms the tense rules know ("went", "sold", "quit")."""
    return tuple(_IRREGULAR_PAST)


__all__ = ["NOT_PAST_ED", "SAME_PAST", "Tense", "clause_tense", "past_forms", "strongly_past"]
