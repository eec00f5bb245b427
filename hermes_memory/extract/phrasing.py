"""How a relation reads in English: (Caroline, moved_to, Boston) -> "Caroline moved to Boston".

Every predicate the extractor and the graph produce has its sentence in ``PREDICATE_PHRASES``; a
predicate named elsewhere (by the LLM, by a caller of ``entity_link``) is worded by its shape —
"manager_of" is a role ("is a manager of"), "born_in" a participle ("was born in"), "reports_to" a verb
— so the model never reads "Alice colleague of Bob". The verb agrees with its subject ("the user's
parents live in Ohio"), and an object the subject owns reads as English ("the user has a dog", "the
user likes their job"), not "the user has the user's dog".
"""

from __future__ import annotations

from hermes_memory.extract.kin import KIN_PREDICATES, kin_predicate
from hermes_memory.extract.verbs import is_base_verb, plural, third_person

# (positive, negative); {s} subject, {o} object, {a} the object's article.
PREDICATE_PHRASES: dict[str, tuple[str, str]] = {
    "works_at": ("{s} works at {o}", "{s} does not work at {o}"),
    "worked_at": ("{s} worked at {o}", "{s} did not work at {o}"),
    "works_on": ("{s} is working on {o}", "{s} is not working on {o}"),
    "works_with": ("{s} works with {o}", "{s} does not work with {o}"),
    "is_a": ("{s} is {a} {o}", "{s} is not {a} {o}"),
    "lives_in": ("{s} lives in {o}", "{s} does not live in {o}"),
    "lived_in": ("{s} lived in {o}", "{s} did not live in {o}"),
    "moved_to": ("{s} moved to {o}", "{s} did not move to {o}"),
    "moved_from": ("{s} moved from {o}", "{s} did not move from {o}"),
    "is_from": ("{s} is from {o}", "{s} is not from {o}"),
    "likes": ("{s} likes {o}", "{s} does not like {o}"),
    "interested_in": ("{s} is interested in {o}", "{s} is not interested in {o}"),
    "dislikes": ("{s} dislikes {o}", "{s} does not dislike {o}"),
    "prefers": ("{s} prefers {o}", "{s} does not prefer {o}"),
    "owns": ("{s} owns {a} {o}", "{s} does not own {a} {o}"),
    "has_pet": ("{s} has {a} {o}", "{s} does not have {a} {o}"),
    "bought": ("{s} bought {a} {o}", "{s} did not buy {a} {o}"),
    "married_to": ("{s} is married to {o}", "{s} is not married to {o}"),
    "partner_of": ("{s} is in a relationship with {o}", "{s} is not in a relationship with {o}"),
    "friend_of": ("{s} is friends with {o}", "{s} is not friends with {o}"),
    "sibling_of": ("{s} is a sibling of {o}", "{s} is not a sibling of {o}"),
    "child_of": ("{s} is a child of {o}", "{s} is not a child of {o}"),
    "parent_of": ("{s} is a parent of {o}", "{s} is not a parent of {o}"),
    "relative_of": ("{s} is a relative of {o}", "{s} is not a relative of {o}"),
    "colleague_of": ("{s} is a colleague of {o}", "{s} is not a colleague of {o}"),
    "reports_to": ("{s} reports to {o}", "{s} does not report to {o}"),
    "knows": ("{s} knows {o}", "{s} does not know {o}"),
    "member_of": ("{s} is a member of {o}", "{s} is not a member of {o}"),
    "uses": ("{s} uses {o}", "{s} does not use {o}"),
    "depends_on": ("{s} depends on {o}", "{s} does not depend on {o}"),
    "studies_at": ("{s} studies at {o}", "{s} does not study at {o}"),
    "studied_at": ("{s} studied at {o}", "{s} did not study at {o}"),
    "studies": ("{s} studies {o}", "{s} does not study {o}"),
    "adopted": ("{s} adopted {a} {o}", "{s} did not adopt {a} {o}"),
    "attended": ("{s} attended {a} {o}", "{s} did not attend {a} {o}"),
    "visited": ("{s} visited {o}", "{s} did not visit {o}"),
    "started": ("{s} started {o}", "{s} did not start {o}"),
    "learned": ("{s} is learning {o}", "{s} is not learning {o}"),
    "plays": ("{s} plays {o}", "{s} does not play {o}"),
    "wants": ("{s} wants {o}", "{s} does not want {o}"),
    "plans": ("{s} plans {o}", "{s} does not plan {o}"),
    "related_to": ("{s} is related to {o}", "{s} is not related to {o}"),
    "connected_to": ("{s} is connected to {o}", "{s} is not connected to {o}"),
    "similar_to": ("{s} is similar to {o}", "{s} is not similar to {o}"),
    "same_as": ("{s} is the same as {o}", "{s} is not the same as {o}"),
}
# A relation to a thing the subject owns ("the user's sister") says the subject has one.
_HAVING = frozenset(KIN_PREDICATES | {"has_pet", "owns"})
_BASE_VERB = {
    "visited": "go to",
    "attended": "attend",
    "moved_to": "move to",
    "moved_from": "move from",
    "adopted": "adopt",
    "started": "start",
    "learned": "learn",
    "works_at": "work at",
    "lives_in": "live in",
    "member_of": "join",
    "bought": "buy",
    "studies_at": "study at",
    "married_to": "marry",
}
PREPOSITIONS = frozenset(
    "of to in at on with for from by about into as under over near like after before against".split()
)
_PAST = frozenset(
    """was were did had went came got saw took made met left bought began ran won ate drank flew gave found
    told thought felt said wrote spent sold built brought caught taught fought kept slept sent lost held
    stood sat heard knew grew threw drew wore broke chose spoke woke drove rode rose swam sang forgot
    became fell led paid meant understood hung shot hid fed fled used""".split()
)
# Participles that name a state ("is based in", "is married to"), not a past event ("graduated from").
_STATES = frozenset(
    """based located employed interested involved engaged married related connected obsessed dedicated
    devoted attached addicted associated affiliated acquainted committed exposed opposed known scheduled
    registered enrolled subscribed assigned qualified certified specialized specialised trained tied linked
    made owned named called inspired influenced""".split()
)
# Words that read "is <word> <preposition>" ("is similar to", "is proud of").
_ADJECTIVES = frozenset(
    """similar close near next allergic loyal equal adjacent identical opposite superior inferior kind good
    bad afraid aware fond proud jealous capable tired full independent responsible famous popular familiar
    friendly nice mean grateful thankful new part same""".split()
)
_ADJECTIVE_ENDINGS = ("ar", "al", "ic", "ive", "ous", "ful", "ible", "able")
_ROLE_ENDINGS = ("er", "or", "ist", "ian", "ee", "ess")
_ROLES = frozenset("boss chief head ceo cto cfo founder owner fan friend spouse mate".split())
_IRREGULAR_PLURALS = frozenset("children grandchildren people men women grandkids kids".split())


