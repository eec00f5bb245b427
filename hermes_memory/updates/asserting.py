"""Whether a clause asserts anything that holds now: not a question, a former state, someone else's
words, a possibility or plan, or a negated change. Read from grammatical markers (modal verbs, negation,
reporting verbs, tense), each a closed class of the language, not from phrasings."""

from __future__ import annotations

import itertools
import re

from hermes_memory.extract.kin import kin_predicate
from hermes_memory.extract.speech import is_question
from hermes_memory.extract.tense import clause_tense
from hermes_memory.updates.lexicon import DETERMINERS, PLACING, UNTIL, past_form

#: Pronouns the speaker is the subject of.
SUBJECT_PRONOUNS = frozenset("i i'm i've i'd i'll we we're we've we'd we'll".split())
# Grammatical markers of modality and intention (modal verbs and their periphrases, verbs of supposition:
# "imagine we sold the van"): a clause with one before its main verb tells a possibility, wish or plan,
# not what holds.
_MODAL = re.compile(
    r"\b(?:might|may|could|would|should|shall|must|maybe|perhaps|possibly|probably|if|whether|unless"
    r"|consider(?:s|ing|ed)?|think(?:s|ing)?\s+(?:about|of)|thought\s+(?:about|of)|plan(?:s|ning|ned)?\s+to"
    r"|plan(?:s|ning)?\s+on|want(?:s|ed)?\s+to|wanna|hop(?:e|es|ing)\s+to"
    r"|wish|intend(?:s|ing)?\s+to|tempted|debating|torn|wondering|someday|one\s+day|eventually|will|'ll"
    r"|won't|ought|imagin(?:e|ing)|suppos(?:e|ing)|assuming|hypothetically)\b"
)
# The prospective aspect: what is under way to happen ("Josh is going to Glastonbury", "we're gonna
# fly out on the 3rd", "about to start"): a plan, not a possibility; none of what holds now either.
_PROSPECTIVE = re.compile(
    r"\b(?:(?<!been\s)(?<!started\s)(?<!keep\s)going\s+to(?!\s+(?:the|a|an|my|our|his|her|their)\b)"
    r"|gonna|about\s+to)\b"
)
# A negated event: "didn't leave", "never switched", "haven't sold" (the change did not happen). A
# duration after it ("haven't had coffee in weeks", "since March") makes it a state that ended.
_NEGATED_EVENT = re.compile(
    r"\b(?:didn't|did\s+not|never|haven't|have\s+not|hasn't|has\s+not|hadn't|had\s+not|wasn't\s+able)\b"
)
_DURATION = re.compile(
    r"\b(?:since|(?:for|in)\s+(?:(?:about|around|over|nearly|almost|like|roughly)\s+)?(?:ages|years|months|weeks"
    r"|days|(?:a|an|one|two|three|four|five|six|several|a\s+few|\d+)\s+(?:years?|months?|weeks?|days?)))\b"
)
# The aspectual verbs of going on with a state (a closed class of the grammar) after a negated event:
# "didn't renew", "never went back", "didn't stay on" tell that a state ended, not that a change did not
# happen.
_NOT_GONE_ON = re.compile(
    r"\b(?:didn't|did\s+not|never)\s+"
    r"(?:renew(?:ed)?|continued?|extend(?:ed)?|re-?sign(?:ed)?|re-?enrol(?:led)?|re-?up(?:ped)?"
    r"|(?:stay(?:ed)?|carr(?:y|ied))\s+on|(?:go|went)\s+back|(?:keep|kept)\s+(?:it\s+)?up)\b"
)
# The approximative adverbs (a closed class of the grammar): before a past form, the event came close and
# did not happen ("almost moved to JetBrains", "I nearly cancelled Barry's"); not "almost always".
_APPROXIMATIVE = frozenset({"almost", "nearly"})
# A change said not to be under way: "we're not separating", "isn't leaving", "wasn't moved" (but after a
# comma "not" sets a value right: "it's bouldering, not climbing").
_NEGATED_CHANGE = re.compile(
    r"(?:(?<!,\s)\bnot|n't|\bnever)\s+(?:\w+ing|been\s+\w+ed|\w+ed\s+(?:to|from|off|out))\b"
    r"|\b(?:wasn't|weren't)\s+\w+ed\b"
)
# Someone else's words: "my mom keeps telling me ...", "a friend said ..." (not the user's own "I said").
_REPORTED = re.compile(
    r"\b(?:says?|said|told|tells|telling|thinks?|thought|suggest(?:s|ed|ing)?|recommend(?:s|ed|ing)?"
    r"|reckons?|insist(?:s|ed)?|claim(?:s|ed)?|swears?|swore|saying|advised?|urg(?:es|ed|ing)|trying\s+to"
    r"|keeps?\s+\w+ing)\b"
)
# What a determiner or a possessive opens (``_a_thing_keeps``), a word or four before the verb, and the
# words no such phrase holds (an object, an infinitive's "to").
_NOUN_PHRASE = 5
_NO_NOUN_PHRASE = frozenset("to me us him her them you it i we he she they".split())
# Words after which a phrase is no subject ("everyone at the office", "the head of the team").
_NO_SUBJECT_AFTER = PLACING | {"of"}
# A finite verb in a lower-cased clause: an auxiliary or copula (also "'s", "'re", "'m"), the word after
# a subject pronoun, an -s form after a one-word subject that no determiner opens ("mirela cuts"), or an
# -s form after a subject of two to four words a determiner opens, with an -ing form, a determiner or
# "to" after it ("my airtel line keeps dropping", "my dad's hyundai makes a noise"; not the plural noun of
# "my new shoes, are they ...").
_VERB_BEFORE = re.compile(
    r"\b(?:is|are|am|was|were|has|have|had|does|do|did|been)\b|\w'(?:s|re|m|ve)\b"
    r"|\b(?:i|we|you|they)\s+\w|\b(?:he|she|it)\s+\w+s\b"
    r"|^(?!(?:my|our|your|his|her|their|the|a|an|this|that)\b)\w+\s+\w+s\b"
    r"|^(?:my|our|your|his|her|their|the)\s+(?:[\w'-]+\s+){1,3}[a-z]+s\s+(?:[a-z]+ing|a|an|the|my|our|to)\b"
)
# A new subject after a comma, "and" or "but" (a pronoun, a noun its determiner opens, a name): it opens
# a clause of its own ("..., we never watched it anyway", "... and Miso didn't even notice").
_NEW_SUBJECT = re.compile(
    r"(?:,|\band\b|\bbut\b)\s+(?:(?i:i|we|he|she|they|you|it)\b"
    r"|(?i:the|my|our|his|her|their)\s+[a-z][\w'-]*|[A-Z][a-z]+\b"
    # a bare noun with a finite form of "be" or "have" after it, an adverb between ("piano just wasn't")
    r"|[a-z][\w'-]*(?=\s+(?:[a-z]+ly\s+|just\s+|never\s+)?(?:is|was|are|were|has|had)(?:n't)?\b))(?=\s+\w)"
    # after a comma, a negated auxiliary with its subject dropped ("..., wasn't using it anyway"): a remark
    # whose negation is its own (not after "but": "tried Arc but didn't switch" negates the change itself)
    r"|,\s+[a-z]+n't\b(?=\s+\w)"
)
# A remark of its own after a comma that ends the clause: a modal verb or the prospective with no subject
# before it, and the verb it governs ("..., not gonna lie", "..., might go back to it one day"). Its mood is
# its own: the clause before it still asserts. An adverb alone ("..., probably") qualifies the clause.
_ASIDE = re.compile(
    r",\s*(?:not\s+)?(?:might|could|would|should|will|won't|gonna|wanna|must)\s+[a-z][^,]*$"
)
# What makes a negation a state that holds now, not an event that did not happen: "anymore", "no longer";
# or, negating no past, a stretch of the present ("not coaching this season", "not drinking at the moment";
# not "didn't get the mortgage, so no house this year").
_NO_LONGER = re.compile(r"\b(?:anymore|any\s+more|longer)\b")
_NOW = re.compile(
    r"\b(?:this\s+(?:season|year|term|semester|month|week)|at\s+the\s+moment|right\s+now|for\s+now"
    r"|these\s+days|currently|nowadays)\b"
)
_NEGATED_PAST = re.compile(r"\b(?:didn't|did\s+not|wasn't|weren't|hadn't|never)\b")
# Words opening a subordinate clause: what follows its comma is the main clause, not another one.
_SUBORDINATE = frozenset(
    "after when whenever since because although though while before once as if until unless".split()
)
# The month, not the modal verb: capitalised, or after a preposition or a word of the calendar ("since may").
_MAY = re.compile(
    r"\bMay\b|\b(?:in|since|until|till|by|from|of|last|next|early|late|mid|before|after)\s+may\b"
)
# A subject that is a former one: "my old team", "our previous landlord", "my ex-boss".
_FORMER = re.compile(r"^\W*(?:\w+,?\s+){0,2}?(?:my|our)\s+(?:old|former|previous|ex|ex-\w+)\b")


