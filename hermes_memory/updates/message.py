"""A message as update detection reads it: its clauses, and what the grammar of one says besides.

``read_message`` reads each clause (``statement.read``) and adds a statement for what an apposition
sets: "My partner, Alex, says hi" and "Dr. Nakamura, my therapist, thinks ..." say who holds the role
("my partner is Alex", "my therapist is Dr. Nakamura") whatever the clause goes on to say, as a
statement of that shape does. The role is any noun the speaker calls theirs; the name is what stands
beside it between commas. A clause whose subject is "he", "she" or "they" goes on about the person the
clause before it was about (``go_on``). A part answering a question with no verb just before it says
what the question names: a fragment its value ("Favourite band? Fontaines D.C., easily." -> "my
favourite band is ..."), a verb alone or with "it" as its object what befell it ("Coffee? Quit." ->
"I quit coffee"; "Gym? Swapped it for the climbing wall"). A clause about no one that opens with "the" and a
common noun and says, in the present, what that thing goes by ("The team uses Microsoft Teams for chat",
"The team's standup is 9:45") tells of the speaker's own world, as "our team" would (``_ours``). A clause
that asserts nothing still takes the speaker's things as they are: "how do I stop my iphone 15 from ..."
adds "my iphone 15", marked ``presupposed`` (``given``).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Container
from dataclasses import replace
from datetime import datetime
from functools import partial

from hermes_memory.updates.lexicon import (
    ADVERBS,
    CLITIC_HOSTS,
    PLACING,
    a_name,
    closed_word,
    gerund,
    present_s,
    verb_form,
)
from hermes_memory.updates.readings import timeless_values
from hermes_memory.updates.statement import USER, Statement, parts
from hermes_memory.updates.statement import read as read_clause

# "my <role>, <Name>," / "<Name>, my <role>,": a role of one to three lower-case words and a name of one
# to three capitalised words (a title first: "Dr. Nakamura"), set off by commas or the clause's ends.
_ROLE = r"(?:[Mm]y|[Oo]ur)\s+(?P<role>[a-z][\w-]*(?:\s+[a-z][\w-]*){0,2})"
_TITLES = r"(?:Dr|Mr|Mrs|Ms|Prof)\.?"
_TITLE = re.compile(_TITLES)
_NAMED = rf"(?P<name>(?:{_TITLES}\s+)?[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*){{0,2}})"
_APPOSED = (
    re.compile(rf"(?:^|,\s*){_ROLE},\s+{_NAMED}\s*(?:,|$)"),
    re.compile(rf"(?:^|,\s*){_NAMED},\s+{_ROLE}\s*(?:,|$)"),
)

# Personal pronouns and possessives (a closed class): a fragment with one is about someone.
_PERSONS = frozenset("i me my we us our you your he him his she her they them their".split())
# Words whose clitic is a verb ("it's", "I'm", "we've"); a name's "'s" is no verb ("Franco's").
_CLITIC_HOSTS = CLITIC_HOSTS | _PERSONS
# Subject pronouns that refer to a person named before them (a closed class).
_ANAPHORS = frozenset("he he's she she's they they're".split())


def apposed(clause: str) -> list[str]:
    """The statements the appositions of a clause make ("Dr. Nakamura, my therapist, thinks ..." ->
    ["my therapist is Dr. Nakamura"]): a role the speaker calls theirs, and a name beside it."""
    out = []
    for pattern in _APPOSED:
        for match in pattern.finditer(clause):
            role, words = match.group("role"), match.group("name").split()
            if closed_word(role.split()[-1]) or not a_name(words[-1]):
                continue
            while not (a_name(words[0]) or _TITLE.fullmatch(words[0])):
                words.pop(0)  # "Yesterday Anna, my sister, called": the name is Anna
            out.append(f"my {role} is {' '.join(words)}")
    return out


def read_message(
    text: str,
    *,
    speaker: str = USER,
    when: datetime | None = None,
    holders: Collection[str] | None = None,
    things: Collection[str] = (),
    subjects: Container[str] = (),
) -> list[tuple[str, Statement]]:
    """Each clause of ``text`` with its reading, and after it the statements its appositions make
    (``apposed``), each paired with the clause that says it. The names are ``read``'s."""
    read = partial(read_clause, speaker=speaker, when=when, holders=holders, things=things, subjects=subjects)
    out: list[tuple[str, Statement]] = []
    before: str | None = None  # the holder of the clause before
    topic: str | None = None  # what the part before asks about, when it is a question with no verb
    for part in parts(text):
        words = part.split()
        if len(words) < 2:  # no clause; it may ask a topic ("Coffee?") or answer one with a verb ("Quit.")
            if topic is not None and verb_form(words[0].lower()):
                answer = _with_dropped_i([*words, topic])
                out.append((part, read(answer)))
            topic = _topic(part, (holders or (), things))
            continue
        statement = go_on(read(part), before)
        if statement.holder is None and (ours := _ours(part)) is not None:
            owned = read(ours)
            if owned.holder is not None and owned.tense != "past" and timeless_values(owned):
                statement = owned
        out.append((part, statement))
        before = statement.holder
        said = apposed(part)
        if topic is not None and statement.asserts:
            said.extend(_answered(part, statement, topic))
        for each in said:
            out.append((part, read(each)))
        if statement.why_not in _PRESUPPOSING:
            out.extend((part, replace(read(each), presupposed=True)) for each in given(part))
        asked = statement.why_not == "question" and _verbless(statement)
        topic = _topic(part, (holders or (), things)) if asked else None
    return out


