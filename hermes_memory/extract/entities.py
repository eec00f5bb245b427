"""Find entity mentions in a sentence: known entities, people's relatives and pets, names, places, tools.

No model: known aliases, small gazetteers, capitalisation and cue words. Precision first: a
capitalised word at the start of a sentence counts only when it is known, in a gazetteer or a
common first name; days, months, interjections and chat acronyms are never entities.
"""

from __future__ import annotations

import itertools
import re

from hermes_memory.extract.kin import kin_mentions, kin_predicate
from hermes_memory.extract.lexicon import (
    CAP_STOP,
    DOT_PREFIX,
    TITLES,
    continues_name,
    gazetteer,
    gazetteer_case_ok,
    gazetteer_first_words,
    is_first_name,
    is_name_word,
    shouted,
    type_of_name,
)
from hermes_memory.extract.mentions import EntityContext, Mention, claim, is_free
from hermes_memory.extract.types import KnownEntities

_STANDALONE_KIN = {
    "Mom": "mom",
    "Dad": "dad",
    "Mum": "mum",
    "Mommy": "mom",
    "Daddy": "dad",
    "Grandma": "grandma",
    "Grandpa": "grandpa",
    "Nana": "nana",
    "Mam": "mam",
    "Mammy": "mam",
    "Mummy": "mum",
    "Gran": "gran",
    "Granny": "granny",
    "Nan": "nan",
    "Nanna": "nan",
    "Grandad": "grandad",
    "Granddad": "grandad",
}
_FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself"})
_SECOND_PERSON = frozenset({"you", "your", "yours", "yourself"})
_CONNECTORS = frozenset({"of", "the", "de", "la", "del", "da", "von", "van", "&"})

# Structured data (JSON, key=value, a Python repr): its quoted strings and capitalised words are values.
_DATA = re.compile(r"[\"'”]\s*:\s*[\"'\[{\dtfn]|[{\[]\s*[\"']|\w=\S")
_QUOTED = re.compile(r"[\"“]([A-Z][^\"”\n]{0,60}?[^\s\"”.,!?])[.,!?]?[\"”]")
_TOKEN = re.compile(r"[^\W_][\w'’.+#&-]*")


def _tokens(text: str) -> list[tuple[str, int, int]]:
    out = []
    for m in _TOKEN.finditer(text):
        word, start = m.group(), m.start()
        if word[-1] in "'’.-&":
            word = word.rstrip("'’.-&")
        end = start + len(word)
        if word.endswith(("'s", "’s")) and len(word) > 2:
            word, end = word[:-2], end - 2
        out.append((word, start, end))
    return out


def _people(ctx: EntityContext) -> dict[str, str]:
    people: dict[str, str] = {}
    for name in (ctx.speaker, ctx.addressee):
        if name and not name.startswith("the "):
            people[name.casefold()] = name
            first = name.split()[0]
            people.setdefault(first.casefold(), name)
    return people


