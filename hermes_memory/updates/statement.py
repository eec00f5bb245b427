"""What one clause says, as far as an update needs it: whose attribute it is about (the holder), whether
it asserts anything (not a question, a hypothetical or plan, a negated change), and its words in one
normal form (the holder as "the user", values masked). Pure functions, no I/O, no model.

The holder is read from structure, not from a list of attributes:
- a first-person clause ("I", "me", "my", "we", "our") is about the user, and so is a clause that names
  one of the user's people ("Tobias is my manager now", "my new boss is Tobias"): that is the user's
  manager changing, not something Tobias does;
- "my sister Ana ..." / "Ana ..." / "Ana's ..." is about Ana; "my brother ..." (a person the user has,
  unnamed, doing something) is about "the user's brother";
- "he", "she", "they" cannot be resolved from one statement: no holder, so no update.

The gates are grammar, the same for every attribute: a question asks, modal and intention markers make a
hypothetical or plan, a future tense is a plan, and a negated past event ("I didn't leave Acme") says a
change did not happen. A negated state ("I don't drink coffee anymore") is no gate: it ends the old value.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime

from hermes_memory.extract.entities import kin_predicate
from hermes_memory.extract.speech import is_question
from hermes_memory.extract.temporal import find_temporal
from hermes_memory.extract.tense import clause_tense, past_forms

USER = "user"

_APOS = str.maketrans({"’": "'", "‘": "'"})
_WORD = re.compile(r"[A-Za-z][\w'-]*|\d[\w.,:-]*")
_FIRST_SINGULAR = frozenset("i i'm i've i'd i'll me my mine myself".split())
_FIRST_PLURAL = frozenset("we we're we've we'd we'll us our ours ourselves".split())
_SUBJECT_PRONOUNS = frozenset("i i'm i've i'd i'll we we're we've we'd we'll".split())
_SECOND = frozenset("you you're you've you'd you'll your yours yourself".split())
_THIRD = frozenset("he he's she she's they they're his her hers their theirs him them".split())
# Function words that can open a sentence capitalised without being a name (a closed class).
_NOT_NAME = frozenset(
    """a an the this that these those it it's its there there's here so well now then finally actually also
    and but or nor yet just still both all every each some any no not yes oh ok okay hey what when where
    who whom whose which why how if because though although since after before as at on in by for from
    with without about into over under until while once today tonight tomorrow yesterday lately recently
    nowadays currently instead anyway anyways honestly basically luckily sadly unfortunately fortunately
    apparently last next this quick fun guess update news ever never always usually sometimes big""".split()
)
_NAME = re.compile(r"[A-Z][\w'-]*")
# Interjections and discourse words that open chat messages (a closed class).
_INTERJECTIONS = frozenset(
    """sorry wait ah ahh oh ohh hmm hm um uh er ugh lol haha yeah yep yup nope nah ok okay alright right
    correction update typo btw fyi psst wow whoa phew meh welp huh please thanks cheers""".split()
)
_GREETINGS = frozenset("hi hey hello bye goodbye thanks thank congrats congratulations dear yo".split())
_CALENDAR = re.compile(
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?"
    r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|monday|tuesday|wednesday|thursday|friday|saturday|sunday"
    r"|spring|summer|autumn|fall|winter|weekend|morning|evening|tonight|week|month|year|days?)"
)
_STANDALONE_KIN = {w: w.lower() for w in "Mom Mum Dad Mother Father Grandma Grandpa Nana Papa Mama".split()}
_PAST_FORMS = frozenset(past_forms())
# Grammatical markers of modality and intention (modal verbs and their periphrases): a clause with one
# before its main verb tells a possibility, wish or plan, not what holds.
_MODAL = re.compile(
    r"\b(?:might|may|could|would|should|shall|must|maybe|perhaps|possibly|probably|if|whether|unless"
    r"|consider(?:s|ing|ed)?|think(?:s|ing)?\s+(?:about|of)|thought\s+(?:about|of)|plan(?:s|ning|ned)?\s+to"
    r"|plan(?:s|ning)?\s+on|going\s+to|gonna|about\s+to|want(?:s|ed)?\s+to|wanna|hop(?:e|es|ing)\s+to"
    r"|wish|intend(?:s|ing)?\s+to|tempted|debating|torn|wondering|someday|one\s+day|eventually|will|'ll"
    r"|won't|ought)\b"
)
# A negated event: "didn't leave", "never switched", "haven't sold" (the change did not happen). A
# duration after it ("haven't had coffee in weeks", "since March") makes it a state that ended.
_NEGATED_EVENT = re.compile(
    r"\b(?:didn't|did\s+not|never|haven't|have\s+not|hasn't|has\s+not|hadn't|had\s+not|wasn't\s+able)\b"
)
_DURATION = re.compile(
    r"\b(?:since|(?:for|in)\s+(?:ages|years|months|weeks|days|(?:a|an|one|two|three|four|five|six|several|a\s+few"
    r"|\d+)\s+(?:years?|months?|weeks?|days?)))\b"
)
# A change said not to be under way: "we're not separating", "isn't leaving", "wasn't moved".
_NEGATED_CHANGE = re.compile(
    r"\b(?:not|n't|never)\s+(?:\w+ing|been\s+\w+ed|\w+ed\s+(?:to|from|off|out))\b"
    r"|\b(?:wasn't|weren't)\s+\w+ed\b"
)
_NEGATION = re.compile(r"\b(?:not|no|never|n't|don't|doesn't|isn't|aren't|ain't|nobody|nothing|none)\b|n't\b")
# Someone else's words: "my mom keeps telling me ...", "a friend said ..." (not the user's own "I said").
_REPORTED = re.compile(
    r"\b(?:says?|said|told|tells|telling|thinks?|thought|suggest(?:s|ed|ing)?|recommend(?:s|ed|ing)?"
    r"|reckons?|insist(?:s|ed)?|claim(?:s|ed)?|swears?|swore|saying|advised?|urg(?:es|ed|ing)|trying\s+to"
    r"|keeps?\s+\w+ing)\b"
)
_USER_WORDS = re.compile(r"\b(?:the\s+)?user(?P<poss>'s)?\b", re.IGNORECASE)
_SPLIT = re.compile(
    r";|\s[-–—]\s|,\s*(?:but|and|so)\s+(?=(?i:i|i'm|i've|we|my|our|now|these)\b)"
    r"|(?<!\b(?:Dr|Mr|Ms|St|Jr|Sr|vs))(?<!\bMrs)(?<!\bProf)[.!?]+\s+"
)


@dataclass(frozen=True, slots=True)
class Known:
    """The lower-cased names the memory knows: ``holders`` (people, pets, projects: they have attributes
    of their own) and ``things`` (every other entity: tools, places, brands, organisations)."""

    holders: frozenset[str] = frozenset()
    things: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class Statement:
    """One clause as an update reads it.

    ``holder``: whose attribute it is about ("user", a name, "user's brother"), None when unknown.
    ``asserts``: False for a question, a hypothetical, a plan or a negated event.
    ``normal``: the clause with the holder written "the user" (comparable across first and third person).
    ``masked``: ``normal`` with its values (names, numbers) replaced by a neutral word.
    ``negated``: a negated state ("I don't ... anymore"), which can end the old value.
    ``mentions``: the known holders the clause names anywhere ("we switched Miso to a new vet": Miso).
    ``tense``: past, present or future, from its verbs (an event told in the past is no state that a
    later statement could end: "went to a poetry reading last Friday").
    """

    text: str
    holder: str | None
    asserts: bool
    why_not: str | None
    normal: str
    masked: str
    negated: bool
    words: tuple[str, ...]
    mentions: frozenset[str] = frozenset()
    tense: str = "present"


def clauses(text: str) -> list[str]:
    """The clauses of a statement: split at sentence ends, semicolons, dashes and "but/and/so I"."""
    text = text.translate(_APOS).strip()
    parts = [p.strip(" ,.;:!") for p in _SPLIT.split(text)]
    return [p for p in parts if len(p.split()) >= 2]


def read(
    text: str,
    *,
    speaker: str = USER,
    when: datetime | None = None,
    holders: Collection[str] | None = None,
    things: Collection[str] = (),
) -> Statement:
    """A clause as an update reads it (see ``Statement``); ``speaker``'s name also means the user.
    ``when``: the time it was said; a time it names after that ("next spring") makes it a plan.
    ``holders``: the lower-cased names of the people, pets and projects the memory knows; a capitalised
    word at the start is a holder only when it is one of them ("Ana moved", but "Jenkins got replaced"
    is about the user's world). Without it, any capitalised word that is no verb form counts.
    ``things``: the lower-cased names of the other entities the memory knows (tools, places, brands): a
    clause opening with one is about the user's world ("Jenkins got replaced"); one opening with an
    unknown capitalised word that is no verb form ("Art is such a joy") is about nobody in particular."""
    clean = text.translate(_APOS).strip()
    normal = _first_person(clean, speaker)
    low = normal.lower()
    words = tuple(w.lower() for w in _WORD.findall(normal))
    holder = _holder(normal, speaker, holders, things)
    why_not = _why_not(clean, re.sub(r"\bMay\b", "Mayday", normal).lower())
    if why_not is None and when is not None and any(t.start > when for t in find_temporal(clean, when)):
        why_not = "plan"
    return Statement(
        text=clean,
        holder=holder,
        asserts=why_not is None,
        why_not=why_not,
        normal=_third_person(normal),
        masked=_masked(_third_person(normal)),
        negated=_NEGATION.search(low) is not None,
        words=words,
        tense=clause_tense(low, 0, 0),
        mentions=frozenset(
            w.removesuffix("'s") for w in words if holders is not None and w.removesuffix("'s") in holders
        ),
    )


def same_holder(a: str | None, b: str | None) -> bool:
    """Whether two holders are the same one (never when either is unknown)."""
    return a is not None and b is not None and a.casefold() == b.casefold()


def about_same(old: Statement, new: Statement) -> bool:
    """Whether ``new`` can speak about ``old``'s holder: the same holder, or a known holder the new clause
    names ("We moved Miso to the cat clinic" speaks about Miso's vet)."""
    if same_holder(old.holder, new.holder):
        return True
    return old.holder is not None and old.holder != USER and old.holder.casefold() in new.mentions


def _first_person(text: str, speaker: str) -> str:
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


def _third_person(text: str) -> str:
    """First person written as "the user" (both sides of a comparison read alike)."""
    out = re.sub(r"\b(?:my|our)\b", "the user's", text, flags=re.IGNORECASE)
    out = re.sub(r"\b(?:I|we)(?:'m|'re)\b", "the user is", out, flags=re.IGNORECASE)
    out = re.sub(r"\b(?:I|we)'ve\b", "the user has", out, flags=re.IGNORECASE)
    out = re.sub(r"\b(?:I|we)'d\b", "the user would", out, flags=re.IGNORECASE)
    out = re.sub(r"\b(?:I|we)'ll\b", "the user will", out, flags=re.IGNORECASE)
    out = re.sub(r"\b(?:I|we|me|us|myself)\b", "the user", out, flags=re.IGNORECASE)
    return out


def _masked(text: str) -> str:
    """Values out: capitalised words after the first and numbers become "something"."""
    tokens = text.split()
    out: list[str] = []
    for i, token in enumerate(tokens):
        core = token.strip(".,;:!?\"'()")
        if core and (core[0].isdigit() or (i > 0 and core[0].isupper() and core.lower() != "the")):
            if out and out[-1] == "something":
                continue
            out.append("something")
        else:
            out.append(token)
    return " ".join(out)


@functools.cache
def _is_person_role(word: str) -> bool:
    predicate = kin_predicate(word)
    return predicate is not None and predicate != "has_pet"


def _holder(
    text: str, speaker: str, holders: Collection[str] | None = None, things: Collection[str] = ()
) -> str | None:
    """Whose attribute a clause is about, in this order: "my <person> ..." at its start is that person;
    a clause with the user in it ("I", "me", "my", "we") is the user's; a name at its start is that
    name's; a pronoun alone is nobody known; a clause with no subject ("Sold the Civic") is the
    speaker's, as chat drops "I"."""
    tokens = [(m.group(0), m.start()) for m in _WORD.finditer(text)]
    if not tokens:
        return None
    first = _subject_start(tokens)
    if first < len(tokens):
        low = tokens[first][0].lower()
        if low in ("my", "our") and first + 1 < len(tokens):
            owned = _possessed_holder(tokens, first)
            if owned != USER:
                return owned
        kin = _STANDALONE_KIN.get(tokens[first][0].removesuffix("'s"))
        if kin is not None:  # "Dad finally upgraded ... and keeps calling me": about Dad
            return f"user's {kin}"
    if any(t.lower() in _FIRST_SINGULAR or t.lower() in _FIRST_PLURAL for t, _ in tokens):
        return USER
    if first >= len(tokens):
        return USER
    token = tokens[first][0]
    if token.lower() in _THIRD or any(t.lower() in _SECOND for t, _ in tokens):
        return None  # "she ...", "you're so strong": nobody this statement can be matched to
    if _vocative(text, tokens, first):
        return None  # "Thanks, Melanie", "Wow, Caroline, that's great": the name is who is spoken to
    if not token[:1].isupper():
        return None  # "an ongoing adventure of learning": a remark about nobody in particular
    if not _is_name(tokens, first):
        return USER  # "Sold the Civic", "Got promoted": chat drops "I"
    name = token[:-2] if token.endswith("'s") else token
    if holders is None or name.casefold() in holders:
        return name
    # "Jenkins got replaced" names one of the user's things; any other name ("Kenji works at Honda",
    # "Art is such a joy") is its own holder, matched only by statements about the same name.
    return USER if name.casefold() in things else name


def _vocative(text: str, tokens: list[tuple[str, int]], i: int) -> bool:
    """Whether the name at ``i`` is set off by a comma (before it, or right after it at the start):
    the person spoken to, not the one spoken about."""
    word, start = tokens[i]
    before = text[:start].rstrip()
    after = text[start + len(word) :].lstrip()
    greeted = i > 0 and tokens[i - 1][0].lower() in _INTERJECTIONS | _GREETINGS  # "Hey Caroline", "Wow Mel"
    return greeted or before.endswith(",") or (i == 0 and after.startswith(","))


def _subject_start(tokens: list[tuple[str, int]]) -> int:
    """The index of the first token that can start a subject: interjections, discourse words and
    lead-in adverbials ("Sorry,", "So", "These days", "As of Friday") are skipped."""
    i = 0
    while i < len(tokens):
        word = tokens[i][0]
        low = word.lower()
        if low in _NOT_NAME or low in _INTERJECTIONS or _CALENDAR.fullmatch(low):
            i += 1
            continue
        return i
    return i


def _is_name(tokens: list[tuple[str, int]], i: int) -> bool:
    """A capitalised word that names someone or something: not a verb form opening a subjectless
    clause ("Packed up ...", "Got promoted", "Swapped the ..."), not an interjection."""
    word = tokens[i][0]
    if not _NAME.fullmatch(word):
        return False
    low = word.lower().removesuffix("'s")
    if low in _NOT_NAME or low in _INTERJECTIONS or _CALENDAR.fullmatch(low):
        return False
    return not (low.endswith(("ed", "ing")) or low in _PAST_FORMS)


def _names_someone(tokens: list[tuple[str, int]]) -> bool:
    """A capitalised first word is a name when a verb or "'s" follows it (not "Finally, ...")."""
    first = tokens[0][0]
    if first.endswith("'s"):
        return True
    return len(tokens) > 1 and tokens[1][0][:1].islower()


def _possessed_holder(tokens: list[tuple[str, int]], i: int) -> str:
    """ "my sister Ana moved" -> Ana; "my brother got" -> "user's brother"; "my phone is", "my manager is
    Tobias" (naming) -> user."""
    j = i + 1
    while j < len(tokens) and tokens[j][0].lower() in (
        "new",
        "old",
        "little",
        "big",
        "older",
        "younger",
        "best",
    ):
        j += 1
    if j >= len(tokens):
        return USER
    role = tokens[j][0].lower().removesuffix("'s")  # "my dad's favourite band": the dad's
    if kin_predicate(role) is None:
        return USER
    after = [t for t, _ in tokens[j + 1 : j + 4]]
    if len(after) > 1 and after[0].islower() and after[1].lower() in ("is", "was", "are", "were", "'s"):
        return USER  # "my family doctor is ...": the role word is a modifier of the user's thing
    if after and _NAME.fullmatch(after[0]) and after[0].lower() not in _NOT_NAME:
        return after[0]  # "my sister Ana ...", "my dog Biscuit ..."
    if not _is_person_role(role):
        return f"user's {role}"  # "my dog eats ...": the user's (unnamed) pet
    if after and after[0].lower() in ("is", "was") and len(after) > 1 and _NAME.fullmatch(after[1]):
        return USER  # "my manager is Tobias": the user's manager, named
    return f"user's {role}"


def _why_not(text: str, low: str) -> str | None:
    """Why the clause asserts nothing that holds now (None when it does)."""
    if is_question(text):
        return "question"
    for m in _REPORTED.finditer(low):
        before = low[: m.start()].split()[-4:]
        if not any(w in _SUBJECT_PRONOUNS for w in before):
            return "reported"
    if _MODAL.search(low):
        return "hypothetical"
    if clause_tense(low, 0, len(low)) == "future":
        return "plan"
    ended = re.search(r"\b(?:anymore|any\s+more|longer)\b", low) is not None
    event = _NEGATED_EVENT.search(low)
    if event and not _DURATION.search(low, event.end()) and not ended:
        return "negated"
    if _NEGATED_CHANGE.search(low) and not ended:
        return "negated"
    return None


__all__ = ["USER", "Known", "Statement", "about_same", "clauses", "read", "same_holder"]
