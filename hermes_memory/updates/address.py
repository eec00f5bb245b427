"""Whom a clause speaks to: the names it calls ("Hey Caroline, ...", "Thanks so much, Mel", "Woohoo
Melanie!", "That's great Tim"), and whether it is only a formula of talk spoken to them ("No worries,
Sam"), which states nothing. A name spoken to is no value of the clause and no holder it speaks of. Pure
functions, no model.
"""

from __future__ import annotations

import re

from hermes_memory.extract.phrasing import PREPOSITIONS
from hermes_memory.updates.lexicon import (
    AND,
    DISCOURSE,
    FIRST_PLURAL,
    FIRST_SINGULAR,
    NAME,
    NOT_NAME,
    NOT_SPOKEN_TO,
    OBJECT_START,
    PRONOUN_SUBJECTS,
    SECOND,
    THIRD,
    WORD,
    gerund,
    present_s,
    verb_form,
)

# The openings of a short remark on what was just said ("That's great Tim", "It's so cool Mel").
_REMARK = frozenset({"that's", "it's"})
# Function words that cannot stand before the name of a call ("Woohoo Melanie"): pronouns,
# determiners, prepositions, conjunctions, negations and quantifiers (closed classes); not the adverbs
# of place, which take no object ("Same here Caroline", "Hi there Tim").
_FUNCTION = (
    PRONOUN_SUBJECTS | FIRST_SINGULAR | FIRST_PLURAL | SECOND | THIRD | OBJECT_START | PREPOSITIONS
    | AND | frozenset("no not never more less than nor".split())
) - {"here", "there"}  # fmt: skip


def formula(text: str, spoken_to: frozenset[str]) -> bool:
    """Whether a clause spoken to someone is only that: no subject, no verb form the grammar marks (an
    auxiliary, a past form) and no name or number but theirs ("No worries, Sam", "Take care, Jo", "Hey
    Kim, long time no see"): a formula of talk, which states nothing."""
    for i, word in enumerate(WORD.findall(text)):
        low = word.lower()
        if low in spoken_to or low in DISCOURSE:
            continue
        if low in FIRST_SINGULAR or low in FIRST_PLURAL or low in SECOND or low in THIRD:
            return False
        if verb_form(low):
            return False
        if word[0].isdigit() or (i > 0 and NAME.fullmatch(word) and low not in NOT_NAME):
            return False
    return True


def addressees(text: str) -> frozenset[str]:
    """The lower-cased names a clause speaks to ("Hey Caroline, ...", "Thanks so much, Mel"); not one
    with "'s" ("Kai's out, Ravi's in" speaks of Ravi)."""
    tokens = [(m.group(0), m.start()) for m in WORD.finditer(text)]
    return frozenset(
        t.lower() for i, (t, _) in enumerate(tokens)
        if NAME.fullmatch(t) and not t.endswith("'s") and t.lower() not in NOT_SPOKEN_TO
        and vocative(text, tokens, i)
    )  # fmt: skip


def vocative(text: str, tokens: list[tuple[str, int]], i: int) -> bool:
    """Whether the name at ``i`` is set off by a comma (before it, or right after it at the start),
    follows a greeting or closes a call (``_closing_call``): the person spoken to, not the one spoken
    about."""
    word, start = tokens[i]
    before = text[:start].rstrip()
    after = text[start + len(word) :].lstrip()
    greeted = (  # "Hey Caroline", "Wow Mel"; not "Correction: Lumen's on DuckDB"
        i > 0
        and tokens[i - 1][0].lower() in DISCOURSE
        and not text[tokens[i - 1][1] + len(tokens[i - 1][0]) : start].strip()
    )
    if i == 0 and re.match(r",\s*(?:my|our)\s+[^,]+,", after):
        return False  # "Ana, my sister, lives in Porto": an apposition, not the person spoken to
    comma = before.endswith(",")
    if comma and i + 1 < len(tokens) and not after.startswith(",") and _a_verb(tokens[i + 1][0]):
        return False  # "..., Pret got way too pricey": the subject of the clause after the comma
    return greeted or comma or (i == 0 and after.startswith(",")) or _closing_call(tokens, i)


def _a_verb(word: str) -> bool:
    """Whether the word after a name makes the name its subject: a verb form the grammar marks ("Pret
    got", "Mel is") or a present in -s ("Pret charges"); not a clitic ("how's") or a function word."""
    low = word.lower()
    if word != low or low in _FUNCTION or "'" in low:
        return False
    return verb_form(low) or present_s(low)


def _closing_call(tokens: list[tuple[str, int]], i: int) -> bool:
    """Whether the name at ``i`` (with the capitalised words before it: "Harry Potter") closes the
    utterance as a call to the person, the way chat drops the comma: after "you" ("Thank you Mel"); after
    at most two words none of which can be a verb (a form the grammar marks, a gerund, a
    present in -s), a function word (a pronoun, a determiner, a preposition, a conjunction, a negation)
    or a clitic, the words of chat before them aside ("Woohoo Melanie!", "Wow, cool Maria", "Good luck
    Jon", "Sure thing Nate", "Yeah, same here Caroline"); or at the end of a clause spoken
    to the listener, or of a remark of at most five words on "that" or "it", when the word before it
    cannot take it as an object ("you're full of great ideas Joanna", "That's great Tim"). Not a clause
    about the name ("Biscuit eats Pedigree", "Joined Spotify", "It's the birthplace of Harry Potter",
    "Have you met Tim", "IT made us drop Edge"), a phrase ("Lunch at Dishoom", "Definitely Star Wars",
    "Luna and Oliver") or a change ("No more Santander", "Qdoba, not Chipotle")."""
    if i == 0 or i != len(tokens) - 1:
        return False
    start = i
    while start > 1 and NAME.fullmatch(tokens[start - 1][0]):
        start -= 1
    lows = [word.lower() for word, _ in tokens[:start]]
    before = lows[-1]
    if before == "you":
        return True
    if _takes_a_name(before):
        return False
    said = lows[next((k for k, w in enumerate(lows) if w not in DISCOURSE), len(lows)) :]
    if (
        len(said) <= 2
        and start == i
        and not any(_takes_a_name(w) or present_s(w) for w in said)
    ):  # a present in -s ("Biscuit eats Pedigree") is a verb too
        return True
    remark = len(tokens) <= 5 and (lows[0] in _REMARK or lows[:2] in (["that", "is"], ["it", "is"]))
    return remark or any(w in SECOND for w in lows)


def _takes_a_name(word: str) -> bool:
    """Whether a word can make the name after it its object or part of its phrase: a verb form the
    grammar marks, a gerund, a clitic ("it's") or a function word."""
    return verb_form(word) or gerund(word) or "'" in word or word in _FUNCTION


__all__ = ["addressees", "formula", "vocative"]
