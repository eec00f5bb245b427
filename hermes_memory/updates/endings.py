"""What ends an earlier statement without the learned decision, read from the grammar of the new one: a
correction (", not <old word>"), a denial (the old statement said again negated, or as a habit of the
past), the completion of an activity in progress, giving up what one does or belongs to; and what ends
nothing: a restatement, the thing left somewhere or for a while. Pure functions, no model.
"""

from __future__ import annotations

import re

from hermes_memory.updates.holders import same_holder
from hermes_memory.updates.lexicon import DETERMINERS, NEGATION, NOT_NEGATING, PLACING
from hermes_memory.updates.readings import content, named, opens_with_time, timeless_values, values
from hermes_memory.updates.shape import bare
from hermes_memory.updates.statement import USER, Statement, topic_of

# Words that negate or say a state ended (a closed class of the grammar).
_NEGATION_WORDS = frozenset(
    """not no never longer anymore any more don't doesn't isn't aren't wasn't weren't won't can't haven't
    hasn't didn't nobody nothing none""".split()
)
# The aspectual verbs that bring an activity to its end, in the past (a closed class of the grammar): of
# completion ("finished Dune") and of abandoning it ("pulled out of the marathon", "gave up the course");
# not those of stopping, which also pause ("stopped the episode halfway").
_ENDING_ASPECT = re.compile(
    r"\b(?:finished|completed|ended|quit|abandoned|withdrew|(?:pulled|dropped|backed)\s+out|gave\s+up)\b"
)
# The verbs of giving up what one did or was part of, in the past, before what was given up (a closed
# class of the grammar): "quit the trio", "left the choir", "gave up climbing", "dropped out of the course".
_ABANDONING = re.compile(
    r"(?:(?:just|finally|officially|eventually)\s+)?"
    r"(?:quit|left|gave\s+up(?:\s+on)?|(?:dropped|pulled|backed)\s+out\s+of|withdrew\s+from)\s+",
    re.I,
)
# The verbs of keeping what one had (a closed class of the grammar), before what is kept: "kept Freedom as
# my carrier", "we're sticking with Jira", "stayed with the Sparkasse".
_KEEPING = re.compile(
    r"\b(?:kept|keeps?|keeping|retain(?:s|ed|ing)?|remain(?:s|ed|ing)?\s+(?:with|at|on)"
    r"|(?:stuck|stick(?:s|ing)?|stay(?:s|ed|ing)?)\s+(?:with|at|on)|(?:held|hold(?:s|ing)?)\s+on\s+to)\s+",
    re.I,
)
# The same verbs in the present with what is kept as their subject ("Prime stays", "Netflix remains for the
# kids"; "Proton stayed free for a year" tells of a time over).
_GOES_ON = re.compile(r"\s+(?:stays|remains|is\s+staying)\b", re.I)
# A pause or a conjunction (closed classes).
_PAUSE_OR_CONJUNCTION = r"[,;:.!?]|\s(?:and|but|so|because|since|as|after|when|though|while)\b"
# Where the noun phrase after a verb ends: a pause, a conjunction or a preposition.
_PHRASE_END = re.compile(
    _PAUSE_OR_CONJUNCTION
    + r"|\s(?:to|at|in|on|from|with|for|by|into|onto|over|near|until|before|during|without)\b",
    re.I,
)
# What may follow the thing given up when the clause tells that it was given up, not an episode with it:
# a pause or a conjunction (a place, a company or a purpose makes it an episode: "left the Volvo at the
# garage", "quit Obsidian to install the update"; a time is read apart: ``opens_with_time``).
_GIVEN_UP_END = re.compile(_PAUSE_OR_CONJUNCTION, re.I)
# "for" and a span of time, a unit of time within its next four words (a closed class: "for a minute",
# "for a few weeks", "for the weekend", "for a bit").
_SPAN = re.compile(
    r"for\s+(?:[\w'-]+\s+){0,3}?(?:second|minute|hour|day|night|week|weekend|fortnight|month|year|while"
    r"|bit|moment|term|season|semester)s?\b",
    re.IGNORECASE,
)
# The aspectual verbs of beginning, in the past (a closed class of the grammar: "started the shop",
# "set up a stall").
_BEGINNING = re.compile(r"\b(?:started|began|begun|launched|founded|set up|kicked off)\b")
_YEAR = re.compile(r"(?:19|20)\d\d")
# What may follow a predicate said whole inside a clause: the clause's end, a pause, a conjunction or a
# new subject ("since I'm lactose intolerant, I ...", "as I live in Porto and ..."); not more of its
# object ("I have a Pixel 8").
_PREDICATE_END = r"(?=\s*(?:$|[,;:.!?)\-]|(?:and|but|so|because|since|as|while|though|the user)\b))"
# A verb in the progressive: "is reading", "are slowly building" (not "is going to", a plan).
_PROGRESSIVE = re.compile(r"\b(?:is|are|am)\s+(?:(?:still|currently|now|[a-z]+ly)\s+)?(?!going\b)[a-z]+ing\b")
# Words before "used to" that make it "accustomed to" (a copula or "get"), not the past habitual.
_ACCUSTOMED = frozenset("am is are was were be been being get gets got getting".split())
# The aspectual verbs of ceasing (a closed class of the grammar) before a gerund: "stopped seeing ...",
# "gave up driving", "quit drinking". Before a noun phrase they may only pause it ("stopped the episode").
_CEASING = re.compile(
    r"\b(?:stop|stops|stopped|quit|quits|cease[sd]?|give up|gives up|gave up|given up)"
    r"\s+(?:[a-z]+ly\s+)?(?![a-z]*thing\b)[a-z]{2,}ing\b"
)


