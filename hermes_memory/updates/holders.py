"""Whether a new clause can speak about an earlier statement's holder (the user, a named person, pet,
project): the comparison step of update detection, read from structure alone.

A clause speaks about the holder of an earlier statement when it has the same holder (kinship words that
name one relation are one holder: "Dad", "my father"), or when its subject ties it to that statement: the
subject is a word of it ("Checkups are with Beth now"), a thing the memory knows as no holder that names
a word of it ("Leadership ditched Teams"), one of its values ("Lucy moved out" after "I share a flat with
Lucy"), the role it calls its holder by ("my sister's place is in Braga" after "my sister Ana lives in
Coimbra"; "Dad got a new job" after "my dad's a chef"); when, about no one in particular, it names one of
its values ("the Sauconys are retired" after "I run in Saucony Endorphins") or, of the user's, says by
name what everything is now ("everything's in Obsidian now"); or when it names a named holder anywhere
("Switched Pepper's harness to a softer one" after "Pepper wears a leather harness").
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import TypeGuard

from hermes_memory.extract.kin import LASTING_PREDICATES, kin_predicate, species
from hermes_memory.updates.lexicon import (
    ADVERBS,
    AND,
    FIRST_PLURAL,
    FIRST_SINGULAR,
    FOCUS,
    NOT_NAME,
    OBJECT_START,
    PLACING,
    PRONOUN_SUBJECTS,
    SECOND,
    THIRD,
    TITLE,
    WORD,
    calendar_word,
    names_in,
    verb_form,
)
from hermes_memory.updates.readings import MEMO, values
from hermes_memory.updates.statement import USER, Statement, subject_words, topic_of

# Personal pronouns: a clause with one is about a person it does not name.
_PERSONAL = THIRD | SECOND
# The subjects of being that stand for what the speaker's world is like (a closed class), and the words
# that bring a person into a clause.
_IMPERSONAL = frozenset("it it's everything everything's".split())
_PEOPLE = FIRST_SINGULAR | FIRST_PLURAL | SECOND | THIRD

# Kinship words that name one relation (a closed class of the lexicon): "Dad" and "my father" are one
# holder, "user's father".
_KIN_GROUPS = {
    "father": ("father", "dad", "daddy", "papa"),
    "mother": ("mother", "mum", "mom", "mummy", "mommy", "mama", "mam", "mammy"),
    "grandmother": ("grandmother", "grandma", "granny", "nana", "gran", "nan", "nanna"),
    "grandfather": ("grandfather", "grandpa", "granddad", "grandad"),
}
_KIN_SAME = {word: same for same, words in _KIN_GROUPS.items() for word in words}
# The ties of family, love and friendship, and to a pet (``kin_predicate``'s), unlike a boss's, a
# colleague's or a neighbour's: an event of the other's own (a new job, a move, a diet, an illness) does
# not end them.
_PERSONAL_TIES = LASTING_PREDICATES | {"married_to", "partner_of", "friend_of", "has_pet"}
_ROLE = f"{USER}'s "
# A subject that is a name after "the" ("The Defender's been replaced").
_THE_NAME = re.compile(r"(?i:the)\s+([A-Z][\w-]*)(?:'s)?\b")
# The auxiliaries' participles that are no past form (a closed class): "Pizza's been dethroned" is "has been".
_PARTICIPLES = frozenset("been gotten".split())
# A subject that is a name's possession: the name with "'s" (its last word: "Dona Fátima's"), the word
# after it, and the two after that (the verb, or an adverb and the verb). What those words are decides it
# (``possession``).
_POSSESSED = re.compile(
    rf"^(?:[A-Za-z]+,\s*)?(?:{TITLE}\s+)?"  # a title before the name: "Dr Brennan's"
    r"(?:[A-Z][\w-]*\s+){0,2}([A-Z][\w-]*)'s\s+([a-z][a-z-]*)\s+([a-z']+)(?:\s+([a-z']+))?"
)


def same_holder(a: str | None, b: str | None) -> bool:
    """Whether two holders are the same one (never when either is unknown); kinship words that name one
    relation are one holder ("user's dad", "user's father")."""
    return a is not None and b is not None and _canonical(a) == _canonical(b)


def _canonical(holder: str) -> str:
    folded = holder.casefold()
    if folded.startswith(_ROLE):
        role = folded[len(_ROLE) :]
        return _ROLE + _KIN_SAME.get(role, role)
    return folded


def holder_forms(holder: str) -> list[str]:
    """The ways a holder is written in the store: itself, and a kinship role by each word that names the
    same relation ("user's dad" -> also "user's father", "user's daddy", "user's papa")."""
    folded = holder.casefold()
    if not folded.startswith(_ROLE):
        return [holder]
    group = _KIN_GROUPS.get(_canonical(folded)[len(_ROLE) :], ())
    return [holder, *(_ROLE + w for w in group if _ROLE + w != folded)]


def speaks_of_any(statement: Statement) -> bool:
    """Whether a clause can speak of some holder's attribute: it is about someone (``about_anyone``) or,
    about no one in particular, names something ("Correction: it's Ghent for the meetup", "As of May
    the Sauconys are retired"), which ties it to the statements naming that."""
    return statement.about_anyone or bool(values(statement))


def about_same(old: Statement, new: Statement) -> bool:
    """Whether ``new`` can speak about ``old``'s holder (see the module's docstring)."""
    owned = _possession(new.normal)
    if owned is not None and _kin(owned[1]) and same_holder(old.holder, owned[0]) and owned[2]:
        return False  # "Rosa's sister just moved to Seville" tells of the sister, not of where Rosa lives
    if owned is not None and owned[0] in _named(old) and (owned[1] & set(old.words) or _kin(owned[1])):
        # "Clara's manager is Jonas" after "the user's manager is Clara", "Lena's sister is Mia" after "the
        # user's girlfriend is Lena": an attribute of the value's own (Clara's manager, someone related to
        # Lena), not the one the value fills (the user's manager, the user's girlfriend); "Greta's
        # replacement is Olaf" may speak of the slot Greta filled
        return same_holder(old.holder, owned[0])
    if same_holder(old.holder, new.holder):
        return True
    if new.topic and old.holder is not None and topic_of(new.topic, old.words):
        return True  # "Checkups are with Beth now" speaks of the user's "Dr. Novak for checkups"
    if (
        old.holder == USER
        and _unknown_subject(new)
        and (_named(old) & set(new.words) - new.addressed or topic_of(subject_words(old), new.words))
    ):
        return True  # "Leadership ditched Teams" speaks of the user's "We use Teams for chat"
    if _valued_subject(old, new):
        # "Tom retired" ends "the user's manager is Tom"; "Inês got a new job" leaves "the user's partner
        # is Inês" as it was: a tie of family, love or friendship ends only by what involves the user too
        return not _personal_tie(old, new) or _involves_user(new)
    if _apposed(old, new.holder) or _apposed(new, old.holder):
        return True
    if _called_by(old, new.holder) or _called_by(new, old.holder):
        return True
    if old.holder == USER and in_use(new):
        return True  # "everything's in Obsidian now" speaks of what the user's notes are in
    if new.holder is None and not new.mentions and not set(new.words) & _PERSONAL:
        # "As of May the Sauconys are retired" after "I run in Saucony Endorphins": a clause about no
        # one in particular that names an old value (a shared stem) speaks of its attribute; not where a
        # pronoun is its subject: that part speaks of what the pronoun stands for ("It's the birthplace
        # of Harry Potter")
        return topic_of(frozenset(_named(old)), _not_of_a_pronoun(new))
    return _a_name(old.holder) and _names(new, old.holder)


def _not_of_a_pronoun(statement: Statement) -> frozenset[str]:
    """The words of a clause's parts (between commas) that do not open with a pronoun as their subject:
    what opens "It's ...", "Plus, that was ...", "Honestly it's ..." is said of what the pronoun stands
    for; "the Twingo went for scrap" after "it's the one I take now," is said of the Twingo. "That" and
    "this" are a subject only before a verb ("That was ..."), else a determiner or a conjunction ("Now
    that the team has left"). Read once per clause (a clause is weighed against many statements)."""
    return _pronoun_free_words(statement.normal)


@functools.lru_cache(maxsize=MEMO)
def _pronoun_free_words(normal: str) -> frozenset[str]:
    out: set[str] = set()
    for part in _PARTS.split(normal):
        low = [w.lower() for w in WORD.findall(part)]
        at = 0
        while at < len(low) - 1 and (low[at] in ADVERBS or low[at] in AND or low[at].endswith("ly")):
            at += 1
        pronoun = bool(low) and low[at] in PRONOUN_SUBJECTS
        if pronoun and low[at] in ("that", "this"):
            pronoun = at + 1 < len(low) and verb_form(low[at + 1])
        if not pronoun:
            out.update(low)
    return frozenset(out)


_PARTS = re.compile(r"[,;:]\s*")
# What may stand between "it's" and a name that is its complement: function words, adverbs and degree
# words, prepositions ("it's pretty much all Linear", "everything's in Obsidian").
_DEGREE = frozenset("pretty much rather fairly almost".split())
_BEFORE_COMPLEMENT = NOT_NAME | ADVERBS | PLACING | FOCUS | _DEGREE | {"is"}


def in_use(statement: Statement) -> bool:
    """Whether a clause about no one says what everything or "it" is, by a name, and speaks of no person
    ("everything's in Obsidian now", "it's all Teams these days", "On the train it's mostly Acquired
    now"): what the speaker's world runs on, not a remark about something ("It's a real gift"), nor
    what something is to a name ("It's the birthplace of Harry Potter": the name is no complement of its
    own, only a word of a noun phrase about something else)."""
    if statement.holder is not None or statement.mentions:
        return False
    tokens = WORD.findall(statement.text)
    low = [t.lower() for t in tokens]
    at = next((i for i, w in enumerate(low) if w in _IMPERSONAL), None)
    if at is None or any(w in _PEOPLE for w in low):
        return False
    if not (low[at].endswith("'s") or low[at + 1 : at + 2] == ["is"]):
        return False
    for word, w in zip(tokens[at + 1 :], low[at + 1 :], strict=True):
        if word[:1].isupper() and w not in NOT_NAME and not calendar_word(w):
            return True
        if not (w in _BEFORE_COMPLEMENT or w.endswith("ly")):
            return False  # a name inside a noun phrase of its own ("It's the birthplace of Harry Potter")
    return False


def _kin(words: frozenset[str]) -> bool:
    """Whether the words name a relation to someone: a relative, a partner, a colleague ("sister",
    "practice partner")."""
    return any(kin_predicate(w) is not None for w in words)


def _personal_tie(statement: Statement, news: Statement) -> bool:
    """Whether a statement of the user's ties them to the person or pet ``news`` is about by family, love,
    friendship or keeping ("the user's partner is Inês", "the user has a sister named Ana", "the user has
    a terrier called Hamish": a breed names its species): a tie no event of their own ends. The person is
    one the memory knows ("the Panda got scrapped" is news of a thing of the user's mum's)."""
    holder, person = statement.holder or "", (news.holder or "").casefold()
    if person not in news.mentions:
        return False
    if holder.startswith(_ROLE):  # the role is the holder
        return kin_predicate(holder[len(_ROLE) :]) in _PERSONAL_TIES
    return holder == USER and any(kin_predicate(species(w)) in _PERSONAL_TIES for w in statement.words)


def _involves_user(statement: Statement) -> bool:
    """Whether a clause speaks of the user too ("Inês and I split up", "Tim moved away from me")."""
    return USER in statement.words


def possession(statement: Statement) -> tuple[str, frozenset[str]] | None:
    """Whose possession a clause's subject is, and what: a name with "'s" followed by a noun (or two) and
    then the clause's verb, after at most one adverb ("Clara's manager is Jonas", "Kenji's brother just
    started at Mazda", "Greta's line manager is Olaf" -> ("clara", {"manager"}), ("kenji", {"brother"}),
    ("greta", {"line", "manager"})), the name lower case (its last word: "Dona Fátima's son is opening a
    bakery" -> ("fátima", {"son"})). None when the "'s" is "is" or "has" (a predicate follows: "Kai's
    out", "Ana's in Madrid", "Biscuit's been on fresh food", "Dad's running a lot") or the subject is no
    name's."""
    owned = _possession(statement.normal)
    return None if owned is None else owned[:2]


@functools.lru_cache(maxsize=MEMO)
def _possession(normal: str) -> tuple[str, frozenset[str], bool] | None:
    """``possession``, and whether its verb is no copula: "Rosa's sister just moved ..." tells what the
    sister does; "Ana's husband is Rui" says who Ana's husband is."""
    m = _POSSESSED.match(normal)
    if m is None or m.group(1).casefold() in NOT_NAME:
        return None
    noun, after, then = m.group(2), m.group(3), m.group(4)
    if (
        noun in NOT_NAME
        or noun in OBJECT_START
        or noun in ADVERBS
        or noun.endswith("ing")
        or _verb_form(noun)
    ):
        return None  # a predicate, an adverb or a participle after the "'s": it is "is" or "has"
    verb = next((w for w in (after, then) if w and _verb(w) and w not in ADVERBS), "")
    acts = bool(verb) and verb not in _COPULAS
    nouns = {noun}
    if not _verb(after) and (after in ADVERBS or after not in NOT_NAME):
        if after not in ADVERBS:
            nouns.add(after)  # a compound's second noun ("line manager is")
        after = then or ""
    return (m.group(1).casefold(), frozenset(nouns), acts) if _verb(after) else None


# The copula's forms after a possession: what follows names the possession ("Ana's husband is Rui").
_COPULAS = frozenset("is was are were 's".split())


def _verb(word: str) -> bool:
    """A word that can be a clause's finite verb: ``_verb_form``, or a present form in -s ("runs")."""
    return _verb_form(word) or word.endswith("s")


def _verb_form(word: str) -> bool:
    """``lexicon.verb_form``, or an auxiliary's participle ("been")."""
    return verb_form(word) or word in _PARTICIPLES


def _names(statement: Statement, name: str) -> bool:
    """Whether a clause names ``name`` (a holder of a stored statement, so one the memory knows), as a
    word or possessive: "Switched Pepper's harness to a softer one" speaks of Pepper."""
    folded = name.casefold()
    if folded in statement.mentions:
        return True
    if folded in statement.addressed:
        return False  # "No worries, Nate": Nate is spoken to, not spoken about
    return re.search(rf"\b{re.escape(folded)}(?:'s)?\b", statement.normal.casefold()) is not None


def users_own(holder: str | None) -> bool:
    """Whether a holder is the user (the speaker) or one of the user's roles ("user's sister")."""
    return holder == USER or (holder or "").startswith(f"{USER}'s ")


def named_holders(statements: Iterable[Statement]) -> frozenset[str]:
    """The lower-cased names whose statements the store holds (``read``'s ``subjects``): every holder
    but the user and the user's people."""
    return frozenset(h.casefold() for s in statements if (h := s.holder) and not users_own(h))


def _a_name(holder: str | None) -> TypeGuard[str]:
    """Whether a holder is a name (neither the user nor one of the user's roles: ``users_own``)."""
    return holder is not None and not users_own(holder)


def _unknown_subject(statement: Statement) -> bool:
    """Whether a clause's subject is a name the memory knows as no holder ("Leadership", "Beehiiv")."""
    holder = statement.holder
    return _a_name(holder) and holder.casefold() not in statement.mentions


def _valued_subject(old: Statement, new: Statement) -> bool:
    """Whether ``new``'s subject is a name ``old`` gives as a value, bare or after "the" ("Lucy moved out"
    after "the user shares a flat with Lucy"; "The Defender's been replaced" after "Dad's car is a Land
    Rover Defender"): an event of the value speaks of the attribute it fills."""
    subject = new.holder
    if _a_name(subject) and subject.casefold() in _named(old):
        return True
    the = _THE_NAME.match(new.normal)
    return the is not None and the.group(1).casefold() in _named(old)


def _named(statement: Statement) -> set[str]:
    """The names a statement sets (``names_in``), not those of whom it speaks to ("Hey Tim, ...")."""
    return names_in(statement.normal) - statement.addressed


def _called_by(statement: Statement, role: str | None) -> bool:
    """Whether a statement's subject is a role of the user's ("the user's dad's a chef", "the user's
    roommate is Kai"): it speaks of whoever holds the role, as a clause about that role does."""
    if role is None or not role.casefold().startswith(_ROLE):
        return False
    normal = statement.normal.casefold()
    return any(normal.startswith(f"the {form}") for form in holder_forms(role.casefold()))


def _apposed(named: Statement, role: str | None) -> bool:
    """Whether a statement about a named holder also calls them by ``role`` ("the user's sister Ana",
    "Ana, the user's sister"): a clause about that role speaks of them."""
    return (
        _a_name(named.holder)
        and role is not None
        and role.startswith("user's ")
        and re.search(rf"\b{re.escape(role)}\b", named.normal, re.I) is not None
    )


__all__ = [
    "about_same",
    "holder_forms",
    "in_use",
    "named_holders",
    "possession",
    "same_holder",
    "speaks_of_any",
    "users_own",
]
