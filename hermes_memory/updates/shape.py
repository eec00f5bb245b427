"""The shape of an attribute that holds one value at a time: "the user's dentist is ...", "... is the user's
manager", "Zed's what the user codes in" — read from the words of a statement, the same for every
attribute: which words name the attribute, whether two statements can be of one attribute, and whether a
new statement gives the slot another value."""

from __future__ import annotations

import functools
import re

from hermes_memory.extract.kin import ONE_AT_A_TIME, kin_predicate
from hermes_memory.extract.relations import verb_predicates
from hermes_memory.updates.holders import same_holder
from hermes_memory.updates.readings import MEMO, STOP, content, named, values, whom
from hermes_memory.updates.statement import USER, Statement, topic_of

# The shape of a one-valued attribute: "the user's dentist is ...", "... is the user's manager"; not a
# likeness ("the user's team is like a second family" says what it is like, not what it is).
_ONE_VALUED = re.compile(
    r"^the user's (?:[\w-]+ ){0,3}?(?:\w+'s|is|are)\s(?!like\b)"
    r"|(?:\bis|'s) (?:now )?the user's (?:[\w-]+ ){0,2}?\w+\b"
    r"|(?:\bis|'s) (?:now )?(?:what|where|how|who) the user\b",  # "Zed's what the user codes in"
    re.I,
)
# A copula before a noun phrase or a name: the clause says who or what something is ("the landlord's a
# private guy"), not how it is ("the studio is on shaky ground", "the studio is coming along").
IDENTITY = re.compile(r"(?:\bis|'s|\bare)\s+(?:now\s+|actually\s+|just\s+)?(?:(?:a|an|the|some)\s|[A-Z0-9])")
# Where the words naming an attribute end: "the user's gym, ..." / "the user's top artist this year".
_PAUSE = re.compile(r"[,;:.!?]| (?:in|at|on|for|of|from|with|this|now|these)\b")
# Words that date an attribute without naming it ("the user's new manager" is the user's manager).
_TIME_MODIFIERS = frozenset("new old current former latest previous".split())


def one_valued(new: Statement) -> bool:
    """The shape of a one-valued attribute of the statement's holder: "the user's dentist is ...", "...
    is the user's manager", "Kenji's employer is ..." (anyone's possessive reads as the user's)."""
    return _one_valued(new.normal, new.holder)


@functools.lru_cache(maxsize=MEMO)
def _one_valued(normal: str, holder: str | None) -> bool:
    return _ONE_VALUED.search(_owned(normal, holder)) is not None


def _owned(normal: str, holder: str | None) -> str:
    """A statement's normal form with its holder's possessive written "the user's" ("Dad's car is" ->
    "the user's car is"), so that one shape reads a one-valued attribute of anyone."""
    if holder is None or holder == USER:
        return normal
    name = re.escape(holder.split()[-1])
    return re.sub(rf"(?:\bthe user's )?\b{name}'s\b", "the user's", normal, flags=re.I)


def attribute_words(statement: Statement) -> list[tuple[str, ...]]:
    """The words naming each attribute a statement gives one value, its noun last ("the user's default
    browser is ..." -> [("default", "browser")]; "McFit is the user's gym" -> [("gym",)]); none when it
    has no such shape or names no attribute ("Zed's what the user codes in")."""
    return list(_attribute_words(statement.normal, statement.holder))


@functools.lru_cache(maxsize=MEMO)
def _attribute_words(normal: str, holder: str | None) -> tuple[tuple[str, ...], ...]:
    text = _owned(normal, holder)
    out = []
    for match in _ONE_VALUED.finditer(text):
        if match.start() == 0:  # "the user's <attribute> is", "the user's <attribute>'s": before the verb
            phrase = text[len("the user's ") : match.end()].split()
            phrase = phrase if phrase[-1].endswith("'s") else phrase[:-1]
        else:  # "... is the user's <attribute>": the words after it, to a pause or a preposition
            at = text.find("the user's ", match.start())
            phrase = _PAUSE.split(text[at + len("the user's ") :])[0].split() if at >= 0 else []
        words = (w.lower().removesuffix("'s") for w in phrase)
        kept = tuple(w for w in words if len(w) > 1 and w not in STOP and w not in _TIME_MODIFIERS)
        if kept:
            out.append(kept)
    return tuple(out)


def same_attribute(one: Statement, other: Statement) -> bool:
    """Whether two statements can be of one attribute: always when they name a value in common ("Omar
    is the user's skip-level" speaks of "the user's team lead is Omar"). Otherwise not when both give
    one-valued attributes with different nouns ("the user's phone is ..." and "the user's laptop is ...";
    but "the user's favourite is ..." and "the user's favourite author is ..." name one), nor when one
    names a person by their role to the user ("the user's manager is ...") and the other names no one in
    that relation ("the user works at Zalando", "the user has a sister named Anna"). A role word after
    another noun is no person ("the user's password manager"). The name of whom both speak is no value in
    common: "Ana's husband is Rui" gives Ana another attribute than "the user's sister Ana lives in Porto"
    (but "Tom retired" names the value of "the user's manager is Tom")."""
    holder = whom(one) if same_holder(one.holder, other.holder) else set()
    if (values(one) & bare(other) | values(other) & bare(one)) - holder:
        return True
    a, b = attribute_words(one), attribute_words(other)
    for phrases, that in ((a, other), (b, one)):
        roles = _roles(phrases)
        if roles and not roles & (relations_named(that) | _role_held(that)):
            return False
    return not a or not b or any(x[-1] in y or y[-1] in x or topic_of(frozenset(x[-1:]), y[-1:])
                                 for x in a for y in b)  # fmt: skip