def ceases(statement: Statement) -> bool:
    """Whether a clause asserts, unnegated, that an activity ceased: an aspectual verb of ceasing before
    a gerund ("I stopped seeing Dr Vance", "Mum gave up baking"); not a pause ("Stopped the film
    halfway") and not "can't stop thinking about it"."""
    if not statement.asserts:
        return False
    low = statement.normal.lower()
    found = _CEASING.search(low)
    if found is None:
        return False
    # negated only by a negation in its own part of the clause, before it ("I didn't stop ..."), not by
    # one after a comma ("I've stopped volunteering, my knees can't manage the stairs")
    part = low[low.rfind(",", 0, found.start()) + 1 : found.start()]
    return not (statement.negated and NEGATION.search(NOT_NEGATING.sub("", part)))


def affirms(old: Statement, clause: Statement) -> bool:
    """Whether ``clause`` says ``old``'s predicate again, whole (its verb in either person), of the same
    holder, in the present and unnegated ("Since I'm lactose intolerant I'm trying oat milk instead"
    after "I'm lactose intolerant"): whatever else a message with it changes, ``old`` still holds."""
    if not (clause.asserts and not clause.negated and clause.tense != "past" and not past_habit(clause)):
        return False
    if not (old.asserts and not old.negated and same_holder(old.holder, clause.holder)):
        return False
    said = predicate(old)
    if len(said) < 2:
        return False
    head = said[0]
    verb = re.escape(head[:-1]) + "s?" if len(head) > 3 and head.endswith("s") else re.escape(head)
    spoken = r"\b" + r"\s+".join([verb, *(re.escape(w) for w in said[1:])]) + _PREDICATE_END
    return re.search(spoken, clause.normal.lower()) is not None


def retains(old: Statement, clause: Statement) -> bool:
    """Whether ``clause`` says, unnegated, that its holder kept what ``old`` gives them: a verb of keeping
    whose object names a value of ``old`` ("I got a new phone but kept Freedom as my carrier" after "My
    phone carrier is Freedom Mobile"; "we're sticking with Jira", "she's staying at First Bank"), one
    whose subject is that value ("Prime stays"), or "still" in the present with it ("docs still live in
    Notion"). Whatever else the message changes, what was kept still holds."""
    if not clause.asserts or clause.negated or not same_holder(old.holder, clause.holder):
        return False
    mine = values(old)
    if clause.tense != "past" and "still" in clause.words and mine & named(clause):
        return True  # "docs still live in Notion": the continuative aspect, of the old value
    for verb in _KEEPING.finditer(clause.normal):
        kept, _ = _object(clause.normal[verb.end() :])
        if mine & {w.lower().removesuffix("'s") for w in kept.split()}:
            return True
    for stays in _GOES_ON.finditer(clause.normal):  # the word before "stays" names the old value
        before = clause.normal[: stays.start()].split()
        if before and before[-1].lower().removesuffix("'s").strip(",.") in mine:
            return True
    return False


def _object(rest: str) -> tuple[str, str]:
    """The noun phrase that opens ``rest`` (what follows a verb), to a pause, a conjunction or a
    preposition (``_PHRASE_END``), and what follows it."""
    cut = _PHRASE_END.search(rest)
    return (rest[: cut.start()], rest[cut.start() :]) if cut else (rest, "")