def _said_after(low: str, at: int) -> bool:
    """Whether the words at ``at`` come after a comma that ends a whole clause of the speaker's own:
    "Jonas is in Leeds now, says the commute is fine", "Rui stopped consulting in October, he says he's
    done" and "Mirela cuts my hair these days, a neighbour suggested her" assert their first clause; the
    report is a remark on it. "Our landlord, the one upstairs, says ..." has no verb before its comma:
    the report is the clause."""
    comma = low.find(",", 0, at)
    return comma > 0 and _has_verb(low[:comma])


def _has_verb(head: str) -> bool:
    """Whether lower-cased words hold a finite verb of their own: ``_VERB_BEFORE``, or a verb in the past
    ("rui finally stopped the consulting in october")."""
    return _VERB_BEFORE.search(head) is not None or _done(head)


def _first_clause(text: str) -> str:
    """The clause a text opens with, lower-cased: up to a new subject after a comma, "and" or "but"
    when the words before it hold a verb of their own ("Cancelled Disney+ on Sunday, we never watched it
    anyway"); the whole text otherwise ("Sadly, I didn't leave", "After we talked, I didn't quit")."""
    return subject_parts(text)[0][1]


def _the_month(text: str) -> str:
    """``text`` with "May" the month written so that no modal verb is read in it (``_MAY``)."""
    return _MAY.sub(lambda m: m.group(0)[:-3] + "Mayday", text)


