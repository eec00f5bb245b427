"""English verb forms for facts written in the third person.

A first-person clause becomes a third-person one ("I work at Acme and live in Zurich" -> "Caroline
works at Acme and lives in Zurich"): the verb after the subject takes its third-person form, and so does
every present-tense verb coordinated with it. Which later word is such a verb is read from a small
lexicon of base forms and the words around it, never guessed from its spelling alone: "tea and coffee"
keeps its nouns, "to cook and bake" its infinitives, "can swim and dance" the verbs under its modal.
"""

from __future__ import annotations

import functools
import re

from hermes_memory.extract.tense import NOT_PAST_ED, SAME_PAST, past_forms

# Words that keep their form after "she": modals, past forms (every irregular past the tense rules know,
# "lent" among them, and those whose past is their base: "I split up with Sam" is "the user split up"),
# and words that are no verb.
_UNCHANGED = frozenset(
    """can could will would should might may must shall used stole read cannot too to and or so not also
    the a an""".split()
) | frozenset(SAME_PAST) | frozenset(past_forms())
_SPECIAL = {
    "am": "is",
    "be": "is",
    "have": "has",
    "do": "does",
    "don't": "doesn't",
    "dont": "doesn't",
    "haven't": "hasn't",
    "go": "goes",
    "wanna": "wants to",  # the spoken contractions of a verb and "to"
    "gotta": "has got to",
    "'m": "is",
}
_PLURAL_SPECIAL = {
    "is": "are",
    "was": "were",
    "has": "have",
    "does": "do",
    "isn't": "aren't",
    "wasn't": "weren't",
    "hasn't": "haven't",
    "doesn't": "don't",
}

# Base forms that are (almost) only verbs: after "and" they always continue the subject's predicate.
_ONLY_VERBS = frozenset(
    """accept achieve add admire agree allow apply approve arrange arrive ask attend avoid bake become
    begin believe belong borrow bring build buy celebrate choose collect commute complete consider
    consist continue create decide deliver depend describe develop discover donate drive earn eat
    enjoy explain feed feel find finish follow forget forgive get give go grab grow happen hate have
    hear hire improve include invite join keep know learn leave lend like listen lose maintain make
    manage meet miss move need own pay perform pick prefer prepare protect provide put raise read
    receive recommend refer relax rely remember remove repair replace respond ride say see seem sell
    send serve sing sit sleep speak spend stay stop take teach tell tend think throw try understand
    use wake want wear win write""".split()
)
# Base forms that are often nouns too ("work", "dance", "travel"): a verb only with a sign of one.
_ALSO_NOUNS = frozenset(
    """bike book call camp care change check clean climb close coach cook cover cut dance design dream
    drink film fish garden guide help hike hope host jog lead live look love mentor model nurse open
    order paint plan plant play practice race record rent report research rest run sail shop sketch
    ski smoke start study surf swim talk text tour train travel visit volunteer walk watch wish work
    worry""".split()
)
# Also adjectives ("live music"), which a preposition never follows: "... and live in Ohio" is the verb.
_ADJECTIVES_TOO = frozenset({"live"})
# Verbs that are also adjectives taking a preposition ("close to", "open to", "clean of"): after a bare
# comma and before a preposition they describe ("I live in Lisbon, close to the river"), not act.
_ADJECTIVE_BEFORE_PREPOSITION = frozenset({"close", "open", "clean", "live"})
_ADJECTIVE_PREPOSITIONS = frozenset({"to", "from", "of", "with", "by"})
# Words that, right after the verb, show it is one: what a verb takes and a noun does not.
_VERB_FOLLOWERS = frozenset(
    """a an the my our your his her their its this that these those some every each all two three four
    five six seven eight nine ten me us him them it everyone everything people to there here home abroad
    daily weekly monthly often regularly together alone out up back away around outside online full-time
    part-time remotely hard late early nights weekends mornings evenings shifts overtime""".split()
)
_PREPOSITIONS = frozenset("at in on for with from by into about near over under through after before".split())
# Adverbs that may stand between "and" and the verb; a time adverb starts a predicate of its own
# ("I quit to travel and now work at Acme"), so it also lifts a modal's or infinitive's reach.
_ADVERBS = (
    "now|also|still|currently|usually|often|sometimes|always|never|rarely|seldom|mostly|mainly|really|just"
    "|then|even|already|finally|regularly|occasionally|actually|generally|typically|normally|frequently"
    "|constantly|hardly|nowadays|today"
)
#: Any adverb in -ly before a verb ("I genuinely love", "I slowly started"), read by its ending; not the
#: few verbs that end so ("apply", "rely", "reply", "supply", "multiply", "comply", "imply", "rally").
LY_ADVERB = r"(?!(?:app|re|rep|supp|multip|comp|imp|al|ral|tal|bul)ly\b)[a-z]{2,}ly"
_TIME_ADVERBS = frozenset({"now", "currently", "still", "nowadays", "today"})
_MODALS = frozenset(
    "can could will would should might may must shall can't cannot couldn't won't wouldn't shouldn't "
    "'d 'll didn't let".split()
)
# Verbs whose object is a clause of its own ("I think my kids love soccer and play ..."): what follows
# has another subject, so nothing after them is the speaker's verb.
_CLAUSE_TAKING = frozenset(
    """think thought know knew believe guess feel felt hope say said mean bet hear heard see saw notice
    noticed realize realized realise realised find found wish doubt suppose tell told remember forget
    forgot imagine understand agree worry promise figure figured learned learnt""".split()
)
# Verbs of liking take things: after "I love music and" a word that may be a noun is one.
_LIKING = frozenset("like love enjoy prefer hate adore miss".split())