def predicate(statement: Statement) -> list[str]:
    """The words of a statement after its holder, when it opens with the holder ("the user is lactose
    intolerant" -> is, lactose, intolerant); none otherwise (its subject is something else)."""
    holder = "the user" if statement.holder == USER else (statement.holder or "").lower()
    words = statement.normal.lower().split()
    opening = holder.split()
    return words[len(opening) :] if opening and words[: len(opening)] == opening else []


def restates(new: Statement, old: Statement) -> bool:
    """Whether every content word and value of ``new`` is a word of ``old`` (a shared stem: "passion" /
    "passionate", "Dance is my passion" / "dancing"): it says the same thing again, and sets nothing new."""
    return _said_in(content(new) | values(new), content(old))


def says_again(new: Statement, old: Statement) -> bool:
    """Whether every content word and value of ``old`` is a word of ``new`` (a shared stem): ``new`` says
    it again, whatever it wraps around it ("Please note in your notes that I prefer window seats" after
    "User prefers window seats")."""
    return _said_in(content(old) | values(old), content(new))


def _said_in(said: set[str], words: set[str]) -> bool:
    """Whether there is something ``said`` and every word of it is one of ``words`` (a shared stem)."""
    return bool(said) and all(topic_of(frozenset({w}), words) for w in said)


# The digits a number opens with, a decimal or clock time's too ("9:30", "2.5").
_NUMBER = re.compile(r"\d+(?:[.:]\d+)?")


def corrects(old: Statement, new: Statement) -> bool:
    """Whether ``new`` sets ``old`` right: it says a word of ``old`` is wrong after a bare "not"
    (``Statement.set_right``; a number whatever unit is written on it) and names something else in its
    place ("It's the 19:10, not the 18:40" after "I take the 18:40 home", "its 5mg not 10" after "I take
    10mg"). Whatever the attribute, a correction ends what it contrasts."""
    wrong = {_amount(w) for w in new.set_right} & {_amount(w) for w in bare(old)}
    if not new.asserts or not wrong:
        return False
    return bool((content(new) | values(new)) - new.set_right - bare(old) - {"not"})


def _amount(word: str) -> str:
    """A number as its digits, without the unit or ordinal written onto it ("10mg", "12th" -> "10", "12"):
    "not 10" sets right "10mg"; any other word as it is."""
    number = _NUMBER.match(word)
    return number.group(0) if number else word


def denies(old: Statement, new: Statement) -> bool:
    """Whether ``new`` is ``old`` said again negated, in the present ("I don't eat meat anymore" after
    "I eat meat most days"), or as a habit of the past ("I used to eat meat"): every word it says,
    negation and "used" aside, is a word of ``old`` (a shared stem), and it names no value ``old`` lacks.
    It ends ``old`` whatever the attribute; an earlier negated state ("I don't drive") is no state this
    ends. Both are about one holder, said outright: "No worries" is an interjection, no denial of a
    statement about worries."""
    if not new.asserts or old.negated or not same_holder(old.holder, new.holder):
        return False
    if not (new.tense != "past" if new.negated else past_habit(new)):
        return False  # a negated past event ("I didn't take the ferry") or no habit said over
    said = content(new) - _NEGATION_WORDS - {"used"}
    return values(new) <= values(old) and _said_in(said, content(old) | values(old))


def completes(old: Statement, new: Statement) -> bool:
    """Whether ``new`` tells, in the past, that the activity ``old`` has in progress came to its end:
    ``old`` is in the progressive ("I'm reading Dune", "Kofi is training for the Berlin marathon") and
    ``new`` says with an aspectual verb of completion or of abandoning that something ``old`` names was
    finished or given up ("Finished Dune last night", "Kofi completed Berlin in 3:41", "I pulled out of
    the marathon"). An activity in progress is over once done or dropped; a habit is not ("Finished my
    pottery session early" after "I do pottery on Thursdays")."""
    if not (new.asserts and new.tense == "past" and not new.negated and same_holder(old.holder, new.holder)):
        return False
    if not (old.asserts and not old.negated and _PROGRESSIVE.search(old.normal)):
        return False
    return _ENDING_ASPECT.search(new.normal.lower()) is not None and bool(values(old) & named(new))


