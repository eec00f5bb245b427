"""Relatives and pets: "my sister Anna", "Biscuit is my dog", "a beagle named Biscuit", "my dog" alone,
and the relation each implies."""

from __future__ import annotations

import functools
import re

from hermes_memory.extract.lexicon import gazetteer, is_first_name, is_name_word
from hermes_memory.extract.mentions import EntityContext, Mention, claim, is_free

# Each word for a relative or pet -> the relation it implies (owner -> the relative or pet).
_KIN: dict[str, str] = {}
for _pred, _words in (
    ("sibling_of", "sister sisters brother brothers sibling siblings"),
    (
        "child_of",
        "mom mother mum mommy mummy mam mammy mama dad father daddy papa parent parents stepmom stepdad",
    ),
    ("parent_of", "son sons daughter daughters kid kids child children"),
    ("married_to", "husband wife spouse"),
    ("partner_of", "partner boyfriend girlfriend fiance fiancé fiancee fiancée"),
    ("friend_of", "friend friends bff buddy pal bestie mate mates"),
    (
        "relative_of",
        "grandma grandmother grandpa grandfather grandparents granny gran nana nan nanna grandad granddad "
        "grandson granddaughter grandkids grandchildren aunt uncle cousin cousins niece nephew family",
    ),
    ("colleague_of", "coworker coworkers co-worker colleague colleagues teammate teammates"),
    ("reports_to", "boss manager supervisor"),
    (
        "knows",
        "classmate classmates roommate roommates flatmate flatmates housemate housemates neighbor neighbors "
        "neighbour neighbours mentor "
        "teacher coach therapist",
    ),
    (
        "has_pet",
        "dog dogs cat cats puppy puppies pup kitten kittens pet pets horse horses bunny rabbit "
        "hamster parrot bird fish turtle turtles snake",
    ),
):
    for _w in _words.split():
        _KIN[_w] = _pred
_NEXT_WORD = re.compile(r"\s+([a-z]+)")
_COMPOUND_HEADS = frozenset(
    """painting paintings photo photos picture pictures pic pics drawing portrait food toy toys bed walker
    park show group chat tree name names doctor vet business reunion trip vacation dinner house home recipe
    recipes members member time day stuff sculpture collection sitter sitting training videos video account
    page room friend friends""".split()
)
_KIN_MODIFIERS = (
    "best|older|younger|little|big|baby|twin|eldest|oldest|youngest|late|step|new|dear|two|three|whole|entire"
)
_KIN_KEEP = frozenset({"best", "older", "younger", "little", "big", "twin", "eldest", "oldest", "youngest"})
# Latin letters with their accents ("Jürgen", "Inês", "Łukasz"); a word that does not start with a capital
# is trimmed off a match as no name (``_name_in``).
_NAME_RE = r"[A-ZÀ-ÖØ-ÞĀ-ž](?:[a-zß-öø-ÿĀ-ž'’\-]|(?<=['’])[A-ZÀ-ÖØ-Þ]){1,20}"  # "O'Brien" too
# A person's name of up to three words: "my manager Greta Lindholm", "Marek Novak is my boss".
_FULL_NAME_RE = rf"{_NAME_RE}(?:\s+{_NAME_RE}){{0,2}}"


# Whose relative or pet: "my", "our", "your", and "the user's" (how notes about the user are written).
_POSSESSOR = r"(?P<poss>[Mm]y|[Oo]ur|[Yy]our|(?:[Tt]he\s+)?[Uu]ser['’]s)"


@functools.cache
def _kin_words() -> str:
    return "|".join(sorted((re.escape(k) for k in _KIN), key=len, reverse=True))


@functools.cache
def _kin_pattern() -> re.Pattern[str]:
    # "my dog Biscuit", "my dog, Biscuit", "my dog named Biscuit", "my dog is called Biscuit",
    # "my dog's name is Biscuit", "my sisters Anna and Eva", "my manager is Priya Natarajan".
    return re.compile(
        rf"\b{_POSSESSOR}\s+(?P<mods>(?:(?:{_KIN_MODIFIERS})\s+){{0,2}})(?P<kin>{_kin_words()})\b"
        rf"(?:(?:,?\s+(?:(?:named|called)\s+)?|\s+(?:is|was)\s+(?:named|called)\s+|['’]s\s+name\s+is\s+"
        rf"|(?P<cop>\s+(?:is|was)\s+))"
        rf"(?P<n1>{_FULL_NAME_RE})(?:\s+and\s+(?P<n2>{_FULL_NAME_RE}))?\b)?"
    )