@functools.cache
def _rx(name: str) -> re.Pattern[str]:
    sources = {
        # A singular subject: "I" (not "Anthony and I"), optionally contracted, or "You" opening the clause.
        "subject": (
            r"(?<!\band )(?<!\bAnd )\b(?:[Ii](?![.\w])(?P<c>'(?:m|ve|d|ll|s))?"
            r"|^[Yy]ou(?P<yc>'(?:re|ve|d|ll))?)"
            rf"(?P<adv>(?:\s+(?:{_ADVERBS}|not|no\s+longer|{LY_ADVERB}))*)"
            r"(?:\s+(?P<verb>[a-z]+n't|[a-z]+)(?![\w']))?"
        ),
        # Where the subject's reach ends: another subject or a subordinate clause.
        "reach_end": (
            r"\b(?:[Ii]|[Ww]e|[Hh]e|[Ss]he|[Tt]hey|who|which|whose|because|since|if|when|while|although"
            r"|though|unless|whereas)\b"
        ),
        "coordinated": (
            rf"(?:,\s*(?:(?P<c1>and|or|but|then)\s+)?|\s+(?P<c2>and|or|nor|but|then)\s+)"
            rf"(?P<adv>(?:(?:{_ADVERBS})\s+)*)(?P<word>[a-z]+)(?![\w'-])(?P<after>\s+[\w'-]+)?"
        ),
        "infinitive": r"\bto\s+(?:(?:" + _ADVERBS + r")\s+)*(?P<verb>[a-z]+)\b",
    }
    return re.compile(sources[name])