# "The team ..." at a clause's start: the article and a lower-case word (the subject's noun, or its first).
_THE = re.compile(r"[Tt]he(?=\s+[a-z])")


def _ours(part: str) -> str | None:
    """A clause opening with "the" and a common noun, read as the speaker's ("The team uses Slack" ->
    "Our team uses Slack"): in one's own message the team, the house or the sprint board with no owner
    named is one's own. The caller keeps that reading only when it says, in the present, what the thing
    goes by (a name or a number): "The weather is awful" and "The team won" stay about no one."""
    match = _THE.match(part)
    return None if match is None else "Our" + part[match.end() :]


def _topic(part: str, known: tuple[Collection[str], ...]) -> str | None:
    """What a question with no verb asks about ("Favourite band?" -> "favourite band", "Spotify?" ->
    "Spotify"): its words, the first lower-cased unless they are a name the memory knows (``known``: the
    lower-cased names of ``read``'s ``holders`` and ``things``); None for any other part, a question word
    ("Why?") or an adverb ("Really?", "Seriously?")."""
    named = part.removesuffix("?").strip()
    if not part.endswith("?") or not named:
        return None
    if any(named.casefold() in names for names in known):
        return named
    head = named.split()[-1].lower()  # a noun phrase's head is its last word
    if closed_word(head) or verb_form(head) or head in _PERSONS or head in ADVERBS or head.endswith("ly"):
        return None
    return f"{named[:1].lower()}{named[1:]}"


def _answered(clause: str, statement: Statement, topic: str) -> list[str]:
    """What a clause answering a question about ``topic`` says of it: a fragment names its value ("Muse,
    easily" -> "my favourite band is Muse, easily"); a pronoun object of a verb stands for it ("Swapped
    it for the climbing wall" -> "I swapped gym for the climbing wall", with the "I" chat drops)."""
    if _verbless(statement):
        return [f"my {topic} is {clause}"]
    words = clause.split()
    for k in range(1, len(words)):
        if words[k].lower() in ("it", "them") and verb_form(words[k - 1].lower()):
            said = [*words[:k], topic, *words[k + 1 :]]
            return [_with_dropped_i(said) if k == 1 else " ".join(said)]
    return []


def _with_dropped_i(words: list[str]) -> str:
    """Words that open with their verb, said with the "I" chat drops: ["Quit", "coffee"] -> "I quit
    coffee" (its fact then reads "The user quit coffee", not a request)."""
    return " ".join(["I", words[0].lower(), *words[1:]])


def _verbless(statement: Statement) -> bool:
    """Whether a clause has no word that can be its verb (an auxiliary, a copula, a past form, a gerund,
    a clitic) and no person in it: a noun phrase said as a fragment ("Favourite band?", "Muse, easily")."""
    return not any(
        verb_form(w) or gerund(w) or w in _PERSONS or ("'" in w and w.partition("'")[0] in _CLITIC_HOSTS)
        for w in statement.words
    )


# What a clause that asserts nothing may still take as given.
_PRESUPPOSING = frozenset({"question", "hypothetical", "plan", "reported"})
# The speaker's or a named holder's thing: "my iphone 15", "our DBS app", "Leo's size 13s".
_OWNED = re.compile(r"\b(?:(?P<mine>[Mm]y|[Oo]ur)|(?P<owner>[A-Z][a-z]+)'s)\s+(?P<rest>[^,.;:!?()]+)")
_AT_PLACE = re.compile(r"(?:in|at)\s+[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*")


def given(clause: str) -> list[str]:
    """What a clause takes as given of the speaker's or a named holder's things, whatever its mood: a
    possessive and the words after it up to a verb (a lower-case "-s" form after the first: "Zoe's Year
    4 teacher wants ...") or a word of the grammar, when one of them is a value (a name, a number: "my
    iphone 15", "my DBS app", "Leo's size 13s") or a place follows them ("Wiremu's flat in Wellington")."""
    out = []
    for match in _OWNED.finditer(clause):
        words: list[str] = []
        rest = match.group("rest").split()
        for word in rest:
            low = word.lower()
            present = bool(words) and word.isalpha() and word.islower() and present_s(word)
            verb = verb_form(low) or gerund(low) or present
            if closed_word(low) or low in PLACING or verb or len(words) == 4:
                break
            words.append(word)
        if not words:
            continue
        tail = " ".join(rest[len(words) :])
        place = _AT_PLACE.match(tail)
        valued = any(any(c.isdigit() for c in w) or w[:1].isupper() or w[1:] != w[1:].lower() for w in words)
        if valued or place is not None:
            owner = match.group("mine") or f"{match.group('owner')}'s"
            out.append(" ".join([owner, *words, *([place.group(0)] if place else [])]))
    return out


def go_on(statement: Statement, before: str | None) -> Statement:
    """A clause read as going on from the one before it, whose holder is ``before``: a clause whose
    subject is "he", "she" or "they" is about that holder when the clause before was about someone
    other than the speaker ("Dad got headhunted - he's head chef now")."""
    if before is None or before == USER or statement.holder is not None or statement.mentions:
        return statement
    if statement.words and statement.words[0] in _ANAPHORS:
        return replace(statement, holder=before, topic=frozenset())
    return statement


__all__ = ["apposed", "given", "go_on", "read_message"]
