"""What one clause says, as far as an update needs it: whose attribute it is about (the holder), whether
it asserts anything (not a question, a hypothetical or plan, a negated change), and its words in one
normal form (the holder as "the user", values masked). Pure functions, no I/O, no model.

The holder is read from structure, not from a list of attributes:
- a first-person clause ("I", "me", "my", "we", "our") is about the user, and so is a clause that names
  one of the user's people ("Tobias is my manager now", "my new boss is Tobias"): that is the user's
  manager changing, not something Tobias does;
- "my sister Ana ..." / "Ana ..." / "Ana's ..." is about Ana; "my brother ..." (a person the user has,
  unnamed, doing something) is about "the user's brother";
- "he", "she", "they" cannot be resolved from one statement: no holder, so no update;
- an arrangement for a day to come that names no one ("book club dinner at Dishoom on the 28th", "the
  offsite is Wednesday in Manchester") is the speaker's: a day on their own calendar.

The gates are grammar, the same for every attribute: a question asks, modal and intention markers make a
hypothetical or plan, a future tense is a plan, and a negated past event ("I didn't leave Acme") says a
change did not happen. A negated state ("I don't drink coffee anymore") is no gate: it ends the old value.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Container
from dataclasses import dataclass, replace
from datetime import datetime

from hermes_memory.extract.kin import kin_predicate
from hermes_memory.extract.temporal import find_temporal
from hermes_memory.extract.tense import SAME_PAST, clause_tense, strongly_past
from hermes_memory.updates.address import addressees, formula, vocative
from hermes_memory.updates.asserting import SUBJECT_PRONOUNS, next_time, told_then_asked
from hermes_memory.updates.asserting import why_not as _reason_not
from hermes_memory.updates.lexicon import (
    ADVERBS,
    AND,
    APOS,
    CALENDAR,
    CLITIC_HOSTS,
    DETERMINERS,
    DISCOURSE,
    FIRST_PLURAL,
    FIRST_SINGULAR,
    INTERJECTIONS,
    MIXED_CASE,
    NAME,
    NEGATION,
    NOT_NAME,
    NOT_NEGATING,
    OBJECT_START,
    PRONOUN_SUBJECTS,
    SECOND,
    STANDALONE_KIN,
    TENSE_WORD,
    THIRD,
    TITLE,
    TOPICLESS,
    UNTIL,
    VERB_TENSE,
    WORD,
    a_name,
    closed_word,
    contrasted,
    drops_subject,
    gerund,
    past_form,
    possessive,
    present_s,
    relative_start,
    set_right_in,
    set_right_words,
    verb_form,
    with_apostrophes,
)
from hermes_memory.updates.person import USER, as_the_user, first_person

# A leading adverbial phrase or clause, set off by a comma ("After twelve years at Fujitsu, ...", "Since
# March, ...") or ending where the speaker comes in as the main clause's subject ("Once the heatwave
# broke I've been ...", "When the lease ran out we sold ...").
_LEAD_IN = re.compile(
    r"^(?:after|since|before|when|once|following|now\s+that|ever\s+since|as\s+of)\b"
    # A clause of its own ("Since my sister moved out, I live alone") runs to its comma; a phrase ("Since
    # moving in June I rent ...", "After twelve years at Fujitsu, Kenji ...") to its comma or the speaker.
    r"(?:(?=\s+(?:i|we|he|she|they|my|our|his|her|their|the|a|an)\b)[^,]{0,60},\s*"
    r"|[^,]{3,60}?(?:,\s*|\s(?=(?:i|we|my|our|the\s+user(?:'s)?|(?-i:[A-Z][\w-]*'s))\b)))",
    re.IGNORECASE,
)
# What is said in passing of a name that opens a clause, set off by commas, before the clause goes on: a
# role ("Ana, my sister, lives in Porto", "Priya, the flatmate, is at ...") or a relative clause ("Dr.
# Mensah, who did my mum's bypass, works at ..."). Neither its words nor its verb are the clause's.
_INSERTION = re.compile(
    rf"^(?P<name>(?:{TITLE}\s+)?[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)?),\s+"
    r"(?:(?P<role>(?:my|our|the)\s+[^,]{2,40})|(?:who|which|whose)\s+[^,]{2,60}),\s+(?=\S)"
)
_TITLED = re.compile(TITLE)
_SPLIT = re.compile(
    r";|\s[-–—]\s|,\s*(?:but|and|so)\s+(?=(?i:i|i'm|i've|we|my|our|now|these)\b)"
    # "but" and "so" join clauses, never the last item of a list ("..., so the landlord's ... now")
    r"|,\s*(?:but|so)\s+(?=(?i:the|everything|everything's)\b)"
    r"|(?<!\b(?:Dr|Mr|Ms|St|Jr|Sr|vs)\.)(?<!\bMrs\.)(?<!\bProf\.)(?<=[.!?])\s+"
)


# A preposition of a state's end, just before a time ("until next year", "till Friday").
_UNTIL = re.compile(rf"\b(?:{'|'.join(sorted(UNTIL))})\s+$")


@dataclass(frozen=True, slots=True)
class Known:
    """The lower-cased names the memory knows: ``holders`` (people, pets, projects: they have attributes
    of their own) and ``things`` (every other entity: tools, places, brands, organisations)."""

    holders: frozenset[str] = frozenset()
    things: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class Statement:
    """One clause as an update reads it.

    ``holder``: whose attribute it is about ("user", a name, "user's brother"), None when unknown; an
    arrangement for a day to come that names no one is the speaker's ("dinner at Dishoom on the 28th").
    ``asserts``: False for a question, a hypothetical, a plan or a negated event.
    ``normal``: the clause with the holder written "the user" (comparable across first and third person).
    ``masked``: ``normal`` with its values (names, numbers) replaced by a neutral word.
    ``negated``: a negated state ("I don't ... anymore"), which can end the old value.
    ``mentions``: the known holders the clause names anywhere ("we switched Miso to a new vet": Miso).
    ``tense``: past, present or future, from its main verb (an event told in the past is no state that
    a later statement could end: "went to a poetry reading last Friday").
    ``topic``: the words of its subject when that is neither the user nor a known holder ("Checkups are
    with Beth now", "The book club fizzled out"): such a clause speaks about whichever holder has a
    statement with that word (topic continuity), and about no one else.
    ``addressed``: the lower-cased names the clause speaks to ("Hey John, ..."): no value of it.
    ``set_right``: the words a correction sets right after a bare "not" ("It's Ghent, not Gent" ->
    {"gent"}, "Rolo's 5 not 3" -> {"3"}: ``lexicon.set_right_in``): a value the clause says is wrong.
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
    topic: frozenset[str] = frozenset()
    addressed: frozenset[str] = frozenset()
    set_right: frozenset[str] = frozenset()
    #: It names a time still to come when it was said ("on the 11th of October", said in March): an
    #: arrangement. Read back from a fact, the caller says whether its day is still to come (``to_come``).
    arranged: bool = False
    #: What a clause takes as given ("my iphone 15" in "how do I stop my iphone 15 from ..."): weighed
    #: as news, never stored as a statement of its own.
    presupposed: bool = False

    @property
    def about_anyone(self) -> bool:
        """Whether it can speak of someone's attribute: it has a holder, names a known holder, has a
        topic or sets a value right."""
        return self.holder is not None or bool(self.mentions) or bool(self.topic) or bool(self.set_right)


def clauses(text: str) -> list[str]:
    """The clauses of a statement: split at sentence ends, semicolons, dashes, "but/and/so I" and the
    comma before a question that follows a telling (``told_then_asked``)."""
    return [p for p in parts(text) if len(p.split()) >= 2]


def parts(text: str) -> list[str]:
    """What ``clauses`` splits a statement into, one-word parts too ("Coffee?", "Quit")."""
    text = text.translate(APOS).strip()
    said = (p for part in _SPLIT.split(text) for p in _news_then_question(part))
    return [p for p in (p.strip(" ,.;:!") for p in said) if p]


def _news_then_question(part: str) -> list[str]:
    """``told_then_asked``, for a telling in the present: a past event before a question mostly sets
    the scene of what is asked ("paid the rent late and got fined, is that legal?"). Its tense is read
    in the third person, as ``main_tense`` reads a clause: "we've only got Streamora" has a present
    perfect, not a past form."""
    said = told_then_asked(part.strip(" ,.;:!"))
    return said if len(said) == 1 or main_tense(as_the_user(said[0]).lower()) != "past" else [part]


def read(
    text: str,
    *,
    speaker: str = USER,
    when: datetime | None = None,
    holders: Collection[str] | None = None,
    things: Collection[str] = (),
    subjects: Container[str] = (),
) -> Statement:
    """A clause as an update reads it (see ``Statement``); ``speaker``'s name also means the user.
    ``when``: the time it was said; a time it names after that ("next spring") makes it a plan.
    ``holders``: the lower-cased names of the people, pets and projects the memory knows; a capitalised
    word at the start is a holder only when it is one of them ("Ana moved", but "Jenkins got replaced"
    is about the user's world). Without it, any capitalised word that is no verb form counts.
    ``things``: the lower-cased names of the other entities the memory knows (tools, places, brands): a
    clause opening with one is about the user's world ("Jenkins got replaced"); one opening with an
    unknown capitalised word that is no verb form ("Art is such a joy") is about nobody in particular.
    ``subjects``: the lower-cased names the memory holds statements about, a holder when chat writes
    one in lower case ("femi moved up a group" after "Femi swims at the Ikoyi club")."""
    said = text.translate(APOS).strip()
    clean = with_apostrophes(said)  # "couldnt" is "couldn't"; the statement's text stays as said
    normal = first_person(clean, speaker)
    words = tuple(w.lower() for w in WORD.findall(normal))
    holder = _holder(normal, speaker, holders, things, subjects)
    spoken_to = addressees(normal)  # "Thanks, Melanie": Melanie is spoken to, not spoken about
    third = as_the_user(normal)
    # what is said in passing of its opening name neither asks, plans nor negates ("Kwame, my old flatmate,")
    plain = uninserted(normal)
    why_not = _reason_not(uninserted(clean), plain)
    tense = main_tense(uninserted(third).lower())
    # "next quarter"; told in the past, only "next" places it to come ("Noor started at a new school this
    # fall" is done, whichever fall it names; "I booked the new dentist for next week" is not)
    arranged = when is not None and (next_time(words) or (tense != "past" and to_come(clean, when)))
    if why_not is None and arranged:
        why_not = "plan"
    if why_not is None and spoken_to and formula(clean, spoken_to):
        why_not = "address"
    mentions = _mentions(words, holders, spoken_to)
    topic = _topic(normal, holder, holders, spoken_to)
    if holder is None and arranged and why_not == "plan" and not mentions and not spoken_to:
        # "book club dinner at Dishoom on the 28th": a day on the speaker's own calendar; its subject
        # still speaks of whoever has a statement with it ("The christening is on the 16th now")
        holder = USER
    return Statement(
        text=said,
        holder=holder,
        asserts=why_not is None,
        why_not=why_not,
        normal=third,
        masked=_masked(third),
        negated=NEGATION.search(NOT_NEGATING.sub("", plain.lower())) is not None,
        words=words,
        tense=tense,
        mentions=mentions,
        topic=topic,
        addressed=spoken_to,
        set_right=set_right_words(third),
        arranged=arranged,
    )


def uninserted(text: str) -> str:
    """A clause without what it says in passing of the name that opens it (``_INSERTION``): "Ana, my
    sister, lives in Porto" -> "Ana lives in Porto"."""
    m = _INSERTION.match(text)
    if m is None or not a_name(m.group("name").split()[-1]):
        return text  # "Correction, my shift starts at 7, not 6": no name, and no role (a verb in it)
    role = m.group("role")
    if role is not None and any(verb_form(w) or present_s(w) for w in role.lower().split()[1:]):
        return text
    return f"{m.group('name')} {text[m.end() :]}"


def to_come(text: str, when: datetime) -> bool:
    """Whether a clause names a time after ``when`` ("this autumn" said in March) that is not where what
    holds now ends ("Pete's covering until next year")."""
    return any(t.start > when and not _UNTIL.search(text, 0, t.span[0]) for t in find_temporal(text, when))


def arranged_at(statement: Statement, when: datetime) -> Statement:
    """A statement read back from a fact, ``arranged`` when the day it names is still to come at ``when``
    (the time a new statement is said)."""
    return replace(statement, arranged=to_come(statement.text, when))


def _mentions(
    words: tuple[str, ...], holders: Collection[str] | None, spoken_to: frozenset[str]
) -> frozenset[str]:
    """The known holders a clause names, by a word or by words in a row ("Mrs Ferreira", "Lumen's"),
    not those it speaks to. Every word and every run of two or three is asked of ``holders`` (which may
    record what it was asked)."""
    if holders is None:
        return frozenset()
    bare = [w.removesuffix("'s") for w in words]
    found = set()
    for size in (1, 2, 3):
        for i in range(len(words) - size + 1):
            name = " ".join((*words[i : i + size - 1], bare[i + size - 1]))
            if name not in spoken_to and name in holders:
                found.add(name)
    return frozenset(found)


def main_tense(low: str) -> str:
    """The tense of a clause's main verb (``low``: the clause in the third person, lower case): its first
    finite verb — an auxiliary or copula, a past form, or the plain verb right after "the user". A
    participle or relative clause further on ("a girlfriend named Hana", "a fixie the user built") does
    not make a present state past; a perfect ("has got", "has been seeing") is present. Without a verb
    it can place, the tense of the clause's markers."""
    tokens = TENSE_WORD.findall(_LEAD_IN.sub("", low, count=1))
    for k, token in enumerate(tokens):
        tense = VERB_TENSE.get(token)
        if tense is None and past_form(token):
            causative = tokens[k - 2 : k - 1] == ["get"]  # "get it fixed": a participle after "it"
            if k > 0 and tokens[k - 1] in OBJECT_START and (tokens[k - 1] != "it" or causative):
                continue  # "a used car", "the retired teacher": a participle; but "it made the user": a verb
            tense = "past"
        if tense is None and token.endswith("'s") and (k <= 1 or tokens[k - 1] == "user's"):
            tense = None if possessive(tokens, k) else "present"  # "my phone's a", not "Lucía's clinic hired"
        if tense is None and token.endswith(("'s", "'re")) and token.rsplit("'", 1)[0] in CLITIC_HOSTS:
            tense = "present"  # "on the train it's mostly Acquired now": the clitic is the verb
        if tense is None and k >= 2 and tokens[k - 2 : k] == ["the", "user"] and token not in ADVERBS | AND:
            tense = "present"  # "the user plays", "the user see": a verb in its plain or -s form
            if token in SAME_PAST and strongly_past(low):
                tense = "past"  # "the user set up a stall a while ago": that form is also the past
        if tense is not None:
            return tense
    return clause_tense(low, 0, 0)


def _topic(
    text: str, holder: str | None, holders: Collection[str] | None, spoken_to: frozenset[str] = frozenset()
) -> frozenset[str]:
    """The subject's words of a clause about neither the user nor a known holder (see ``Statement``);
    the names of whom it speaks to (``spoken_to``) are none of them."""
    if holder == USER or (holder is not None and (holders is None or holder.casefold() in holders)):
        return frozenset()
    if holder is not None and holder.startswith("user's "):
        return frozenset()
    tokens = [(m.group(0), m.start()) for m in WORD.finditer(text)]
    low = [t.lower() for t, _ in tokens]
    if set_right_in(text) is not None:
        # "Bangalore, not Bloodhound", "it's a Redmi Note 13, not the 12": a correction, whatever its
        # subject, speaks of the value it sets right.
        wrong = contrasted(low)
        if wrong:
            return wrong
    if any(t in FIRST_SINGULAR or t in FIRST_PLURAL or t in SECOND or t in THIRD for t in low):
        return frozenset()
    first = _subject_start(tokens)
    while first < len(low) and low[first] in spoken_to:
        first += 1  # "Hey Maria, haven't talked in ages": the subject comes after whom it greets
    if any(w in PRONOUN_SUBJECTS for w in low[: first + 1]):
        # "It's a real gift": the subject is a pronoun, what follows is said of it; but "It's the JCC,
        # not the YMCA" names what "it" is by the value it sets right: that value is the topic.
        return contrasted(low)
    if first >= len(tokens) or low[first] in TOPICLESS or low[first] in VERB_TENSE:
        return frozenset()
    # A two-word subject ("book club", "team chat", "head chef") when a verb or the end follows it.
    second = first + 1 < len(low) and (
        first + 2 >= len(low)
        or verb_form(low[first + 2])
    )
    words = low[first : first + (2 if second else 1)]
    return frozenset(w.removesuffix("'s") for w in words if len(w) > 2) - spoken_to


def topic_of(topic: frozenset[str], words: Collection[str]) -> bool:
    """Whether a statement with ``words`` speaks of ``topic`` (a shared stem of four letters or more:
    "checkups" / "checkup", "nursing" / "nurse")."""
    return any(
        t[:4] == w[:4] and (len(t) < 6 or len(w) < 6 or t[:5] == w[:5])
        for t in topic
        for w in words
        if (len(w) > 2 or w.isdigit()) and w not in TOPICLESS
    )


def subject_words(statement: Statement) -> frozenset[str]:
    """The words of a statement that can name what it is about (four letters or more, no "user", "it's")."""
    return frozenset(w for w in statement.words if len(w) > 3 and w not in TOPICLESS)


def _masked(text: str) -> str:
    """Values out: capitalised words after the first, names in mixed case and words with a digit ("7:42",
    "sub-22") become "something"."""
    tokens = text.split()
    out: list[str] = []
    for i, token in enumerate(tokens):
        core = token.strip(".,;:!?\"'()")
        capitalised = i > 0 and core[:1].isupper() and core.lower() != "the" and core.lower() not in DISCOURSE
        if core and (any(c.isdigit() for c in core) or capitalised or MIXED_CASE.fullmatch(core)):
            if out and out[-1] == "something":
                continue
            out.append("something")
        else:
            out.append(token)
    return " ".join(out)


def _holder(
    text: str,
    speaker: str,
    holders: Collection[str] | None = None,
    things: Collection[str] = (),
    subjects: Container[str] = (),
) -> str | None:
    """Whose attribute a clause is about, in this order: "my <person> ..." at its start is that person;
    a clause with the user in it ("I", "me", "my", "we") is the user's; a name at its start is that
    name's; a pronoun alone is nobody known; a clause with no subject ("Sold the Civic") is the
    speaker's, as chat drops "I"."""
    text = uninserted(_LEAD_IN.sub("", text, count=1))  # "After twelve years at Fujitsu, Kenji joined LINE"
    tokens = [(m.group(0), m.start()) for m in WORD.finditer(text)]
    if not tokens:
        return None
    first = _subject_start(tokens)
    if first + 1 < len(tokens) and _TITLED.fullmatch(tokens[first][0]) and tokens[first + 1][0][:1].isupper():
        first += 1  # "Dr. Baker's receptionist is Carol": the name after the title
    if first < len(tokens):
        low = tokens[first][0].lower()
        if low in ("my", "our") and first + 1 < len(tokens):
            owned = _possessed_holder(tokens, first)
            if owned != USER:
                return owned
        kin = STANDALONE_KIN.get(tokens[first][0].removesuffix("'s").capitalize())
        if kin is not None:  # "Dad finally upgraded ... and keeps calling me" (or "dad ..."): about Dad
            return f"user's {kin}"
    lows = [t.lower() for t, _ in tokens]
    if _fragment([t for t, _ in tokens], lows, first):
        return USER  # "Wearing the new Garmin everywhere", "Not doing Pilates anymore": chat drops "I'm"
    if _not_the_users(lows, first):
        return None  # "It brings me so much joy", "Giving kids a home is ...": the user is no subject
    if any(t in FIRST_SINGULAR or t in FIRST_PLURAL for t in lows):
        return USER
    if first >= len(tokens):
        return USER
    token = tokens[first][0]
    if token.lower() in THIRD or any(t.lower() in SECOND for t, _ in tokens):
        return None  # "she ...", "you're so strong": nobody this statement can be matched to
    if vocative(text, tokens, first):
        return None  # "Thanks, Melanie", "Wow, Caroline, that's great": the name is who is spoken to
    if not token[:1].isupper():
        known = token.casefold().removesuffix("'s")
        named = holders is not None and (known in holders or _told(tokens, first, subjects))
        if named and known not in NOT_NAME:
            return known  # chat writes names in lower case: "chloe's doing scouts" is about Chloe
        if drops_subject(known):
            return USER  # "swapped the iphone for a pixel", "haven't touched a drop": chat drops "I"
        return None  # "an ongoing adventure of learning": a remark about nobody in particular
    if not _is_name(tokens, first):
        return USER  # "Sold the Civic", "Got promoted": chat drops "I"
    name = token[:-2] if token.endswith("'s") else token
    if holders is None or name.casefold() in holders:
        return name
    # "Jenkins got replaced" names one of the user's things; any other name ("Kenji works at Honda",
    # "Art is such a joy") is its own holder, matched only by statements about the same name.
    return USER if name.casefold() in things else name


def _told(tokens: list[tuple[str, int]], first: int, subjects: Container[str]) -> bool:
    """Whether the lower-case word opening a clause's subject is a name the memory holds statements about
    (``subjects``): none after a determiner ("the dance studio"), none a closed word or verb form ("got")."""
    word = tokens[first][0].casefold().removesuffix("'s")
    if first and tokens[first - 1][0].lower() in DETERMINERS:
        return False
    return not (closed_word(word) or verb_form(word) or gerund(word)) and word in subjects


def _fragment(words: list[str], low: list[str], first: int) -> bool:
    """Whether a clause opens with a gerund or a participle ("Wearing ...", "Been using ...", "Not doing
    ...") or says something of the speaker's ended ("No more late shifts") and no finite verb follows it:
    a fragment whose dropped subject is the speaker, not a gerund subject ("Baking helps me unwind",
    "Giving kids a home is a gift"). ``low``: ``words`` lower-cased."""
    at = first + 1 if first < len(low) and low[first] == "not" else first
    ended = low[:2] in (["no", "more"], ["no", "longer"])  # "No more late shifts": the speaker's, ended
    at = 2 if ended else at
    if at >= len(low):
        return False
    word = low[at]
    gerund = word.endswith("ing") and len(word) > 4 and not word.endswith("thing")
    if not (gerund or ended or word in ("been", "gone")):
        return False
    rest = low[at + 1 :] if gerund or not ended else low[at:]
    after = rest[0] if gerund and rest and words[at + 1][:1].islower() else ""
    if present_s(after) and after not in OBJECT_START:
        return False  # a verb in the third person follows the gerund subject
    return not any(verb_form(w) or w in SUBJECT_PRONOUNS for w in rest)


def _not_the_users(low: list[str], first: int) -> bool:
    """Whether a clause's subject is a pronoun ("it", "that", "they") or a gerund ("Giving ...") and the
    user is in it only as an object, an owner or in a relative clause ("It's based on a book series that
    I love"): a remark about something else, not the user's attribute."""
    opener = next((i for i, t in enumerate(low) if t not in DISCOURSE), None)
    if opener is None or any(t in SUBJECT_PRONOUNS for t in low[: relative_start(low, opener)]):
        return False
    word = low[opener]
    return (
        (word in PRONOUN_SUBJECTS and not _for_the_speaker(low, opener))
        or word in THIRD
        or (opener == first and word.endswith("ing") and len(word) > 5)
    )


def _for_the_speaker(low: list[str], opener: int) -> bool:
    """Whether a clause opened by a pronoun is one of being ("it's", "it is", "that's") whose predicate
    is for the speaker ("It's green tea for me these days"): what holds for them, as "my drink is green
    tea" says, not a remark about something else ("It brings me joy")."""
    copular = low[opener].endswith("'s") or low[opener + 1 : opener + 2] == ["is"]
    end = relative_start(low, opener)
    return copular and any(low[i] == "for" and low[i + 1] in ("me", "us") for i in range(opener + 1, end - 1))


def _subject_start(tokens: list[tuple[str, int]]) -> int:
    """The index of the first token that can start a subject: interjections, discourse words and
    lead-in adverbials ("Sorry,", "So", "These days", "As of Friday") are skipped."""
    i = 0
    while i < len(tokens):
        word = tokens[i][0]
        low = word.lower()
        if low in NOT_NAME or low in DISCOURSE or CALENDAR.fullmatch(low):
            i += 1
            continue
        return i
    return i


def _is_name(tokens: list[tuple[str, int]], i: int) -> bool:
    """A capitalised word that names someone or something: not a verb form opening a subjectless
    clause ("Packed up ...", "Got promoted", "Swapped the ...", "Didn't renew ..."; "Don't ..." opens an
    imperative as often), not an interjection."""
    word = tokens[i][0]
    if not NAME.fullmatch(word):
        return False
    low = word.lower().removesuffix("'s")
    if low in NOT_NAME or low in INTERJECTIONS or CALENDAR.fullmatch(low):
        return False
    if not word.endswith("'s") and i + 1 < len(tokens) and tokens[i + 1][0].lower() in OBJECT_START:
        return False  # "Shut the account down", "Cut it all off": a verb with its object, no subject
    return not (low.endswith("ing") or drops_subject(low))


# The pronouns that stand for a person, never a thing (a closed class): "they" may be either.
_PERSONAL_PRONOUNS = frozenset("he he's she she's his her hers him himself herself".split())


# Words between "my" and a role that leave the role whose it is ("my little sister", "my new boss").
_BEFORE_ROLE = frozenset("new old little big older younger best".split())


def _possessed_holder(tokens: list[tuple[str, int]], i: int) -> str:
    """ "my sister Ana moved" -> Ana; "my brother got" -> "user's brother"; "my phone is", "my manager is
    Tobias" (naming) -> user."""
    j = i + 1
    while j < len(tokens) and tokens[j][0].lower() in _BEFORE_ROLE:
        j += 1
    if j >= len(tokens):
        return USER
    role = tokens[j][0].lower().removesuffix("'s")  # "my dad's favourite band": the dad's
    # A role the lexicon does not know is a person when the clause goes on about them as "he" or "she"
    # ("my editor just moved her newsletter to Beehiiv"): things are "it".
    rest = {t.lower() for t, _ in tokens[j + 1 :]}
    if kin_predicate(role) is None and not (rest & _PERSONAL_PRONOUNS and role.isalpha()):
        return USER
    after = [t for t, _ in tokens[j + 1 : j + 4]]
    if (
        tokens[j][0].endswith("'s")
        and after
        and (after[0].lower() in ("a", "an", "now") or NAME.fullmatch(after[0]))
    ):
        return USER  # "my roommate's a guy named Tomas", "my manager's Tobias now": "'s" is "is"
    if (
        not tokens[j][0].endswith("'s")
        and len(after) > 1
        and after[0].islower()
        and after[1].lower() in ("is", "was", "are", "were", "'s")
    ):
        return USER  # "my family doctor is ...": the role word is a modifier of the user's thing
    if after and NAME.fullmatch(after[0]) and after[0].lower() not in NOT_NAME:
        return after[0].removesuffix("'s")  # "my sister Ana ...", "my dog Biscuit ...", "my son Kai's test"
    if kin_predicate(role) == "has_pet":
        return f"user's {role}"  # "my dog eats ...": the user's (unnamed) pet
    if after and after[0].lower() in ("is", "was") and len(after) > 1 and NAME.fullmatch(after[1]):
        return USER  # "my manager is Tobias": the user's manager, named
    return f"user's {role}"


__all__ = [
    "USER",
    "Known",
    "Statement",
    "arranged_at",
    "clauses",
    "main_tense",
    "parts",
    "read",
    "subject_words",
    "to_come",
    "topic_of",
]