def third_person(verb: str) -> str:
    """The form a verb takes after "she" instead of "I": "love" -> "loves", "am" -> "is", "went" -> "went"."""
    low = verb.lower()
    if low in _SPECIAL:
        return _SPECIAL[low]
    if low in _UNCHANGED or low.endswith(("n't", "'t")) or not low.isalpha():
        return verb
    if low.endswith("ed") and not (low.endswith("eed") and low in NOT_PAST_ED):
        return verb  # a past form ("moved", "agreed"), not a verb ending so ("need", "succeed")
    if low.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if len(low) > 1 and low.endswith("y") and low[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def plural(verb: str) -> str:
    """The form a third-person verb takes after "they": "lives" -> "live", "is" -> "are", "went" -> "went"."""
    low = verb.lower()
    if low in _PLURAL_SPECIAL:
        return _PLURAL_SPECIAL[low]
    if not low.isalpha() or not low.endswith("s") or low.endswith("ss"):
        return verb
    if low.endswith("ies") and len(low) > 4:
        return verb[:-3] + "y"
    if low.endswith(("sses", "shes", "ches", "xes", "zes", "oes")):
        return verb[:-2]
    return verb[:-1]


_SINGULAR_SPECIAL = {"are": "is", "were": "was", "aren't": "isn't", "weren't": "wasn't"}


def singular(verb: str) -> str:
    """The form a verb of "we" takes after "she": "have" -> "has", "were" -> "was", "moved" -> "moved"."""
    return _SINGULAR_SPECIAL.get(verb.lower()) or third_person(verb)


def is_base_verb(word: str) -> bool:
    """Whether ``word`` is the base form of a common verb ("work", "live", "eat")."""
    low = word.lower()
    return low in _ONLY_VERBS or low in _ALSO_NOUNS


def agree_coordinated(clause: str) -> str:
    """``clause`` with every present-tense verb coordinated with a singular first-person (or opening
    "You") subject put in the third person: "I switched jobs and now work at Acme" -> "I switched jobs
    and now works at Acme". The subject's own verb is left for the pronoun rewrite."""
    spans: list[tuple[int, int]] = []
    for subject in _rx("subject").finditer(clause):
        head = (subject.group("verb") or "").lower()
        if head in _CLAUSE_TAKING:
            continue
        contraction = (subject.group("c") or subject.group("yc") or "").lower()
        bound = contraction in ("'d", "'ll") or head in _MODALS or head in ("didn't", "did")
        reach = _rx("reach_end").search(clause, subject.end())
        stop = reach.start() if reach else len(clause)
        spans.extend(_coordinated(clause, subject.end(), stop, bound, head))
    for start, end in sorted(spans, reverse=True):
        clause = clause[:start] + third_person(clause[start:end]) + clause[end:]
    return clause


def _coordinated(clause: str, start: int, stop: int, bound: bool, head: str) -> list[tuple[int, int]]:
    """Spans of the verbs coordinated with the subject's predicate in ``clause[start:stop]``."""
    spans: list[tuple[int, int]] = []
    pos = start
    while True:
        m = _rx("coordinated").search(clause, pos, stop)
        if m is None:
            return spans
        pos = m.start("word")
        word, adverbs = m.group("word"), m.group("adv").split()
        conj = (m.group("c1") or m.group("c2") or "").lower()
        after = (m.group("after") or "").strip().lower()
        fresh = bool(_TIME_ADVERBS.intersection(adverbs))  # "... and now work at": a new predicate
        under = (
            bound
            or (head == "don't" and conj in ("or", "nor"))
            or _infinitive_before(clause, start, m.start())
        )
        if not conj and word.lower() in _ADJECTIVE_BEFORE_PREPOSITION and after in _ADJECTIVE_PREPOSITIONS:
            continue  # ", close to the river": a description, though "close" is a verb too
        if not conj and word.lower() == "like":
            continue  # ", like you suggested", ", just like Tim said": a comparison after a bare comma
        # "I never smoke or drink": two verbs side by side, the second ending the clause.
        paired = m.start() == start and not after and head not in _LIKING and is_base_verb(head)
        if (under and not fresh) or not (paired or _reads_as_verb(word, bool(adverbs), after, head)):
            continue
        spans.append((m.start("word"), m.end("word")))


def _infinitive_before(clause: str, start: int, end: int) -> bool:
    """Whether a verb under "to" or a modal stands before ``end`` ("like to cook and bake"): the verbs
    coordinated with it share its base form."""
    for m in _rx("infinitive").finditer(clause, start, end):
        if is_base_verb(m.group("verb")):
            return True
    return any(w in _MODALS for w in clause[start:end].lower().split())


def _reads_as_verb(word: str, after_adverb: bool, after: str, head: str) -> bool:
    low = word.lower()
    if low in _ONLY_VERBS:
        return True
    if low not in _ALSO_NOUNS:
        return False
    if after_adverb or after in _VERB_FOLLOWERS or after[:1].isdigit():
        return True
    # "... and work in Berlin", but "I love music and dance in my free time": a second thing loved.
    return after in _PREPOSITIONS and (head not in _LIKING or low in _ADJECTIVES_TOO)


__all__ = ["LY_ADVERB", "agree_coordinated", "is_base_verb", "plural", "singular", "third_person"]