def _done(head: str) -> bool:
    """Whether a clause tells something as done: a past form, irregular or regular (the regular one is
    also the participle after "have": "closed down", "have ended", "'s pulled out"). The mood of a clause
    after it with a subject of its own is that clause's."""
    return any(past_form(w) for w in re.findall(r"[a-z']+", head))


def _near_miss(head: str) -> bool:
    """Whether a clause's first past form has an approximative adverb before it: the event it tells did
    not happen ("almost moved to jetbrains"; not "moved to Leeds, nearly killed me")."""
    words = re.findall(r"[a-z']+", head)
    first = next((i for i, w in enumerate(words) if past_form(w)), None)
    return first is not None and first > 0 and words[first - 1] in _APPROXIMATIVE


def subject_parts(text: str) -> list[tuple[str, str]]:
    """A text cut where a new subject opens a clause of its own (``_first_clause``), lower-cased: each
    part with the first word after its comma or conjunction ("" for the first part): "Sold the car, it
    never ran right" -> [("", "sold the car"), ("it", ", it never ran right")]."""
    cuts: list[int] = []
    for match in _NEW_SUBJECT.finditer(text):
        words = re.findall(r"[a-z']+", text[: match.start()].lower())
        if not words or words[0] in _SUBORDINATE:
            break
        if _has_verb(text[cuts[-1] if cuts else 0 : match.start()].lower()):
            cuts.append(match.start())
    parts = [text[a:b].lower() for a, b in itertools.pairwise([0, *cuts, len(text)])]
    return [("" if i == 0 else _opening_word(part), part) for i, part in enumerate(parts)]