@functools.cache
def _appositive_kin_pattern() -> re.Pattern[str]:
    # "Biscuit, my dog, ...", "Biscuit is my dog", "Anna is the user's sister"; not "Tom is my brother's
    # best friend" (the relative owns what Tom is).
    return re.compile(
        rf"\b(?P<n1>{_FULL_NAME_RE})(?:,\s+|\s+(?:is|was)\s+)(?:also\s+)?{_POSSESSOR}\s+"
        rf"(?P<mods>(?:(?:{_KIN_MODIFIERS})\s+){{0,2}})(?P<kin>{_kin_words()})\b(?!['’]s\b)"
    )


# Breeds and kinds that name a pet's species: "a beagle named Biscuit" is a dog.
_BREEDS = {
    **dict.fromkeys(
        """beagle labrador lab retriever poodle terrier husky corgi dachshund spaniel shepherd bulldog
        chihuahua pug collie boxer greyhound whippet schnauzer rottweiler doberman dalmatian pomeranian
        shih-tzu maltese mutt""".split(),
        "dog",
    ),
    **dict.fromkeys("tabby siamese persian ragdoll sphynx bengal kitty".split(), "cat"),
}
_PLURAL_PETS = {"puppies": "puppy", "kittens": "kitten", "bunnies": "bunny", "fish": "fish"}


def species(word: str) -> str:
    """The role a pet word gives its named pet: "beagle" -> "dog", "cats" -> "cat"."""
    low = word.lower()
    if low in _BREEDS:
        return _BREEDS[low]
    if low in _PLURAL_PETS:
        return _PLURAL_PETS[low]
    return low[:-1] if low.endswith("s") and low[:-1] in _KIN else low


@functools.cache
def _named_after_article_pattern() -> re.Pattern[str]:
    # "a puppy named Max", "a beagle called Biscuit", "two cats, Pixel and Nova", "a brother called Max".
    words = [*_KIN, *_BREEDS]
    kin = "|".join(sorted(words, key=len, reverse=True))
    return re.compile(
        rf"\b(?:a|an|the|new|two|three|four)\s+(?:\w+\s+)?(?P<kin>{kin})"
        rf"(?:\s+(?:named|called)\s+|,\s+(?=[A-Z]\w*(?:,?\s+and\s+[A-Z]|[.!?]|$)))"
        rf"(?P<n1>{_NAME_RE})(?:,?\s+and\s+(?P<n2>{_NAME_RE}))?\b"
    )


# The speaker has the relative or pet named next: "I adopted a ...", "We've got two cats, ...", "I have a
# brother called ...".
_FIRST_PERSON_HAS = re.compile(
    r"\b(?:I|[Ww]e)(?:['’]ve)?(?:\s+(?:just|finally|recently|also|now|still|already|got|have|had))*\s+"
    r"(?:have|has|had|got|adopted|rescued|own|owned|bought|found|took\s+in|brought\s+home)\s+[^.!?]*$"
)


def _owner(possessive: str, ctx: EntityContext) -> str | None:
    low = possessive.lower()
    if low == "your":
        return ctx.addressee
    if low.endswith(("user's", "user’s")):
        return ctx.user or "the user"
    return ctx.speaker