def render(subject: str, predicate: str, obj: str, negated: bool, kind: str) -> str:
    """A third-person sentence for a triple: (Caroline, moved_to, Boston) -> "Caroline moved to Boston"."""
    positive, negative = phrase(predicate)
    owned = _owned(subject, obj)
    if owned and predicate in _HAVING:  # (the user, sibling_of, the user's sister): a sister
        positive, negative = PREDICATE_PHRASES["has_pet"]
        obj, article = owned, "" if is_plural(owned) else article_for(owned)
    else:
        if owned:  # (the user, likes, the user's job): their job
            obj = f"their {owned}"
        has_article = kind in ("place", "person", "org") or obj[:1].isupper() or obj.endswith("s")
        article = "" if has_article or "'s " in obj or obj.startswith("their ") else article_for(obj)
    if predicate in ("plans", "wants") and not obj.lower().startswith("to "):
        obj = f"to {obj}"
    template = negative if negated else positive
    if _is_plural_subject(subject):  # "the user's parents live", "Tom and Amy like"
        head, _, rest = template.partition("{s} ")
        verb, _, tail = rest.partition(" ")
        template = f"{head}{{s}} {plural(verb)} {tail}"
    text = template.format(s=subject, o=obj, a=article)
    return " ".join(text.split())


def as_sentence(text: str) -> str:
    """The text with its first letter capitalised, as a sentence the model reads ("The user has a sister
    named Ana", not "the user has ..."); a first word in mixed case ("eBay ...") stays as it is."""
    return text[:1].upper() + text[1:] if text.split(" ", 1)[0].islower() else text


def phrase(predicate: str) -> tuple[str, str]:
    """The (positive, negative) sentence templates of ``predicate``: from the table, else by its shape."""
    key = predicate.strip().lower().replace(" ", "_").replace("-", "_")
    if key in PREDICATE_PHRASES:
        return PREDICATE_PHRASES[key]
    words = [w for w in key.split("_") if w]
    if not words:
        return "{s} is linked to {o}", "{s} is not linked to {o}"
    first, rest = words[0], " ".join(words[1:])
    if first in ("is", "are", "am", "be", "was", "were"):
        be = "was" if first in ("was", "were") else "is"
        return _be(f"{be} {rest}".strip())
    if first in ("has", "have", "had") and rest:
        return _having("had" if first == "had" else "has", words[1:])
    if first.endswith("ing") and len(first) > 4:  # "dating", "working_on": a progressive
        return _be(f"is {' '.join(words)}")
    if words[-1] in PREPOSITIONS and len(words) > 1:
        return _prepositional(words[:-1], words[-1])
    if len(words) == 1 and _is_role(first):
        return _be(f"is {_article(first)}{first} of")
    return _verb(words)


def plan_object(predicate: str, obj: str) -> str:
    """Object of a "plans" fact made from a planned triple: ("moved_to", "Boston") -> "move to Boston"."""
    verb = _BASE_VERB.get(predicate)
    return f"{verb} {obj}" if verb else obj