def find_entities(text: str, offset: int, ctx: EntityContext) -> list[Mention]:
    """Entity mentions in one sentence; offsets are shifted by ``offset`` (the sentence start)."""
    taken = bytearray(len(text))
    mentions = kin_mentions(text, offset, ctx, taken)
    data = _DATA.search(text) is not None  # in data, an unknown capitalised word is a value, not a name
    # A quoted title is one name ("Charlotte's Web"); quoted values in data ({"message": "Entry added"})
    # and quoted sentences are not.
    for m in [] if data else _QUOTED.finditer(text):
        s, e = m.span(1)
        if is_free(taken, s, e) and thing_name_problem(m.group(1)) is None:
            mentions.append(Mention(m.group(1), "other", s + offset, e + offset, 0.6))
            claim(taken, s, e)
    tokens = _tokens(text)
    people = _people(ctx)
    table = gazetteer()
    i = 0
    while i < len(tokens):
        word, start, end = tokens[i]
        low = word.lower()
        if not is_free(taken, start, end):
            i += 1
            continue
        if low in _FIRST_PERSON or low in _SECOND_PERSON:
            who = ctx.speaker if low in _FIRST_PERSON else ctx.addressee
            if who is not None:
                mentions.append(Mention(who, "person", start + offset, end + offset, 1.0, known=True))
            i += 1
            continue
        found = _match_known(text, tokens, i, people, ctx.known, table)
        if found is not None:
            mention, used = found
            mention.start += offset
            mention.end += offset
            mentions.append(mention)
            claim(taken, tokens[i][1], tokens[i + used - 1][2])
            i += used
            continue
        if word in _STANDALONE_KIN:
            role = _STANDALONE_KIN[word]
            mentions.append(
                Mention(
                    f"{ctx.speaker}'s {role}",
                    "person",
                    start + offset,
                    end + offset,
                    0.7,
                    owner=ctx.speaker,
                    role=role,
                    kin_predicate=kin_predicate(role),
                )
            )
            i += 1
            continue
        if not data and (
            is_name_word(word)
            or (word.isupper() and 2 <= len(word) <= 5 and word[0].isalpha() and low not in CAP_STOP)
        ):
            used, name = _capitalised(text, tokens, i, people)
            if name is not None:
                name.start += offset
                name.end += offset
                mentions.append(name)
            i += max(used, 1)
            continue
        i += 1
    return _coordinated_people(text, mentions, offset)


# What joins the names of a list: a comma, "and", "&" ("Adam and Yusuf", "Mia, Leo & Sam").
_LIST_JOIN = re.compile(r"\s*(?:,\s*(?:and\s+)?|\s(?:and|&)\s)\s*")


def _coordinated_people(text: str, mentions: list[Mention], offset: int) -> list[Mention]:
    """Names listed together are of one kind: an unknown name joined by a comma, "and" or "&" to a
    person's name is a person too ("two boys, Adam and Yusuf": Yusuf is no common first name here)."""
    ordered = sorted(mentions, key=lambda m: m.start)
    for _ in range(2):  # a list's names reach each other in either direction
        for a, b in itertools.pairwise(ordered):
            gap = text[a.end - offset : b.start - offset]
            if _LIST_JOIN.fullmatch(gap) is None or {a.entity_type, b.entity_type} != {"person", "other"}:
                continue
            said = {text[m.start - offset : m.end - offset].lower() for m in (a, b)}
            if said & (_FIRST_PERSON | _SECOND_PERSON):
                continue  # "Freakonomics, I listen ...": the speaker, not a list of names
            unknown = b if b.entity_type == "other" else a
            if not unknown.known and " " not in unknown.name:
                unknown.entity_type = "person"
    return mentions


def _match_known(
    text: str,
    tokens: list[tuple[str, int, int]],
    i: int,
    people: dict[str, str],
    known: KnownEntities,
    table: dict[str, tuple[str, str]],
) -> tuple[Mention, int] | None:
    """The longest known/gazetteer surface starting at token i, as (mention, tokens used)."""
    first = tokens[i][0].casefold()
    longest = max(
        known.first_words.get(first, 0),
        gazetteer_first_words().get(first, 0),
        2 if first in people else 0,
        1 if any(key.startswith(first) for key in people) and tokens[i][0][:1].isupper() else 0,
    )
    if longest == 0:
        return None
    for size in range(min(longest, len(tokens) - i), 0, -1):
        words = [t[0] for t in tokens[i : i + size]]
        if size > 1 and not _adjacent(text, tokens, i, size):
            continue
        surface = " ".join(words)
        key = surface.casefold()
        start, end = tokens[i][1], tokens[i + size - 1][2]
        if key in people and words[0][:1].isupper():
            return Mention(people[key], "person", start, end, 1.0, known=True), size
        nickname = _nickname(words, people) if size == 1 else None
        if nickname is not None:  # "Mel" for Melanie, "Jo" for Joanna
            return Mention(nickname, "person", start, end, 0.9, known=True, aliases=[words[0]]), 1
        entity = known.get(surface)
        # A proper name only links to a capitalised mention ("Will" the person is not "I will").
        if entity is not None and (words[0][:1].isupper() or not entity.name[:1].isupper()):
            return Mention(
                entity.name,
                entity.entity_type,
                start,
                end,
                0.95,
                known=True,
                aliases=[surface] if surface != entity.name else [],
            ), size
        hit = table.get(key)
        if (
            hit is not None
            and gazetteer_case_ok(surface, hit[0], hit[1])
            and not continues_name(tokens, i + size)
        ):
            return Mention(hit[0], hit[1], start, end, 0.85), size
    return None