def _opening_word(part: str) -> str:
    """The first word of a part after its comma or conjunction ("and my brother ..." -> "my")."""
    words = re.findall(r"[a-z']+", part)
    if words and words[0] in ("and", "but"):
        words = words[1:]
    return words[0] if words else ""


def _in_subordinate(before: list[str]) -> bool:
    """Whether the words before a reporting verb open a subordinate clause after a main clause with a
    verb of its own ("biscuit's on a renal diet since the vet"): the report is that clause's."""
    k = max((i for i, w in enumerate(before) if w in _SUBORDINATE and i > 0), default=0)
    return k > 0 and _has_verb(" ".join(before[:k]))


def _without_aside(low: str) -> str:
    """A lower-cased clause without the remarks with a mood of their own that close it (``_ASIDE``), when
    what comes before has a verb of its own: "i'm kind of over taylor swift, not gonna lie" -> "i'm kind
    of over taylor swift"; "moving to leeds, probably" and "kind of, not gonna lie" stay whole."""
    while (match := _ASIDE.search(low)) is not None and _VERB_BEFORE.search(low[: match.start()]):
        low = low[: match.start()]
    return low


# Words before "next" that make it no time to come: a determiner ("the next stop") or a preposition of a
# state's end ("covering until next year": what holds now holds till then).
_NOT_TO_COME = DETERMINERS | UNTIL


def next_time(words: tuple[str, ...]) -> bool:
    """Whether a clause names a time to come by "next" said as an adverbial ("next quarter we're migrating
    ...", "next up is ..."): no determiner or possessive before it, which makes it a noun's ("the next
    stop", "Lumen's next release"), and no "to" or "door" after it (a place: "the café next to the
    office"). Told in the past too, it places what the clause tells to come ("I booked the new dentist
    for next week")."""
    for i, word in enumerate(words):
        if word != "next":
            continue
        before = words[i - 1] if i else ""
        after = words[i + 1] if i + 1 < len(words) else ""
        if before not in _NOT_TO_COME and not before.endswith("'s") and after not in ("to", "door"):
            return True
    return False


# What opens a question (closed classes): a question word or a quantifier of one ("any tips?"), or an
# auxiliary; an auxiliary and a pronoun alone are a tag ("..., is it?"), which asks whether what precedes
# is so.
_QUESTION_WORDS = frozenset(
    "what what's whats which how how's where where's who who's whom why why's when when's "
    "any anything anyone anybody".split()
)
_AUXILIARIES = frozenset("is are was were am do does did can could would will should shall have has".split())
# What opens a phrase, not a clause of its own: "As a Wellingtonian, what should I pack?"
_NOT_A_CLAUSE = frozenset({"as", "like", *PLACING})
_ASKED_AFTER = re.compile(r",\s+(?=([A-Za-z][\w']*))")


def _a_thing_keeps(before: list[str]) -> bool:
    """Whether the words before "keep(s) ...ing" end in a subject a determiner or a possessive opens
    whose head is no person of the kin lexicon ("my airtel line", "the location service", "my sister's
    dog"), nor a name after one ("my flatmate Callum"): a thing keeps doing something; a person who
    "keeps asking" or "keeps nagging me" speaks. A phrase after a preposition ("everyone at the office")
    or with an object or "to" in it ("my family motivates me to keep ...") is no such subject."""
    for i in range(len(before) - 2, max(-1, len(before) - 1 - _NOUN_PHRASE), -1):
        if before[i] in DETERMINERS or before[i].endswith("'s"):
            if i > 0 and before[i - 1] in _NO_SUBJECT_AFTER:
                return False  # "everyone at the office keeps asking": the phrase is no subject
            if _NO_NOUN_PHRASE.intersection(before[i + 1 :]):
                return False  # "my family motivates me to keep striving": no subject of "keep"
            head = [kin_predicate(w.strip("()")) for w in before[-2:]]
            return all(role is None or role == "has_pet" for role in head)
    return False