def relations_named(statement: Statement) -> set[str]:
    """The relations to someone a statement names: by a role word ("the user's boss", "a sister named
    Anna") or by a verb phrase the extractor reads as that relation ("the user reports to Tomasz")."""
    by_role = {kin_predicate(w) for w in bare(statement)}
    return {r for r in by_role if r is not None} | _verb_relations(statement.text)


def _role_held(statement: Statement) -> set[str]:
    """The relation of the role a statement's holder is to the user ("he's head chef at ..." about the
    user's dad): it speaks of whoever holds that role, and so of that relation."""
    holder = statement.holder or ""
    role = kin_predicate(holder.removeprefix("user's ")) if holder.startswith("user's ") else None
    return {role} if role is not None else set()


def _roles(phrases: list[tuple[str, ...]]) -> set[str]:
    """The relations of the attributes that are a bare role word ("the user's manager": reports_to)."""
    return {r for p in phrases if len(p) == 1 and (r := kin_predicate(p[0])) is not None}


def _said_by_verb(this: Statement, that: Statement) -> bool:
    """Whether ``that`` says, by a verb phrase, the relation of a role slot of ``this`` ("the user's
    manager is Priya" and "the user reports to Tomasz"): the slot named without its word."""
    roles = _roles(attribute_words(this))
    return bool(roles) and bool(roles & _verb_relations(that.text))


@functools.lru_cache(maxsize=MEMO)
def _verb_relations(text: str) -> frozenset[str]:
    """``verb_predicates`` of a statement's text, read once: a new clause is weighed against many
    earlier statements."""
    return verb_predicates(text)


def same_slot(old: Statement, new: Statement) -> bool:
    """Whether a one-valued attribute of one statement is named in the other ("the user's accountant is
    ..." and "the user's accountant's ..."; "the user's main hobby is ..." and "... is the user's main
    hobby"; "the user's therapist is ..." and "Started with a different therapist, Anneke"), or, when it
    is a role, said by the verb of that relation ("the user's manager is ..." and "the user reports to
    ..."): one slot, which a new value may fill."""
    return any(
        topic_of(frozenset(phrase[-1:]), that.words)
        for this, that in ((old, new), (new, old))
        for phrase in attribute_words(this)
    ) or _said_by_verb(old, new) or _said_by_verb(new, old)


def fills_slot(old: Statement, new: Statement) -> bool:
    """Whether ``new`` gives another value to the one-valued attribute ``old`` gives one, both said in
    that shape ("the user's go-to takeaway is bibimbap", then "Jollof rice is the user's go-to takeaway")
    or the new one by the verb of the old one's role ("the user reports to ..."): the same slot, a present
    state, unnegated, and no word in common beyond the attribute's own. A slot the speaker calls theirs
    with "is" holds one value at a time, whatever the attribute; so does a role held to one person at a
    time, both said by its verb (``another_by_role``)."""
    if new.negated or new.tense == "past":
        return False
    if not one_valued(old):
        return another_by_role(old, new)
    if not (one_valued(new) or _said_by_verb(old, new)):  # that shape, or the role's own verb
        return False
    if not same_slot(old, new):
        return False
    attribute = {w for phrase in (*attribute_words(old), *attribute_words(new)) for w in phrase}
    return not (content(old) - attribute) & (content(new) - attribute)


def another_by_role(old: Statement, new: Statement) -> bool:
    """Whether both statements say, by its verb, a relation one holds to one person at a time
    (``ONE_AT_A_TIME``: "the user reports to Sunita Rao", then "the user reports to Marcus Bell"; "is
    dating", "is married to"), of one holder, in the present and unnegated, the new one naming someone
    and no one the old one named: the role's verb says what "the user's manager is ..." does."""
    if new.negated or new.tense == "past" or not same_holder(old.holder, new.holder):
        return False
    if not _verb_relations(old.text) & _verb_relations(new.text) & ONE_AT_A_TIME:
        return False
    return bool(values(new) - values(old)) and not values(old) & values(new)


def bare(statement: Statement) -> set[str]:
    """The words a statement says of something, without "'s" ("Kai's out": kai)."""
    return {w.removesuffix("'s") for w in named(statement)}


__all__ = [
    "IDENTITY",
    "another_by_role",
    "attribute_words",
    "bare",
    "fills_slot",
    "one_valued",
    "relations_named",
    "same_attribute",
    "same_slot",
]
