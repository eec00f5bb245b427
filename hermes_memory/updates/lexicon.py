"""The closed word classes of English grammar that reading a clause rests on: pronouns, function words,
interjections and greetings, auxiliaries and their tense, irregular past forms. Lists of the language's
grammar, never of phrasings or topics."""

from __future__ import annotations

import re
from collections.abc import Sequence

from hermes_memory.extract.lexicon import TITLES
from hermes_memory.extract.tense import past_forms

APOS = str.maketrans({"’": "'", "‘": "'"})
WORD = re.compile(r"[A-Za-z][\w'-]*|\d[\w.,:-]*")
FIRST_SINGULAR = frozenset("i i'm i've i'd i'll me my mine myself".split())
FIRST_PLURAL = frozenset("we we're we've we'd we'll us our ours ourselves".split())
SECOND = frozenset("you you're you've you'd you'll your yours yourself".split())
THIRD = frozenset("he he's she she's they they're his her hers their theirs him them".split())
# Function words that can open a sentence capitalised without being a name (a closed class).
NOT_NAME = frozenset(
    """a an the this that these those it it's its there there's here so well now then finally actually also
    and but or nor yet just still both all every each some any no not yes oh ok okay hey what when where
    who whom whose which why how if because though although since after before as at on in by for from
    with without about into over under until while once today tonight tomorrow yesterday lately recently
    nowadays currently instead anyway anyways honestly basically luckily sadly unfortunately fortunately
    apparently last next this quick fun guess update news ever never always usually sometimes big""".split()
)
NAME = re.compile(r"[A-Z][\w'-]*")
#: A name written in mixed case, wherever it stands ("macOS", "iPhone", "eBay"): no sentence starts so.
MIXED_CASE = re.compile(r"[a-z]+[A-Z][\w'-]*")
# Interjections and discourse words that open chat messages (a closed class).
INTERJECTIONS = frozenset(
    """sorry wait ah ahh oh ohh hmm hm um uh er ugh lol haha yeah yep yup nope nah ok okay alright right
    correction update typo btw fyi psst wow whoa phew meh welp huh please thanks cheers oops whoops""".split()
)
GREETINGS = frozenset("hi hey hello bye goodbye thanks thank congrats congratulations dear yo".split())
# Words of chat that name nothing, wherever they stand capitalised ("Oh, and BTW, ..."): never a value.
DISCOURSE = INTERJECTIONS | GREETINGS
# Capitalised words that are never the person spoken to ("Yeah, I ...": neither "Yeah" nor "I").
NOT_SPOKEN_TO = NOT_NAME | DISCOURSE | FIRST_SINGULAR
CALENDAR = re.compile(
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?"
    r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|monday|tuesday|wednesday|thursday|friday|saturday|sunday"
    r"|spring|summer|autumn|fall|winter|weekend|morning|evening|tonight|week|month|year|days?)"
)
STANDALONE_KIN = {
    w: w.lower()
    for w in """Mom Mum Mam Mommy Mummy Mammy Dad Daddy Mother Father Grandma Grandpa Gran Granny Nan Nana
    Nanna Grandad Granddad Papa Mama""".split()
}
# Irregular past forms, also with the prefixes that make a verb of a verb ("outgrew", "overtook").
PAST_FORMS = frozenset(
    f"{prefix}{form}" for form in past_forms() for prefix in ("", "out", "over", "under", "with", "mis", "up")
)
NEGATION = re.compile(r"\b(?:not|no|never|n't|don't|doesn't|isn't|aren't|ain't|nobody|nothing|none)\b|n't\b")
# A negator that negates no clause: one that only lessens a time ("not so long ago", "not long after"),
# or one before an additive focus particle ("isn't just a business", "not only on Sundays"), which adds
# to what it names rather than denying it.
NOT_NEGATING = re.compile(
    r"\bnot\s+(?:(?:so|too|that|very)\s+)?long\s+(?:ago|after|before)\b"
    r"|(?:\bnot|n't)\s+(?:just|only|merely|simply)\b"
)
TENSE_WORD = re.compile(r"[a-z][a-z'-]*")
# Auxiliaries and copulas: the tense they carry (a closed class of the grammar).
VERB_TENSE = {
    **dict.fromkeys(
        "is are am has have 's 're 'm 've do does don't doesn't isn't aren't hasn't haven't".split(),
        "present",
    ),
    **dict.fromkeys("was were did had didn't wasn't weren't hadn't".split(), "past"),
    **dict.fromkeys("will 'll won't shall".split(), "future"),
}
# Pronouns whose "'s" or "'re" is a copula or auxiliary, never a possessive ("it's", "everything's",
# "they're"; not "everyone's", which may own): a finite verb in the present, wherever the clause puts it
# ("On the train it's mostly ...").
CLITIC_HOSTS = frozenset(
    "it that there here he she they we what who where how everything something nothing".split()
)
# Pronouns that can stand as a clause's subject (what they refer to lies outside the clause).
PRONOUN_SUBJECTS = frozenset("it it's that that's there there's here here's this".split())
# Words that open a clause without naming what it is about.
TOPICLESS = frozenset("the user user's it's it what there here more much lot bit thing things one".split())
# Focus particles: "not just", "not only" add to what they negate.
FOCUS = frozenset("just only merely simply even quite really so too very that".split())
# A value set right after a comma: "..., not the YMCA", "Bangalore, not Bloodhound" ("not just" adds);
# ``SET_RIGHT`` holds the words set right, to the next pause.
BARE_NOT = rf",\s*not\s+(?!(?:{'|'.join(FOCUS)})\b)"
SET_RIGHT = re.compile(rf"{BARE_NOT}([^,;:.!?()]+)", re.IGNORECASE)
# Modal verbs (a closed class of the grammar): a "not" after one negates the verb it governs.
_MODALS = frozenset("can could will would shall should may might must".split())
# Verbs worn as clitics ("she's", "I'm", "we've"): a "not" after one negates it.
_CLITICS = ("'s", "'m", "'re", "'ve", "'d", "'ll")
# Chat leaves the comma out ("its 10mg not 5", "her name's Rachel not Rebecca"): a "not" after a word that
# is no verb, before a value (a number or a name, a determiner between), sets that value right as well.
_UNPAUSED_NOT = re.compile(r"([\w'%]+)\s+not\s+((?:(?:the|a|an)\s+)?(?:\d|[A-Z])[^,;:.!?()]*)")
AND = frozenset({"and", "or", "&"})  # "the user and others roasted": the subject goes on
REGULAR_PAST = re.compile(r"[a-z]{2,}(?<!e)ed")  # "used", "moved", "started"; not "need", "speed"
ADVERBS = frozenset(
    """just finally recently also still never already mostly usually really now currently actually only even
    always sometimes often officially basically mainly kind sort of no longer""".split()
)