def told_then_asked(sentence: str) -> list[str]:
    """A sentence that tells something and then asks, after a comma ("I'm on a SIM-only deal now, can I
    use it abroad?"): the telling and the question as two parts, so that the telling asserts;
    ``[sentence]`` otherwise. Not when the part before asks itself ("Is it worth it, or should I ...?"),
    is a phrase with no verb of its own ("As a vegan, which ...?") or is followed by a tag question
    ("..., is it?"). The mood of the telling is then its own: "Imagine we're down to one car, how ...?"
    supposes."""
    if not sentence.rstrip(" \t\"”')").endswith("?"):
        return [sentence]
    for m in _ASKED_AFTER.finditer(sentence):
        head, tail, opener = sentence[: m.start()], sentence[m.end() :], m.group(1).lower()
        asks = opener in _QUESTION_WORDS or (opener in _AUXILIARIES and len(tail.split()) > 2)
        if not asks:
            continue
        first = head.split()[0].lower()
        if is_question(head) or first in _QUESTION_WORDS | _AUXILIARIES | _NOT_A_CLAUSE:
            return [sentence]
        return [head, tail] if _has_verb(head.lower()) else [sentence]
    return [sentence]


def why_not(text: str, plain: str) -> str | None:
    """Why the clause asserts nothing that holds now (None when it does); ``plain``: the clause without
    what is said in passing of its opening name."""
    low = _the_month(plain).lower()
    if is_question(text):
        return "question"
    if _FORMER.match(low):
        return "former"  # "My old team at Zalando tracked ...": about what was, not what is
    for m in _REPORTED.finditer(low):
        before = low[: m.start()].split()  # "I use the shampoo the dermatologist recommended": the user's
        if any(w in SUBJECT_PRONOUNS for w in before):
            continue
        verb = m.group(0).split()[0]
        if not before and past_form(verb):
            continue  # "told the newsagent to stop the paper": the speaker's own words, "I" dropped
        if _in_subordinate(before):
            continue  # "Biscuit's on a renal diet since the vet advised it": the reason's report
        kept = m.group(0).split()[-1]  # what "keep(s)" is followed by, itself a verb of saying or not
        if verb.startswith("keep") and _a_thing_keeps(before) and not _REPORTED.fullmatch(kept):
            continue  # "my airtel line keeps dropping": what it keeps doing, no one's words
        if not _said_after(low, m.start()):
            return "reported"
        low = low[: low.find(",", 0, m.start())]  # the remark's mood is its own: "..., says he won't miss it"
        break
    low = _without_aside(low)
    # A clause told as done asserts it, whatever the mood of one after it with a subject of its own:
    # "Halloran's pulled out of the sponsorship, the jerseys will be blank".
    head = _first_clause(text)
    month = _the_month(head)
    if _done(head) and not _MODAL.search(month):
        low = month
    if _MODAL.search(low):
        return "hypothetical"
    if _PROSPECTIVE.search(low) or clause_tense(low, 0, len(low)) == "future":
        return "plan"
    ended = _NO_LONGER.search(low) is not None or (
        _NOW.search(low) is not None and _NEGATED_PAST.search(low) is None
    )
    # A negation negates its own clause: not the one a later clause with a subject of its own follows.
    event = _NEGATED_EVENT.search(head)
    if event and not _DURATION.search(head, event.end()) and not ended and not _NOT_GONE_ON.search(head):
        return "negated"
    if _NEGATED_CHANGE.search(head) and not ended:
        return "negated"
    if _near_miss(head):
        return "negated"
    return None


__all__ = ["SUBJECT_PRONOUNS", "next_time", "subject_parts", "told_then_asked", "why_not"]
