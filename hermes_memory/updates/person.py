"""The person a clause is read in: first person for reading ("I", "my"), "the user" for comparing and
for the wording a stored statement falls back to. Pure functions over text."""

from __future__ import annotations

import re

from hermes_memory.extract.lexicon import the_country
from hermes_memory.extract.wording import first_person_as

USER = "user"

_USER_WORDS = re.compile(r"\b(?:the\s+)?user(?P<poss>'s)?\b", re.IGNORECASE)
_FIRST_PERSON = re.compile(r"\b(?:I|we|me|us|myself)\b", re.IGNORECASE)


def first_person(text: str, speaker: str) -> str:
    """ "the user's phone" / "User plays" / "<speaker> lives" written as "my phone" / "I play(s)"."""

    def swap(m: re.Match[str]) -> str:
        return "my" if m.group("poss") else "I"

    out = _USER_WORDS.sub(swap, text)
    if out != text:  # a stored fact: once the user is named, "their sister", "helps them" are the user's
        for third, first in (("their", "my"), ("theirs", "mine"), ("them", "me"), ("themself", "myself"),
                             ("themselves", "myself")):  # fmt: skip
            out = re.sub(rf"\b{third}\b", first, out)
    if speaker and speaker.casefold() != USER:
        name = re.escape(speaker)
        out = re.sub(rf"\b{name}'s\b", "my", out)
        out = re.sub(rf"\b{name}\b", "I", out)
    return out


def as_the_user(text: str) -> str:
    """First person written as "the user", word for word (both sides of a comparison read alike: the
    form the update decision was fitted on, verbs as they were said)."""
    out = re.sub(r"\b(?:my|our)\b", "the user's", text, flags=re.IGNORECASE)
    out = re.sub(r"\b(?:I|we)(?:'m|'re)\b", "the user is", out, flags=re.IGNORECASE)
    out = re.sub(r"\b(?:I|we)'ve\b", "the user has", out, flags=re.IGNORECASE)
    out = re.sub(r"\b(?:I|we)'d\b", "the user would", out, flags=re.IGNORECASE)
    out = re.sub(r"\b(?:I|we)'ll\b", "the user will", out, flags=re.IGNORECASE)
    return _FIRST_PERSON.sub(lambda m: m.group(0) if the_country(m) else "the user", out)


def in_words_of_the_user(text: str, speaker: str = USER) -> str:
    """A clause as English about "the user", for wording a reader sees: ``as_the_user`` with the verb
    after each "I" agreeing ("I am sending you the photos" -> "the user is sending you the photos", not
    "the user am ...") and "we" as "the user and others" (``first_person_as``)."""
    return as_the_user(first_person_as(first_person(text, speaker), "the user"))


__all__ = ["USER", "as_the_user", "first_person", "in_words_of_the_user"]
