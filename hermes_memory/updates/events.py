"""What an event told in the past names of an earlier statement: whether it befalls one of its values
(``ended``: "Closed my ING account", "The Fiesta died"), and whether it names them only as its setting,
where or with whom it acted on something else (``setting_only``: "Broke a spoke on the Trek", "Took Rolo
to Parkside Vets for his jab"), which leaves the value what it was: the update decision reads such an
event as an episode (``model.episode_of``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from hermes_memory.extract.tense import SAME_PAST
from hermes_memory.updates.holders import same_holder
from hermes_memory.updates.lexicon import DETERMINERS, PAST_FORMS, PLACING, REGULAR_PAST, WORD, calendar_word
from hermes_memory.updates.readings import beyond, meets, named, timeless_values, values, whom
from hermes_memory.updates.statement import USER, Statement, main_tense


def ended(old: Statement, new: Statement, context: Sequence[Statement] = ()) -> bool:
    """Whether the message tells, in the past, an event that befell the old value ("Closed my ING
    account", "The Fiesta died"): a past clause naming one of the old statement's values (a name or
    number, not a day: ``timeless_values``; a shared common word is no evidence: "Spilled coffee on the XPS"
    ends no coffee habit), in any inflected form ("Dried my Hokas" names "I run in Hoka Cliftons")."""
    mine = timeless_values(old)
    return any(s.tense == "past" and s.asserts and bool(meets(mine, named(s))) for s in (new, *context))


# Particles of motion before "to": "over to", "across to", "back to" open a goal, never an infinitive.
_TOWARD = frozenset("over across back".split())
# What opens a noun phrase of its own: a determiner or a quantifier ("a spoke", "some old videos").
_OBJECT_OPENERS = DETERMINERS | frozenset("some any all both each every few several".split())
# A day of the month ("the 14th"): a date, no value.
_ORDINAL = re.compile(r"\d+(?:st|nd|rd|th)")
# Subjects that go on about the holder in a part of the clause after a comma ("..., she's coaching"): the
# user as "I" or "we", anyone else as "he", "she" or "they".
_GOING_ON_USER = frozenset("i i'm i've we we're we've".split())
_GOING_ON = frozenset("he he's she she's they they're".split())


def setting_only(old: Statement, new: Statement, context: Sequence[Statement] = ()) -> bool:
    """Whether a past event names ``old``'s values only as its setting: each after a preposition of place
    or company, with an object of the verb's own before it, and the message names no other value nor
    goes on to what holds now. "Broke a wing mirror on the Octavia", "Took Rolo to Parkside Vets for
    his jab", "Cleared some old photos out of Dropbox" leave the car, the vet and the storage what they
    were. Not when the value is the verb's own complement ("Sold the Golf", "gave up on Arch", "traded in
    the Pegasus"), nor when the message names what took its place ("Moved my account over to Monzo")."""
    mine = timeless_values(old)
    tokens = WORD.findall(new.text)
    low = [t.lower() for t in tokens]
    verb = next((k for k, t in enumerate(low) if t in PAST_FORMS or t in SAME_PAST
                 or REGULAR_PAST.fullmatch(t) or t in ("has", "have")), None)  # fmt: skip
    spots = [k for k, t in enumerate(low) if meets(mine, [t])]
    if verb is None or not spots:
        return False
    for k in spots:
        j = k - 1  # back over the value's own words: "the", "my", its other names, a possessive
        while j > verb and (tokens[j][:1].isupper() or low[j] in DETERMINERS or low[j].endswith("'s")):
            j -= 1
        if j <= verb or low[j] not in PLACING:
            return False  # the value is the verb's own complement: "sold the Octavia", "parked the Octavia"
        if low[j] == "from" and any(_goal(tokens, m) for m in range(k + 1, len(tokens))):
            return False  # the source the event moved away from: "Ported my number from EE over to giffgaff"
        if not any(low[i] in _OBJECT_OPENERS or tokens[i][:1].isupper() or tokens[i][:1].isdigit()
                   or low[i].endswith("'s") for i in range(verb + 1, j)):  # fmt: skip
            return False  # no object of its own: "traded in the Pegasus", "went right off Arch"
    if _goes_on_now(old, new, context):
        return False  # "Dana left her whistle at the club, she's coaching online now"
    return not names_another(old, new, context)


def _goal(tokens: Sequence[str], m: int) -> bool:
    """Whether the word at ``m`` opens a goal phrase, where a motion ends: "into", "onto", or "to" before a
    noun phrase (a determiner, a name, a number: "to the Co-op", "to Aldi") or after a particle of motion
    ("over to giffgaff"); not the "to" of an infinitive ("to free up space")."""
    word = tokens[m].lower()
    if word in ("into", "onto"):
        return True
    if word != "to" or m + 1 >= len(tokens):
        return False
    after = tokens[m + 1]
    opens_a_noun = after[:1].isupper() or after[:1].isdigit() or after.lower() in DETERMINERS
    return opens_a_noun or tokens[m - 1].lower() in _TOWARD


def moves_to_another(old: Statement, new: Statement) -> bool:
    """Whether a clause moves something to a value ``old`` does not name: a name or number in a goal
    phrase ("Ported my number to Mint Mobile", "Moved my lessons over to Ms Okoye"); not one that only
    sets the scene ("We tried the new noodle bar on Elm Street")."""
    new_values = beyond(values(new), values(old))
    if not new_values:
        return False
    tokens = WORD.findall(new.text)
    return any(_goal(tokens, m) and meets(new_values, [t.lower() for t in tokens[m + 1 :]])
               for m in range(1, len(tokens)))  # fmt: skip


def names_another(old: Statement, new: Statement, context: Sequence[Statement] = ()) -> bool:
    """Whether the message names a value ``old`` does not, in any inflected form: a name or number that
    is no day, no date and none of whom it speaks ("Moved Rufus over to Riverbank" after "Rufus's vet is
    Parkside"): what may have taken the old value's place."""
    holders = whom(old) | {w for m in new.mentions for w in m.casefold().split()}
    others = {
        v for s in (new, *context) for v in values(s)
        if not calendar_word(v) and not _ORDINAL.fullmatch(v) and v not in holders
    }  # fmt: skip
    return bool(beyond(others, values(old)))


def _goes_on_now(old: Statement, new: Statement, context: Sequence[Statement]) -> bool:
    """Whether the message goes on to tell what holds now of ``old``'s holder: another clause about them
    in the present, or a part of the clause after a comma whose subject is they (a pronoun that can stand
    for them, or their name) and whose verb is present ("..., she's coaching online now"; not "..., they
    wouldn't hold it" of the user)."""
    if any(s.asserts and s.tense != "past" and same_holder(s.holder, old.holder) for s in context):
        return True
    name = (old.holder or "").casefold()
    pronouns = _GOING_ON_USER if old.holder == USER else _GOING_ON
    for part in new.text.split(",")[1:]:
        words = part.strip().lower().split()
        about_them = words and (words[0] in pronouns or words[0].removesuffix("'s") == name)
        if about_them and main_tense(" ".join(words)) == "present":
            return True
    return False


__all__ = ["ended", "moves_to_another", "names_another", "setting_only"]