def article_for(noun: str) -> str:
    """ "a" or "an" before ``noun`` ("an older sister", "a uniform")."""
    low = noun.lower()
    if low.startswith(("uni", "use", "usu", "eu", "one", "once")):
        return "a"
    return "an" if low[:1] in "aeiou" or low.startswith(("hour", "honest", "honou")) else "a"


def is_plural(noun: str) -> bool:
    """Whether a noun phrase's last word is a plural ("sisters", "kids", "children"; not "boss")."""
    words = noun.lower().split()
    last = words[-1] if words else ""
    if last in _IRREGULAR_PLURALS:
        return True
    return last.endswith("s") and not last.endswith(("ss", "us", "is", "'s"))


def _owned(subject: str, obj: str) -> str | None:
    """ "sister" when ``obj`` is "<subject>'s sister", else None."""
    prefix = f"{subject}'s "
    if obj.lower().startswith(prefix.lower()) and len(obj) > len(prefix):
        return obj[len(prefix) :]
    return None


def _is_plural_subject(subject: str) -> bool:
    """A name is singular ("James"); a common noun or a pair is plural by its form ("the user's kids")."""
    words = subject.split()
    if not words:
        return False
    return " and " in f" {subject} " or (words[-1][:1].islower() and is_plural(words[-1]))


def _be(words: str) -> tuple[str, str]:
    be, _, rest = words.partition(" ")
    return f"{{s}} {be} {rest} {{o}}", f"{{s}} {be} not {rest} {{o}}"


def _having(has: str, words: list[str]) -> tuple[str, str]:
    words = [w for w in words if w not in ("a", "an", "the")] or words
    rest = " ".join(words)
    if _is_participle(words[0]):  # "has_visited": the perfect
        return f"{{s}} {has} {rest} {{o}}", f"{{s}} {has} not {rest} {{o}}"
    does = "did" if has == "had" else "does"  # "has_child": "has Tom as a child"
    a = "" if is_plural(rest) else article_for(rest) + " "
    return f"{{s}} {has} {{o}} as {a}{rest}", f"{{s}} {does} not have {{o}} as {a}{rest}"


def _prepositional(head: list[str], prep: str) -> tuple[str, str]:
    first, words = head[0], " ".join([*head, prep])
    if first == "born":
        return _be(f"was {words}")
    if first in PREPOSITIONS or first in _ADJECTIVES:  # "in_charge_of", "close_to", "part_of"
        return _be(f"is {words}")
    if first in _STATES or (first.endswith("ed") and prep == "by"):
        return _be(f"is {words}")  # "located_in", "employed_by"
    verb_like = is_base_verb(first) or first in _PAST or first.endswith("ed") or _third_singular(first)
    # "-ent"/"-ant" before "of" is a person ("student_of"), before another preposition a state.
    endings = _ADJECTIVE_ENDINGS if prep == "of" else (*_ADJECTIVE_ENDINGS, "ent", "ant")
    if first.endswith(endings) and not verb_like and not _is_role(first):
        return _be(f"is {words}")  # "allergic_to", "dependent_on", "capable_of"
    if not verb_like and (prep == "of" or _is_role(head[-1])):  # "manager_of", "best_friend_of"
        return _be(f"is {_article(' '.join(head))}{words}")
    return _verb([*head, prep])


def _verb(words: list[str]) -> tuple[str, str]:
    """A predicate that opens with a verb ("reports_to", "founded", "manage"), or a noun phrase."""
    first, rest = words[0], " ".join(words[1:])
    tail = f" {rest}" if rest else ""
    if first in _PAST or (first.endswith("ed") and len(first) > 3):
        return f"{{s}} {first}{tail} {{o}}", f"{{s}} never {first}{tail} {{o}}"
    if _third_singular(first):
        return f"{{s}} {first}{tail} {{o}}", f"{{s}} does not {plural(first)}{tail} {{o}}"
    if is_base_verb(first) or len(words) == 1:
        return f"{{s}} {third_person(first)}{tail} {{o}}", f"{{s}} does not {first}{tail} {{o}}"
    noun = " ".join(words)  # "best_friend": a role
    return _be(f"is {_article(noun)}{noun} of")


def _article(noun: str) -> str:
    """ "a " / "an " before a singular role, nothing before a plural one ("is friends with")."""
    return "" if is_plural(noun) else f"{article_for(noun)} "


def _third_singular(word: str) -> bool:
    return (
        word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > 2 and not _is_role(word)
    )


def _is_participle(word: str) -> bool:
    return word.endswith(("ed", "en")) or word in _PAST or word in ("been", "done", "gone", "seen")


def _is_role(word: str) -> bool:
    if kin_predicate(word) not in (None, "has_pet") or word in _ROLES:
        return True
    return word.endswith(_ROLE_ENDINGS) and not is_base_verb(word) and not word.endswith("ed")


__all__ = [
    "PREDICATE_PHRASES",
    "PREPOSITIONS",
    "article_for",
    "as_sentence",
    "is_plural",
    "phrase",
    "plan_object",
    "render",
]