def abandons(old: Statement, new: Statement) -> bool:
    """Whether ``new`` tells, in the past, that its holder gave up what ``old`` says they do or belong to:
    a verb of abandoning right after the holder, whose object names a content word of ``old`` (a shared
    stem) and ends the clause, at a pause, a conjunction, a time or "for" and no span of time ("I left the
    trio last month", "Quit the choir for good" or "Gave up climbing after the finger injury" after "I
    play bass in a jazz trio", "I go bouldering at a climbing gym"). Whatever the attribute, what one
    gave up one no longer does. Not an episode with the thing: a place, a company or a purpose after it
    ("Left the Volvo at the garage", "Quit Obsidian to install the update"); nor the end of a habit of
    the past or of an event."""
    after = _after_given_up(old, new)
    if after is None:
        return False
    ended = _GIVEN_UP_END.match(after) is not None or opens_with_time(after) or _for_good(after)
    return not after.strip() or ended


def sets_aside(old: Statement, new: Statement) -> bool:
    """Whether ``new`` tells, in the past, that its holder left what ``old`` says they do or have somewhere,
    with someone or for a while: a verb of abandoning whose object names a content word of ``old``, then
    a preposition of place, company or span that opens no time ("I left my cello at Tom's place", "Quit
    Notion for a minute to restart the laptop"; "for" only with a unit of time). An episode with the
    thing, which still holds."""
    after = _after_given_up(old, new)
    if after is None or not after.strip():
        return False
    if _for_good(after):
        return False  # "for good", "for now", "for Obsidian": no span it was left for, but an end
    first = after.split(maxsplit=1)[0].lower()
    return first in PLACING and first != "to" and not opens_with_time(after)  # "to": a purpose, or a goal


def _for_good(after: str) -> bool:
    """Whether what follows the object of a verb of abandoning is "for" and no span of time: it was given
    up for good, for now or for something else ("Quit the choir for good", "Left Acme for a startup"),
    not set aside for a while ("Quit Notion for a minute")."""
    said = after.strip()
    return said[:4].lower() == "for " and _SPAN.match(said) is None


def _after_given_up(old: Statement, new: Statement) -> str | None:
    """What follows the object of a verb of abandoning that opens ``new`` after its holder, when that
    object names a content word of ``old`` (nothing when it ends the clause); None without such a verb and
    object. Both of one holder, ``new`` told in the past, ``old`` holding in the present."""
    if not (new.asserts and new.tense == "past" and not new.negated and same_holder(old.holder, new.holder)):
        return None
    if not (old.asserts and not old.negated and old.tense != "past" and not past_habit(old)):
        return None
    # after the holder, or opening the clause when the holder is the speaker whose "I" chat drops
    words, told = new.normal.split(), len(predicate(new))
    if told:
        words = words[len(words) - told :]
    said = " ".join(words) if told or new.holder == USER else ""
    verb = _ABANDONING.match(said)
    if verb is None:
        return None
    phrase, after = _object(said[verb.end() :])
    given_up = [w for w in phrase.lower().split() if w not in DETERMINERS and not w.endswith("'s")]
    names_it = 0 < len(given_up) <= 4 and topic_of(frozenset(given_up), content(old))
    return after if names_it else None


def begins(old: Statement, new: Statement) -> bool:
    """Whether ``new`` tells, in the past, how what ``old`` holds began: an aspectual verb of beginning
    and a content word of ``old`` besides its holder's name, and no value ``old`` lacks ("Started my own
    clothing store a while ago" after "my clothing store is open"). A beginning of the same thing says it
    holds, not that it ended; one naming something new ("Started at Bosch") may replace it."""
    if new.tense != "past" or new.negated or _BEGINNING.search(new.normal.lower()) is None:
        return False
    holder = set((new.holder or "").casefold().split())
    said = {v for v in timeless_values(new) - values(old) if not _YEAR.fullmatch(v)}  # a time is no value
    return bool((content(old) & content(new)) - holder) and not said


def past_habit(statement: Statement) -> bool:
    """Whether a clause tells a habit or state of the past as over: "used to" before a verb, the past
    habitual of the grammar ("I used to run", not "I'm used to it", "it got used to")."""
    words = statement.words
    return any(
        words[i] == "used"
        and words[i + 1] == "to"
        and (i == 0 or (words[i - 1] not in _ACCUSTOMED and not words[i - 1].endswith(("'m", "'re", "'s"))))
        for i in range(len(words) - 1)
    )


__all__ = [
    "abandons",
    "affirms",
    "begins",
    "ceases",
    "completes",
    "corrects",
    "denies",
    "past_habit",
    "predicate",
    "restates",
    "retains",
    "says_again",
    "sets_aside",
]