# Irregular past participles, which follow "'s" as "has" ("the offsite's been moved"): a closed class.
PARTICIPLES = frozenset(
    """been gone done seen taken given become grown known shown broken chosen driven eaten fallen
    forgotten gotten hidden ridden risen spoken stolen worn written""".split()
)


def past_form(word: str) -> bool:
    """Whether a lower-case word is a past form, irregular ("went", "sold") or regular ("moved")."""
    return word in PAST_FORMS or REGULAR_PAST.fullmatch(word) is not None


def verb_form(word: str) -> bool:
    """Whether a lower-case word is an auxiliary or copula (``VERB_TENSE``) or a past form, irregular or
    regular: a word that can be a clause's verb."""
    return word in VERB_TENSE or past_form(word)


def possessive(tokens: Sequence[str], k: int) -> bool:
    """Whether ``tokens[k]``, a word with "'s", owns the noun after it rather than being the clause's verb:
    "user's" always; another when a word that is no verb, participle, determiner, preposition or adverb
    follows it and a finite verb comes within the next two words ("Lucía's clinic hired two vets", "Tom's
    new boss is strict"; but "Ikenna's in Vancouver", "Ana's moved", "the offsite's been moved", "Dad's
    finally retired", "Tom's a chef")."""
    if tokens[k] == "user's":
        return True
    after = tokens[k + 1 : k + 4]
    if len(after) < 2 or verb_form(after[0]) or after[0] in DETERMINERS | PLACING | ADVERBS | PARTICIPLES:
        return False
    return any(verb_form(t) for t in after[1:])


def drops_subject(word: str) -> bool:
    """Whether a lower-case word opening a clause is its verb, the subject dropped as chat drops "I": a
    past form ("packed up ...", "swapped the iphone ...") or a negated auxiliary ("didn't renew ...",
    "haven't touched a drop ..."; "don't ..." opens an imperative as often)."""
    return word.endswith("ed") or word in PAST_FORMS or (word.endswith("n't") and word != "don't")