def _nickname(words: list[str], people: dict[str, str]) -> str | None:
    """The one participant whose first name starts with this capitalised word, if exactly one does."""
    word = words[0]
    if len(word) < 2 or not word.isalpha() or not word[0].isupper() or word.lower() in CAP_STOP:
        return None
    low = word.lower()
    found = {
        name for key, name in people.items() if " " not in key and key.startswith(low) and len(key) > len(low)
    }
    return found.pop() if len(found) == 1 else None


def _adjacent(text: str, tokens: list[tuple[str, int, int]], i: int, size: int) -> bool:
    return all(text[tokens[j][2] : tokens[j + 1][1]] in (" ", "'s ", "’s ") for j in range(i, i + size - 1))


def _capitalised(
    text: str,
    tokens: list[tuple[str, int, int]],
    i: int,
    people: dict[str, str] | None = None,
) -> tuple[int, Mention | None]:
    """Group a run of capitalised tokens from i into one name and type it; returns (tokens used, mention)."""
    people = people or {}
    if tokens[i][0].isupper() and (_shouting(tokens, i) or len(tokens[i][0]) > 5):
        return 1, None  # "JUST DOING IT", "INTENSE": emphasis, not an acronym
    j = _extent(text, tokens, i, people)
    prev = tokens[i - 1][0].lower() if i > 0 else ""
    prev2 = tokens[i - 2][0].lower() if i > 1 else ""
    firm = _extent(text, tokens, i, people, firms=True) if " & " in text else j
    if firm > j and type_of_name([t[0] for t in tokens[i:firm]], prev, prev2)[0] == "org":
        j = firm  # "works at Brandt & Koenig": one firm; "a flat with Kemi & Arjun": two names
    words = [t[0] for t in tokens[i:j]]
    used = j - i
    start, end = tokens[i][1], tokens[j - 1][2]
    sentence_initial = i == 0 or text[:start].rstrip()[-1:] in _SENTENCE_OPENERS
    entity_type, confidence = type_of_name(words, prev, prev2)
    if sentence_initial and entity_type == "other" and used == 1:
        return used, None  # a lone capitalised sentence starter is an ordinary word
    if len(words) == 1 and (len(words[0]) < 2 or words[0].lower() in TITLES):
        return used, None
    return used, Mention(" ".join(text[start:end].split()), entity_type, start, end, confidence)


_SENTENCE_OPENERS = ("", ":", "(", "-", "—", ".", "!", "?", '"', "“")


def _gap_ok(text: str, tokens: list[tuple[str, int, int]], j: int) -> bool:
    """Whether token j follows token j-1 within one name (a single space, or "Dr. " / "St. ")."""
    gap = text[tokens[j - 1][2] : tokens[j][1]]
    if gap in ("'s ", "’s "):  # "St. Mary's Hospital"
        return is_name_word(tokens[j][0])
    return gap == " " or (gap == ". " and tokens[j - 1][0].lower() in DOT_PREFIX)