def kin_mentions(text: str, offset: int, ctx: EntityContext, taken: bytearray) -> list[Mention]:
    """Relatives and pets in one sentence, named or not; their spans are claimed in ``taken``."""
    mentions: list[Mention] = []
    for m in _appositive_kin_pattern().finditer(text):
        owner = _owner(m.group("poss"), ctx)
        name = _name_in(m, "n1")
        if owner is None or name is None or name[0].casefold() == owner.casefold():
            continue
        mentions.append(_named_kin(m, name, owner, offset))
        claim(taken, m.start(), m.end())
    for m in _kin_pattern().finditer(text):
        if not is_free(taken, m.start(), m.span("kin")[1]):
            continue
        owner = _owner(m.group("poss"), ctx)
        following = _NEXT_WORD.match(text, m.span("kin")[1])
        if owner is None or (following and following.group(1).lower() in _COMPOUND_HEADS):
            continue  # "my horse painting", "my family photo": the relative only qualifies a thing
        names = [name for key in ("n1", "n2") if (name := _name_in(m, key)) is not None]
        if m.group("cop") is not None:  # "my boss is Priya Natarajan": one name, if a name at all
            names = [n for n in names[:1] if _named_by_is(n, _role(m)[1], text, ctx)]
        if names:
            for name in names:
                mentions.append(_named_kin(m, name, owner, offset))
                claim(taken, name[1], name[2])
        else:
            s, e = m.span("poss")[0], m.span("kin")[1]
            mentions.append(_relational(m, owner, s + offset, e + offset, ctx))
        claim(taken, m.start(), m.span("kin")[1])
    for m in _named_after_article_pattern().finditer(text):
        owned = _FIRST_PERSON_HAS.search(text, 0, m.start()) is not None
        role = species(m.group("kin"))
        predicate = _KIN.get(role, "has_pet")  # a breed is a pet's
        kind = "pet" if predicate == "has_pet" else "person"
        for key in ("n1", "n2"):
            called = m.group(key)
            if called is None:
                continue
            s, e = m.span(key)
            if not (is_free(taken, s, e) and is_name_word(called)):
                continue
            if owned:  # "I adopted a beagle named Biscuit": the speaker's dog, "my dog" from now on
                mentions.append(
                    Mention(called, kind, s + offset, e + offset, 0.8, owner=ctx.speaker, role=role,
                            kin_predicate=predicate, aliases=[f"{ctx.speaker}'s {role}"])
                )  # fmt: skip
            elif kind == "pet":
                mentions.append(Mention(called, kind, s + offset, e + offset, 0.75))
            else:
                continue  # "She has a brother named Tom", "I see a therapist called Miriam": any name
            claim(taken, s, e)
    return mentions


# After a name, what shows it is no name but a title or a grade: "Head of Science", "Year 3".
_NO_NAME_AFTER = re.compile(r"\s+(?:of\b|\d)")


def _named_by_is(name: tuple[str, int, int], predicate: str, text: str, ctx: EntityContext) -> bool:
    """Whether the words after "my <relative> is" name them ("my boss is Priya Natarajan", "my sister is
    Anna") rather than say what they are ("my dad is Italian", "my son is Autistic", "my daughter is
    Year 3", "my cat is Siamese"): two name words or more, or one the lexicon knows as a first name, the
    memory as a person, or any one for a pet (not a breed); never a word the gazetteer knows, nor words
    before "of" or a number."""
    words, end = name[0], name[2]
    if words.casefold() in gazetteer() or _NO_NAME_AFTER.match(text, end):
        return False
    if " " in words:
        return True
    if predicate == "has_pet":
        return words.lower() not in _BREEDS
    known = ctx.known.get(words)
    if is_first_name(words) or (known is not None and known.entity_type == "person"):
        return True
    # A relative is described as often as named ("my dad is Italian"); a boss, a partner, a therapist is
    # named, by a name no list holds, unless the word reads as a proper adjective.
    return predicate not in LASTING_PREDICATES and not _proper_adjective(words)


# Endings of adjectives made from names (of places, faiths, conditions): "Catholic", "Japanese", "Polish",
# "Buddhist"; and those of demonyms, read as such when the word without them begins a known place.
_ADJECTIVE_ENDING = re.compile(r"(?:ic|ese|ish|ist)$", re.IGNORECASE)
_DEMONYM_ENDING = re.compile(r"(?:ian|ean|an|i)$", re.IGNORECASE)


def _proper_adjective(word: str) -> bool:
    """Whether a capitalised word reads as an adjective rather than a name: "Catholic", "Brazilian"
    (Brazil), "Kenyan" (Kenya), "Israeli" (Israel); not "Claudia", "Brian", "Inês"."""
    if _ADJECTIVE_ENDING.search(word):
        return True
    ending = _DEMONYM_ENDING.search(word)
    if ending is None:
        return False
    stem = word[: ending.start()].casefold()
    return len(stem) >= 4 and any(
        place.startswith(stem) for place, (_, kind) in gazetteer().items() if kind == "place"
    )