# A negated auxiliary, or "I'm" and "I've", typed without the apostrophe ("couldnt", "cant", "im"), and the
# Scots negated auxiliaries ("didnae", "cannae", "wasnae"; "dinnae" is "don't"): a closed class of the
# grammar as chat spells it.
_UNMARKED = re.compile(
    r"\b(?:(?P<aux>do|does|did|is|are|was|were|have|has|had|could|would|should|must|need|ca|wo|ai)nt"
    r"|(?P<scots>did|is|are|was|were|have|has|had|could|would|should|must|can|din)nae"
    r"|(?P<i>i)(?P<verb>m|ve))\b",
    re.IGNORECASE,
)
_SCOTS = {"can": "ca", "din": "do"}


def with_apostrophes(text: str) -> str:
    """``text`` with the apostrophe chat leaves out of a negated auxiliary or of "I'm" and "I've" put back
    ("couldnt keep up" -> "couldn't keep up", "im on 100mg" -> "i'm on 100mg", "didnae renew" -> "didn't
    renew")."""
    return _UNMARKED.sub(_apostrophe, text)


def _apostrophe(m: re.Match[str]) -> str:
    if m.group("aux"):
        return f"{m.group('aux')}n't"
    if m.group("scots"):
        aux = m.group("scots")
        return f"{_SCOTS.get(aux.lower(), aux)}n't"
    return f"{m.group('i')}'{m.group('verb')}"


def set_right_in(text: str) -> str | None:
    """What a correction sets right ("..., not the YMCA", "Rachel not Rebecca"), to the next pause; None
    without one. A "not" with no comma that follows a verb negates it ("I'm not Dr. Ruiz's patient")."""
    match = SET_RIGHT.search(text)
    if match is not None:
        return match.group(1)
    for unpaused in _UNPAUSED_NOT.finditer(text):
        before = unpaused.group(1).lower()
        if not (verb_form(before) or before in _MODALS or before.endswith(_CLITICS)):
            return unpaused.group(2)
    return None


def contrasted(low: Sequence[str]) -> frozenset[str]:
    """The words a clause sets right after a bare "not" ("..., not the YMCA" -> {"ymca"}): a correction
    names the earlier value. "Not just"/"not only" adds to a value rather than setting it right."""
    if "not" not in low:
        return frozenset()
    after = low[low.index("not") + 1 :]
    if not after or after[0] in FOCUS:
        return frozenset()
    return frozenset(w.removesuffix("'s") for w in after if (len(w) > 2 or w.isdigit())
                     and w not in TOPICLESS and w not in OBJECT_START and w not in THIRD)  # fmt: skip


def set_right_words(text: str) -> frozenset[str]:
    """The words a correction sets right, to the next pause (``set_right_in``, word by word; see
    ``Statement.set_right``)."""
    said = set_right_in(text)
    if said is None:
        return frozenset()
    words = (w.lower().removesuffix("'s") for w in WORD.findall(said))
    return frozenset(w for w in words if w not in OBJECT_START and w not in TOPICLESS and w not in THIRD)


def gerund(word: str) -> bool:
    """Whether a lower-case word may be a gerund or present participle: "-ing" after a stem with a vowel
    ("walking", "seeing"); not a noun whose "-ing" is no ending ("thing", "spring", "king")."""
    return word.endswith("ing") and re.search(r"[aeiouy]", word[:-3]) is not None


def present_s(word: str) -> bool:
    """Whether a lower-case word may be a present in the third person ("eats", "charges"; not "class")."""
    return word.endswith("s") and not word.endswith("ss")