def _extent(
    text: str, tokens: list[tuple[str, int, int]], i: int, people: dict[str, str], *, firms: bool = False
) -> int:
    """Where a run of capitalised tokens from i ends (the index after it); ``firms``: an ampersand may
    join it (``_firm``)."""
    j = i + 1
    while j < len(tokens) and (_gap_ok(text, tokens, j) or (firms and _firm(text, tokens, i, j, people))):
        word = tokens[j][0]
        if word.casefold() in people:
            break  # "Woah Joanna": the participant's name starts a mention of its own
        if is_name_word(word):
            j += 1
            continue
        # "Bank of America", "Lord of the Rings": connectors only between two name words.
        k = j
        while (
            k < len(tokens) and k - j < 2 and tokens[k][0].lower() in _CONNECTORS and _gap_ok(text, tokens, k)
        ):
            k += 1
        if k > j and k < len(tokens) and is_name_word(tokens[k][0]) and _gap_ok(text, tokens, k):
            j = k + 1
        else:
            break
    return j


def _firm(text: str, tokens: list[tuple[str, int, int]], i: int, j: int, people: dict[str, str]) -> bool:
    """Whether an ampersand before token j may join one name ("Brandt & Koenig", "Procter & Gamble",
    "Crumb & Co"): a name word on each side, and the name before it no one's first name (people listed
    with "&", "Adam & Yusuf", are two). ``_capitalised`` keeps the join only for a name that reads as an
    organisation."""
    if text[tokens[j - 1][2] : tokens[j][1]] != " & " or not is_name_word(tokens[j][0]):
        return False
    first, after = tokens[i][0], tokens[j][0]
    return not is_first_name(first) and first.casefold() not in people and after.casefold() not in people


def _shouting(tokens: list[tuple[str, int, int]], i: int) -> bool:
    return shouted([tokens[k][0] for k in (i - 1, i + 1) if 0 <= k < len(tokens)])


_LITERALS = frozenset("true false none null nil undefined nan inf yes no n/a na".split())
# Tool echoes and status words: what a tool or an assistant prints, not a thing in the user's world.
_STATUS = re.compile(
    r"(?:ok(?:ay)?|done|success(?:ful)?|succeeded|error|failed|failure|pending|saved|updated|added|removed"
    r"|deleted|replaced|stored|noted|acknowledged|got it|understood|n/?a|plain answer"
    r"|(?:entry|entries|item|memory|fact|note|record|file|changes?)\s+(?:added|removed|updated|replaced|saved"
    r"|deleted|stored|created|written|not found))[.!]?",
    re.IGNORECASE,
)
# Words that make a name a clause ("The user is allergic to peanuts", "User prefers dark mode").
_CLAUSE_VERBS = frozenset(
    """is are was were am be been being has have had do does did will would shall should can could may might
    must isn't aren't wasn't weren't doesn't don't didn't won't can't prefers likes loves hates wants needs
    lives works uses owns knows thinks says said told asked moved went got made""".split()
)
MAX_NAME_WORDS = 5


def thing_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a thing (a sentence, a literal, a tool echo, a status), or None if it can."""
    text = " ".join(name.split())
    words = text.split()
    if not words:
        return "is empty"
    if len(words) > MAX_NAME_WORDS:
        return f"has {len(words)} words (a name has at most {MAX_NAME_WORDS}); store a sentence as a fact"
    low = text.lower()
    if low in _LITERALS:
        return "is a literal value, not a name"
    if not any(c.isalpha() for c in text):
        return "has no letters (numbers and symbols only)"
    if any(c in text for c in "=(){}[]<>|\\`"):
        return "contains code or markup characters"
    if _STATUS.fullmatch(low):
        return "is a status message, not a name"
    if len(words) >= 3 and any(w.islower() and w.strip(",.;:!?") in _CLAUSE_VERBS for w in words[1:]):
        return "reads as a sentence; store it as a fact"
    return None


__all__ = [
    "MAX_NAME_WORDS",
    "EntityContext",
    "Mention",
    "find_entities",
    "thing_name_problem",
]
