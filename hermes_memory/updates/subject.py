"""A name that opens a clause about the user as the subject of a verb whose object or complement is the
user or the user's: "Zed's what I write code in", "Bear is where all my notes go", "Ally holds my
savings", "Khachapuri is my favourite dish". Such a clause names the value of the user's attribute before
the attribute ("my favourite dish is khachapuri" turned round), so the name is a value of the clause as it
would be after the verb. A clause's first word is capitalised whatever it is, so the name is read from its
place: capitalised words that are no word of the grammar's closed classes and, first, no verb form, then a
copula ("is", "'s") or a verb in its present -s form with the user right after it (or after a wh-word
opening a free relative), no pause between. Pure functions, no model.
"""

from __future__ import annotations

import functools
import re

from hermes_memory.updates.lexicon import (
    CALENDAR,
    FIRST_PLURAL,
    HONORIFICS,
    NAME,
    NOT_SPOKEN_TO,
    PAST_FORMS,
    PRONOUN_SUBJECTS,
    SECOND,
    STANDALONE_KIN,
    THIRD,
    TOPICLESS,
    verb_form,
)

#: Readings memoised per clause (each is weighed against many stored statements).
_MEMO = 16384
# Capitalised words, then a copula or a verb in its present -s form, then the user at once or after a
# wh-word opening a free relative, with a quantifier ("holds all the user's", "is where all the user's");
# or a copula, then a noun phrase of at most three words whose relative clause has the user as its
# subject ("is the person the user reports to", "'s the one that the user trusts").
_SHAPE = re.compile(
    r"^(?P<name>[A-Z][\w'-]*(?: [A-Z][\w'-]*)*?)"
    r"(?:(?: is|'s| [a-z]{2,}[^s\W]s) (?:(?:what|where|how|who) )?(?:all )?the user\b"
    r"|(?: is|'s) (?:the|a|an) (?:[a-z-]+ ){0,2}?[a-z-]+ (?:(?:that|who|whom|which) )?the user\b(?!'s))"
)
# Words of the grammar's closed classes, never a name: function words, interjections, pronouns.
_CLOSED = NOT_SPOKEN_TO | FIRST_PLURAL | SECOND | THIRD | PRONOUN_SUBJECTS | TOPICLESS


def opening_names(normal: str, holders: frozenset[str]) -> tuple[str, ...]:
    """The lower-cased words of the name that opens ``normal`` (a clause about the user, its holder
    written "the user") in that shape; none when it does not open so. ``holders``: the known holders the
    clause names, of whom a clause speaks, no value of it ("Ana is the user's sister")."""
    return _opening_names(normal, holders)


@functools.lru_cache(maxsize=_MEMO)
def _opening_names(normal: str, holders: frozenset[str]) -> tuple[str, ...]:
    match = _SHAPE.match(normal)
    if match is None:
        return ()
    words = match.group("name").split()
    names = tuple(w.lower().removesuffix("'s") for w in words)
    if not all(_a_name(w, first=i == 0) for i, w in enumerate(words)):
        return ()
    if " ".join(names) in holders or not holders.isdisjoint(names):
        return ()
    return tuple(n for n in names if n not in HONORIFICS)  # "Dr Varga": the title is no value


def _a_name(word: str, *, first: bool) -> bool:
    """Whether a word can be (a word of) a name opening a clause: capitalised, no word of the grammar's
    closed classes, of the calendar or of kinship ("Dad's on ..."), and, first, no verb form opening a
    subjectless clause ("Packed ...", "Started ...", "Been ...", "Wearing ...")."""
    if not NAME.fullmatch(word):
        return False
    low = word.lower().removesuffix("'s")
    if low in _CLOSED or CALENDAR.fullmatch(low) or word.removesuffix("'s") in STANDALONE_KIN:
        return False
    gerund = low.endswith("ing") and len(low) > 4
    return not first or not (verb_form(low) or low in PAST_FORMS or low == "been" or gerund)


__all__ = ["opening_names"]