# Determiners: articles, possessives and demonstratives ("the next stop", "my Octavia").
DETERMINERS = frozenset("the a an my our your his her their its this that these those".split())
# Prepositions of a state's end: a time after one is where what holds now ends ("covering until next
# year"), not a time it is still to come (a closed class).
UNTIL = frozenset("until till til through".split())
# Prepositions that place an event: where, to or from where, with whom, for how long (a closed class).
PLACING = frozenset("at in on from to into onto with by near off for via through over inside outside".split())
# Words that open an object or complement: a capitalised word before one is a verb ("Shut the ...").
OBJECT_START = DETERMINERS | frozenset("it them some all".split())
# Titles before a name ("Dr. Osei", "Mr Okafor"): part of a name, never a value of their own.
HONORIFICS = frozenset("dr mr mrs ms mx prof sir dame".split())
# Titles before a name, as a pattern ("Dr. Osei", "Coach Rivera", "Aunt Mary"): the name follows.
TITLE = r"(?i:" + "|".join(sorted(HONORIFICS | TITLES, key=len, reverse=True)) + r")\.?"
# Words that place a role in the past ("my former manager", "an ex-colleague"); ``asserting`` reads a
# subject opened by the commonest of them ("my old team") as a former one.
BYGONE = frozenset("former old previous ex once erstwhile".split())
# Adverbials that place what a clause says in the stretch of time up to now, against before it (a closed
# class): "these days", "nowadays", "lately", "of late", "currently", "at the moment", "at present".
PRESENT_STRETCH = re.compile(
    r"\b(?:these\s+days|nowadays|lately|of\s+late|currently|at\s+the\s+moment|at\s+present)\b", re.IGNORECASE
)
# Relative pronouns ("that" too, after a noun phrase: ``relative_start``).
RELATIVES = frozenset("who whom whose which".split())


def relative_start(low: Sequence[str], start: int = 0) -> int:
    """Where the first relative clause after word ``start`` opens in a clause's lower-cased words, or
    their count: a relative pronoun, or "that" within three words of a determiner ("a book series that I
    love"; "so good that I cried" opens none), or a subject pronoun right after a noun within three
    words of a determiner, the relative clause without its pronoun ("the quickest car I've ever sat
    in")."""
    for i in range(start + 1, len(low)):
        after_noun = low[i] == "that" or (
            low[i] in _CLAUSE_SUBJECTS and low[i - 1] not in NOT_NAME and not verb_form(low[i - 1])
        )
        if low[i] in RELATIVES or (after_noun and any(w in DETERMINERS for w in low[max(start, i - 3) : i])):
            return i
    return len(low)


# Pronouns that open a clause as its subject, with the verbs they take ("I've", "we're").
_CLAUSE_SUBJECTS = frozenset(
    "i i've i'm i'd we we've we're you you've he he's she she's they they've they're".split()
)


def names_in(text: str) -> set[str]:
    """The lower-cased capitalised words of a clause after its first word (the names it sets)."""
    words = WORD.findall(text)[1:]
    return {w.lower().removesuffix("'s") for w in words if w[0].isupper() and w.lower() not in NOT_NAME}


def a_name(word: str) -> bool:
    """Whether a word can be a name: capitalised, and no word of the grammar's closed classes
    (``closed_word``) or of the calendar."""
    low = word.lower().removesuffix("'s")
    return bool(NAME.fullmatch(word)) and not closed_word(low) and not CALENDAR.fullmatch(low)


def closed_word(word: str) -> bool:
    """Whether a lower-case word is a function word, an interjection, a greeting or a word of address
    ("dear"), or the speaker: never a name, nor a role."""
    return word in NOT_SPOKEN_TO


def calendar_word(word: str) -> bool:
    """A day, month, season or part of a day ("wednesdays", "may", "mornings")."""
    return CALENDAR.fullmatch(word.lower().removesuffix("s")) is not None


__all__ = [
    "ADVERBS",
    "AND",
    "APOS",
    "BARE_NOT",
    "BYGONE",
    "CALENDAR",
    "DETERMINERS",
    "DISCOURSE",
    "FIRST_PLURAL",
    "FIRST_SINGULAR",
    "FOCUS",
    "GREETINGS",
    "HONORIFICS",
    "INTERJECTIONS",
    "NAME",
    "NEGATION",
    "NOT_NAME",
    "NOT_NEGATING",
    "NOT_SPOKEN_TO",
    "OBJECT_START",
    "PAST_FORMS",
    "PRONOUN_SUBJECTS",
    "REGULAR_PAST",
    "RELATIVES",
    "SECOND",
    "SET_RIGHT",
    "STANDALONE_KIN",
    "TENSE_WORD",
    "THIRD",
    "TITLE",
    "TOPICLESS",
    "UNTIL",
    "VERB_TENSE",
    "WORD",
    "a_name",
    "calendar_word",
    "closed_word",
    "contrasted",
    "drops_subject",
    "gerund",
    "names_in",
    "past_form",
    "possessive",
    "present_s",
    "relative_start",
    "set_right_in",
    "set_right_words",
    "verb_form",
    "with_apostrophes",
]