def _role(m: re.Match[str]) -> tuple[str, str]:
    """(role, predicate) of a kin match: ("best friend", "friend_of")."""
    kin = m.group("kin").lower()
    mods = [w for w in m.group("mods").lower().split() if w in _KIN_KEEP]
    return " ".join([*mods, kin]), _KIN[kin]


def _name_in(m: re.Match[str], key: str) -> tuple[str, int, int] | None:
    """The name a kin match's group ``key`` holds and its span: its capitalised words without those
    that are no name ("Yesterday Anna Berg" is Anna Berg) and without a possessive "'s" ("my son Kai's
    driving test" names Kai); None when none is one."""
    if m.group(key) is None:
        return None
    words = [(w.group(), w.start(), w.end()) for w in re.finditer(r"\S+", m.group(key))]
    while words and not is_name_word(words[0][0]):
        words.pop(0)
    while words and not is_name_word(words[-1][0]):
        words.pop()
    if not words:
        return None
    at = m.start(key)
    end = words[-1][2]
    last = words[-1][0]
    if len(last) > 3 and last[-2:] in ("'s", "’s"):  # "my son Kai's driving test": Kai, whose test it is
        end -= 2
    return m.group(key)[words[0][1] : end], at + words[0][1], at + end


def _named_kin(m: re.Match[str], name: tuple[str, int, int], owner: str, offset: int) -> Mention:
    """A named relative or pet ("my dog Biscuit"), known also as "<owner>'s dog"; ``name``: its name
    and span in the sentence."""
    role, predicate = _role(m)
    _, s, e = name
    return Mention(
        name[0],
        "pet" if predicate == "has_pet" else "person",
        s + offset,
        e + offset,
        0.8,
        owner=owner,
        role=role,
        kin_predicate=predicate,
        aliases=[f"{owner}'s {role}"],
        identity="cop" in m.re.groupindex and m.group("cop") is not None,
    )


def _relational(m: re.Match[str], owner: str, start: int, end: int, ctx: EntityContext) -> Mention:
    """An unnamed relative or pet ("my dog"): the named one it is known as, else "<owner>'s dog"."""
    role, predicate = _role(m)
    entity_type = "pet" if predicate == "has_pet" else "person"
    relational = f"{owner}'s {role}"
    known = ctx.known.get(relational)
    if (
        known is not None
        and not ctx.known.is_ambiguous(relational)
        and known.name.casefold() != relational.casefold()
    ):
        # "my dog" after "my dog is called Biscuit": Biscuit, whose alias this is.
        return Mention(
            known.name, known.entity_type, start, end, 0.9, known=True, owner=owner, role=role,
            kin_predicate=predicate,
        )  # fmt: skip
    return Mention(relational, entity_type, start, end, 0.8, owner=owner, role=role, kin_predicate=predicate)


#: Every relation a relational mention ("my sister", "my dog") can imply.
KIN_PREDICATES: frozenset[str] = frozenset(_KIN.values())
#: The relations one holds to one person at a time: those none of whose role words is the plural of
#: another ("manager", "wife", "girlfriend"; not "friend" / "friends", "sister" / "sisters").
ONE_AT_A_TIME: frozenset[str] = frozenset(_KIN.values()) - {
    pred for word, pred in _KIN.items() if word.endswith("s") and _KIN.get(word[:-1]) == pred
}
#: The relations of family, which no later statement ends: "Lily moved up to year 4" says something new
#: of the user's daughter, and she is still their daughter. (A partner, a friend, a boss, a pet can go.)
LASTING_PREDICATES: frozenset[str] = frozenset({"sibling_of", "child_of", "parent_of", "relative_of"})


def kin_predicate(role: str) -> str | None:
    """The relation a relational mention implies (owner -> mention): "sister" -> sibling_of."""
    return _KIN.get(role.split()[-1]) if role else None


__all__ = [
    "KIN_PREDICATES",
    "LASTING_PREDICATES",
    "ONE_AT_A_TIME",
    "kin_mentions",
    "kin_predicate",
    "species",
]
