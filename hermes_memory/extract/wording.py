"""How a fact is worded: clauses of a sentence rewritten in the third person (relation templates are
``phrasing``, verb forms ``verbs``).

"I went there yesterday" said by Caroline becomes "Caroline went there on 7 May 2023": "I"/"me"/"my"
turn into the speaker, "you"/"your" into the addressee, "we" into "<speaker> and others" (then worded
about the speaker alone, a fact's one holder: ``speaker_alone``), every verb of the speaker's
predicate takes its third-person form ("Caroline moved to Boston and now works at ..."), and relative
dates become absolute. Once a person is named in the clause, their later "my" and
"me" read "their" and "them", as English refers back ("Caroline cooks for all their friends"). A
rewrite that would not read cleanly (an unresolved "he"/"they", too long, too short) is refused so the
caller can fall back to a template ("Caroline moved to Boston").
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Sequence
from dataclasses import replace

from hermes_memory.extract.lexicon import the_country
from hermes_memory.extract.mentions import Mention
from hermes_memory.extract.phrasing import plan_object, render
from hermes_memory.extract.temporal import as_phrase
from hermes_memory.extract.types import TemporalMention
from hermes_memory.extract.verbs import LY_ADVERB, agree_coordinated, singular, third_person

_I = re.IGNORECASE
# "I" as a subject, a contraction, adverbs and the verb after it (to be conjugated).
_I_SUBJECT = (
    r"(?P<i>I|i)(?![.\w])(?P<c>['’](?:m|ve|d|ll))?(?P<adv>(?:\s+(?:just|also|still|always"
    r"|never|no\s+longer|often|sometimes|even|already|now|too|" + LY_ADVERB + r"))*)"
    r"(?:\s+(?P<verb>[a-z]+n['’]t|[a-z]+)(?![\w'’]))?"
)
_WE_SUBJECT = r"|(?P<we>we)(?P<wc>['’](?:re|ve|d|ll))?"
# Pattern sources by name, compiled on first use by _rx() (no work at import time).
_SOURCES: dict[str, tuple[str, int]] = {
    # Clause breaks, matched against the lower-cased sentence.
    "clause_break": (
        r";\s*|\s[-–—]+\s+|,\s*but\s+|(?P<comma>,\s*)(?=(?:i|i'm|i've|i'd|i'll|we|we're|we've)\s"
        r"|(?:he|she|it|they)(?:'s|'re|\s+(?:is|was|are|were|has|had|does|did)\b))"
        r"|,?\s(?P<conj>and|but|so|because|cause|cuz|though|although|whereas|plus)\s+"
        r"(?=(?P<next>it|it's|they|they're|he|she|that|this|there|we|we're|you|you're|i|i'm|i've|i'd|i'll"
        r"|my|our)\b)",
        0,
    ),
    "relative_tail": (r",\s*(?:which|who|where)\b", 0),
    # Discourse lead-ins and vocatives: "Yeah, ...", "Thanks Mel! ...", "Mel, ...".
    "prefix": (
        r"^(?:(?:yeah|yes|yep|yup|well|oh|ah|wow|so|and|but|also|plus|actually|honestly|btw|by the way"
        r"|anyway|anyways|haha|lol|hey|hi|thanks|thank you|ok|okay|sure|totally|definitely|omg|aww*|cool"
        r"|great|nice|oh man|man|guess what|fun fact|on another note|on a different note|speaking of which"
        r"|then|now|[A-Z][a-z]+(?=[,!])"
        # A request to remember: "Please note (in your notes) that I ...", "Remember that my ..."
        r"|(?:please\s+)?(?:note|remember|keep\s+in\s+mind|don't\s+forget|make\s+a\s+note)"
        r"(?:\s+(?:in|to)\s+your\s+(?:notes|memory))?\s+that)\b[\s,!.:-]*)+",
        _I,
    ),
    # "Since we last chatted, I ...", "In the meantime, I ...", "On another note, my ...".
    "subordinate": (
        r"(?:(?:since|when|after|before|once|while|as soon as|now that|ever since)\b[^,]{0,80}"
        r"|(?:[\w'’]+\s+){0,3}[\w'’]+),\s*(?=(?:I|[Ww]e|[Mm]y)\b)",
        0,
    ),
    # A frame set before the subject with no comma (closed classes): a preposition and one or two words
    # that are no pronoun ("On weekends I ...", "At the moment I'm ..."; not "after we talked I", a clause
    # of its own, nor "For me I"), a determiner and a unit of time ("These days I ...", "Every morning my
    # ..."; not "every time I", a conjunction), or an adverb of time or frequency ("Nowadays I ...").
    "frame": (
        r"(?:(?:on|at|in|during|for|since|after|before|until|over|around)\s+"
        r"(?:(?!(?:i|we|you|he|she|they|me|us|him|her|them|it)\b)[\w'’]+\s+){1,2}?"
        r"|(?:this|these|that|those|last|next|every|each|most|some|all)\s+(?:[\w'’]+\s+)?(?:day|week"
        r"|weekend|fortnight|month|year|morning|afternoon|evening|night|season|spring|summer|autumn|fall"
        r"|winter|moment|(?:mon|tues|wednes|thurs|fri|satur|sun)day)s?\s+"
        r"|(?:nowadays|lately|recently|currently|presently|usually|normally|generally|typically|mostly"
        r"|sometimes|often|occasionally|always|now|today|tonight)\s+)(?=(?:I|we|my|our)\b)",
        _I,
    ),
    # Chat drops "I": "Just got back", "Gonna start", "Dyed my hair" (but not "Excited to ..."). A word
    # a verb of its own follows is the subject, a name: "Ted is my brother", "Fred said hi", "Ned and I
    # went fishing", "Led Zeppelin is ..."; a regular past has a stem of two letters ("red" is none).
    "implied": (
        r"^(?:just |finally |recently |also )?(?:got|went|gonna|started|finished|bought|visited|adopted"
        r"|joined|took|spent|booked|ran|signed|moved|had|made|saw|met|tried|won|watched|played|wrote"
        r"|printed|baked|cooked|hiked|traveled|travelled|can't wait|cannot wait"
        r"|(?!(?:excited|tired|stressed|interested|thrilled|amazed|bored|scared|pleased|surprised|worried"
        r"|relieved|blessed|inspired|motivated|pumped|impressed|touched|hono(?:u)?red|overwhelmed|exhausted"
        r"|delighted|shocked|confused|obsessed|determined|dedicated|used|based|supposed|related|needed"
        r"|guessed)\b)[a-z]{2,}ed)\b"
        r"(?!['’]s\b|(?:\s+(?-i:[A-Z])[\w'’-]*)*\s+(?-i:and\s+(?:I|me)|is|was|are|were|has|have|had|will"
        r"|would|can|could|does|did|said|says)\b)",
        _I,
    ),
    # First and second person, with the verb after "I" so it can be conjugated.
    "first": (
        r"\b(?:" + _I_SUBJECT + _WE_SUBJECT + r"|(?P<you>you)(?P<yc>['’](?:re|ve|d|ll))?"
        r"(?:\s+(?P<yverb>are|were|have|do|don't|aren't|weren't|haven't)\b|\s+(?P<yword>[a-z]+)(?![\w'’]))?"
        r"|(?P<word>me|my|mine|myself|us|our|ours|ourselves|your|yours|yourself))\b(?![-'’]\w)",
        _I,
    ),
    # References to something said elsewhere, matched against lower-cased text.
    "unresolved": (
        r"\b(?:it's|its|they|they're|their|theirs|he|him|his|she|her|hers)\b"
        r"|\b(?:on|got|made|bought|have|had|found|get|need|want)\s+one\b"
        r"|\b(?:this|that|these|those)(?:\s*(?:[.,!?;:]|$)|\s+(?:is|are|was|were|'s|has|will|would|really)\b)",
        0,
    ),
    # "it"/"them" are fine as the object of a later verb ("I finished my script and printed it").
    "late_object_pronoun": (r"\b(?:it|them)\b", 0),
    "trailing_quantity": (r"\b(?:a few|some|one|a couple|a lot|more)\s*$", 0),
    # Small talk: "I agree", "I'm so glad", "I can't wait", "I won't give up"; not "I see a physio" (whom
    # one consults, a person as the object).
    "low_value": (
        r"^(?:i|we)(?:['’](?:m|ve|d|ll)|\s+(?:am|are|have|was|were|will|would|do|did|just|really|totally|so"
        r"|also|can|can't|cannot|don't|didn't|too|absolutely|completely|definitely|always|still|never|not"
        r"|gotta|must|should|could))*\s*(?:agree|know|see(?!\s+(?:an?|dr\.?)\s)|understand|think|guess|hope"
        r"|bet|feel|hear|mean"
        r"|appreciate|wish|wonder|believe|remember (?:that|this|it|how|what|when)|love (?:that|it|this|them"
        r"|you|those|these|how|what|when|hearing|seeing)|like (?:that|it|this|them|you|how|what)|can't wait"
        r"|glad|happy|sorry|thankful|grateful|proud|impressed|jealous|sure|amazed|touched|honou?red|so\b"
        r"|totally|not sure|get it|got it|try|tried|keep|kept|need|imagine|can imagine|relate|look forward"
        r"|can't either|couldn't agree|have to|gotta|let|want to (?:see|hear|know)|miss|admire|couldn't"
        r"|can't (?:imagine|believe)|won't (?:give up|quit|stop)|will not (?:give up|quit|stop)"
        r"|(?:am|'m) not (?:gonna|going to) (?:give up|quit))\b",
        _I,
    ),
    # "My old area was hit by a flood": a clause about the speaker's things.
    "possessed_subject": (
        r"(?:[Mm]y|[Oo]ur)(?:\s+[a-z][\w'-]*){1,3}\s+(?:is|was|are|were|has|had|got|gets|became|just"
        r"|finally|recently|also|will|held|made|took|won|lost|went|came|gave|ran|grew|fell|[a-z]+ed)\b",
        0,
    ),
    # The speaker as a subject alone ("first" would read an "I" after "you" as the verb of "you").
    "speaker_subject": (r"\b(?:" + _I_SUBJECT + _WE_SUBJECT + r")\b(?![-'’]\w)", _I),
    "speaker_start": (r"(?:I|i|[Ww]e)(?![\w.])|[A-Z][a-z]+ and I\b", 0),
}
_EARLY_WORDS = 6
_MAX_FACT_WORDS = 40
_WEAK_WORDS = frozenset(
    """the and but for with that this what when where which who how was were are have has had been being
    will would could should can just really very also too all some any more most much many lot lots
    about from into onto over than then there here them they their its his her our your you mine
    not never always still even only such so well yes yeah good great nice cool awesome amazing thing
    things stuff something anything everything way ways time times day days feel feels felt glad happy
    hear see know say said tell told help make made get got going gonna one ones really truly super pretty
    others definitely totally absolutely probably maybe surely certainly actually honestly literally
    basically blast""".split()
)


@functools.cache
def _rx(name: str) -> re.Pattern[str]:
    source, flags = _SOURCES[name]
    return re.compile(source, flags)


def split_clauses(sentence: str) -> list[tuple[str, int]]:
    """Independent clauses of a sentence as (text, start): split at ";", dashes and "and it/but I"."""
    clauses: list[tuple[str, int]] = []
    start = 0
    low = sentence.lower().replace("’", "'")
    if len(low) != len(sentence):  # a few characters change length when lower-cased ("İ")
        low = sentence.replace("’", "'")
    for match in _rx("clause_break").finditer(low):
        conj, nxt = match.group("conj"), match.group("next")
        if match.group("comma") is not None and len(sentence[start : match.start()].split()) <= 4:
            continue  # "Last week, I ...": a lead-in, not a clause of its own
        # "Anthony and I went": a short coordinated subject, not a new clause.
        if (
            conj
            and conj.lower() == "and"
            and nxt in ("i", "i'm", "i've", "i'd", "i'll", "my")
            and len(sentence[start : match.start()].rsplit(",", 1)[-1].split()) <= 3
        ):
            continue
        clauses.append((sentence[start : match.start()], start))
        start = match.end()
    clauses.append((sentence[start:], start))
    out = []
    for text, begin in clauses:
        tail = _rx("relative_tail").search(text)
        if tail:
            text = text[: tail.start()]
        if text.strip():
            out.append((text, begin))
    return out


def _strip_prefix(clause: str) -> int:
    match = _rx("prefix").match(clause)
    cut = match.end() if match else 0
    sub = _rx("subordinate").match(clause, cut)
    return sub.end() if sub else cut


def clause_subject(
    clause: str,
    speaker: str,
    mentions: list[Mention],
    offset: int,
    times: Sequence[TemporalMention] = (),
) -> str | None:
    """Who a first-person clause is about (speaker, or "my sister" -> "Caroline's sister"), else None."""
    cut = _strip_prefix(clause)
    for t in times:  # "Last Monday I got to teach ...": the time comes first
        if t.span[0] - offset <= cut + 5 and t.span[1] - offset > cut:
            cut = t.span[1] - offset
            cut += len(clause[cut:]) - len(clause[cut:].lstrip(" ,"))
    frame = _rx("frame").match(clause, cut)  # "These days I sing in a choir": the frame comes first
    cut = frame.end() if frame else cut
    body = clause[cut:]
    if _rx("speaker_start").match(body) or _rx("implied").match(body):
        return speaker
    if re.match(r"(?:[Mm]y|[Oo]ur)\s", body):
        for mention in mentions:
            if mention.owner == speaker and mention.start - offset in range(cut, cut + 40):
                # "My family, exercise, and ..." lists things; a subject is followed by its verb.
                after = clause[mention.end - offset :].lstrip()
                # "My son Kai's driving test is ...": about Kai, whose test it is ("my cousin's wedding",
                # a relative not named, is told as the speaker's)
                named = after[:2] in ("'s", "’s") and not mention.name.startswith(f"{speaker}'s ")
                return mention.name if after[:1].isalpha() or named else None
        # "My old area was hit by a flood": about the speaker's things, so about the speaker.
        if _rx("possessed_subject").match(body):
            return speaker
    return None


def rewrite_clause(
    clause: str,
    offset: int,
    times: list[TemporalMention],
    speaker: str,
    addressee: str | None,
    mentions: list[Mention],
) -> str | None:
    """The clause in the third person with absolute dates, or None when it would not read cleanly."""
    cut = _strip_prefix(clause)
    body = _absolute_dates(clause[cut:], times, offset + cut)
    body = body.replace("’", "'").strip()
    body = _with_subject(body)
    if addressee is None and re.search(r"\byou", body, re.IGNORECASE):
        return None
    if addressee:  # a trailing vocative: "..., Jon!"
        body = re.sub(rf",\s*{re.escape(addressee.split()[0])}\W*$", "", body)
    body = re.sub(r",\s*(?:right|huh|you know|lol|haha|though|too)\W*$", "", body, flags=re.IGNORECASE)
    body = agree_coordinated(body)
    # Two wordings: the plain one names the speaker at every "I"/"me"/"my" and is what the checks below
    # read (a "their" of ours is no unresolved reference); the one returned reads as English.
    others = _other_names(clause, offset, mentions, speaker, addressee)
    plain, text = (
        _finish(
            _rx("first").sub(_Persons(speaker, addressee or "", natural, others), body), times, offset, cut
        )
        for natural in (False, True)
    )
    words = plain.split()
    if len(words) < 3 or len(words) > _MAX_FACT_WORDS or _rx("unresolved").search(plain.lower()):
        return None
    for pronoun in _rx("late_object_pronoun").finditer(plain.lower()):
        preceding = plain[: pronoun.start()].split()
        # Only "... my script and printed it": the object of the first verb is the antecedent.
        if len(preceding) < max(_EARLY_WORDS, 2) or preceding[-2].lower() != "and":
            return None
    if _rx("trailing_quantity").search(plain.lower()):
        return None
    return text[:1].upper() + text[1:]


# After one of these a date reads as its label ("in May 2023"), elsewhere as a phrase ("on 7 May 2023").
_DATE_PREPOSITIONS = frozenset(
    """in on during over throughout since from until till by before after of around mid early late for to
    through within between at""".split()
)


def _absolute_dates(body: str, times: Sequence[TemporalMention], start: int) -> str:
    """``body`` (the text from message offset ``start``) with its relative dates made absolute
    ("yesterday" -> "on 7 May 2023")."""
    ordered = sorted(times, key=lambda m: m.span[0])
    # "the 14th of next month": a day, then after "of" the month it lies in, is one date (that month's).
    month_of = {
        id(a): b for a, b in itertools.pairwise(ordered)
        if a.granularity == "day" and b.granularity == "month"
        and body[a.span[1] - start : b.span[0] - start].strip().lower() == "of"
    }  # fmt: skip
    inside = {id(b) for b in month_of.values()}
    for t in reversed(ordered):
        s, e = t.span[0] - start, t.span[1] - start
        if id(t) in inside:  # said as part of the day before it
            continue
        month = month_of.get(id(t))
        if month is not None:
            t, e = _day_of(t, month), month.span[1] - start
        if s < 0 or e > len(body) or not (t.is_relative or t.text != t.label):
            continue
        head = body[:s].rstrip()
        if head.lower().endswith(" the") or head.lower() == "the":  # "(on) the 3rd of June": one phrase
            s = len(head) - 3
            head = body[:s].rstrip()
        before = head.rsplit(None, 1)[-1].lower() if head else ""
        body = body[:s] + (t.label if before in _DATE_PREPOSITIONS else as_phrase(t)) + body[e:]
    return body


def _day_of(day: TemporalMention, month: TemporalMention) -> TemporalMention:
    """The day of the month ``month`` names ("the 3rd" of "last month"); ``day`` when it has no such day."""
    try:
        when = month.start.replace(day=day.start.day)
    except ValueError:  # "the 31st" of a shorter month
        return day
    label = f"{when.day} {when:%B} {when.year}"
    return replace(day, start=when, end=day.end + (when - day.start), label=label, is_relative=True)


def _with_subject(body: str) -> str:
    """``body`` with the "I" chat drops put back ("Ditched the Kindle" -> "I ditched the Kindle")."""
    if not _rx("implied").match(body):
        return body
    return ("I'm " if body.lower().startswith("gonna") else "I ") + body[:1].lower() + body[1:]


def in_third_person(clause: str, speaker: str, times: Sequence[TemporalMention] = ()) -> str | None:
    """The clause with ``speaker`` for its first person and its verbs agreeing ("I've been vegan for
    years and still love it": "<speaker> has been vegan for years and still loves it") and the dates
    of ``times`` (found in the clause) absolute, as it is otherwise: no check that it reads on its own
    (``rewrite_clause`` does that). None when it speaks to someone ("you"): there is no one to name."""
    body = _absolute_dates(clause, times, 0).replace("’", "'").strip()
    if re.search(r"\byou", body, re.IGNORECASE):
        return None
    body = _with_subject(body)
    text = _finish(_rx("first").sub(_Persons(speaker, "", True, ()), agree_coordinated(body)), [], 0, 0)
    return text[:1].upper() + text[1:]


def first_person_as(text: str, name: str) -> str:
    """``text`` with each subject "I" as ``name`` and the verb right after it agreeing ("I am sending you
    the photos" -> "<name> is sending you the photos"), "we" as "<name> and others" ("we've" -> "<name>
    and others have"); every other word as it is, "you" too (``in_third_person`` words no such clause).
    A verb further on is left as it is: what ``agree_coordinated`` takes for one is not always one ("I'm
    keen to work with you and make ..." would read "... and makes ...")."""

    def subject(m: re.Match[str]) -> str:
        if m.group("we"):
            return _first_plural(m, name)
        if not m.group("c") and _agrees(m.group("verb") or ""):
            return f"{name}{m.group(0)[1:]}"  # "I reports to ...": a stored fact read in the first person
        return _first_singular(m, name)

    return _rx("speaker_subject").sub(subject, text.replace("’", "'"))


def _agrees(verb: str) -> bool:
    """Whether a verb is in the third person already ("reports", "has"; not "miss", "focus")."""
    low = verb.lower()
    return low in ("is", "has", "does") or (low.endswith("s") and not low.endswith(("ss", "us")))


def _other_names(
    clause: str, offset: int, mentions: list[Mention], speaker: str, addressee: str | None
) -> tuple[str, ...]:
    """The words naming people in the clause other than the speaker and the addressee ("Anna")."""
    own = {speaker.casefold(), (addressee or "").casefold()}
    names = {
        clause[m.start - offset : m.end - offset]
        for m in mentions
        if m.entity_type == "person" and m.name.casefold() not in own and 0 <= m.start - offset < len(clause)
    }
    return tuple(n for n in names if n[:1].isupper())


def _finish(text: str, times: list[TemporalMention], offset: int, cut: int) -> str:
    text = " ".join(text.split()).rstrip(" .!?,;:-")
    leading = [t for t in times if t.span[1] - offset <= cut]
    if leading:  # "Last week, I built a website": the time sat in the stripped lead-in
        text = f"{as_phrase(leading[-1])}, {text}"
    return text


class _Persons:
    """Replaces the first and second person of one clause, one match at a time (``re.sub``'s callback).

    ``natural``: once a person is named in the clause, their later "my"/"me" read "their"/"them" ("The
    user asked their sister to help them"), as English refers back. Before that, or when someone else
    (``others``: the names in the clause) is named in between, "my" stays the name: in "The user's boss
    approved the user's leave" or "The user told Anna about the user's trip" a "their" would point at
    the boss, or at Anna. Not ``natural``: always the name, as the checks of a rewrite read it.
    """

    def __init__(self, speaker: str, addressee: str, natural: bool, others: Sequence[str]) -> None:
        self.speaker, self.addressee, self.natural, self.others = speaker, addressee, natural, others
        self.named: dict[str, int] = {}  # who -> where in the clause they were last named

    def __call__(self, m: re.Match[str]) -> str:
        if m.group("i"):
            self.named["speaker"] = m.end()
            return _first_singular(m, self.speaker)
        if m.group("we"):
            self.named["group"] = m.end()
            return _first_plural(m, self.speaker)
        if m.group("you"):
            self.named["addressee"] = m.end()
            return _second(m, self.addressee)
        if the_country(m):
            return m.group(0)
        word = m.group("word").lower()
        who, after, before = _REFERS[word]
        if self._refers_back(who, m):
            return after
        if word in ("me", "us"):  # named as a person; "my boss" names only the boss
            self.named[who] = m.end()
        name = self.addressee if who == "addressee" else self.speaker
        if before is None:
            return name
        return before if word.endswith(("self", "selves")) else f"{name}{before}"

    def _refers_back(self, who: str, m: re.Match[str]) -> bool:
        # "our" after "I ...": the speaker's group, named by the speaker.
        since = self.named.get(who, self.named.get("speaker") if who == "group" else None)
        if not self.natural or since is None:
            return False
        between = m.string[since : m.start()]
        return not any(re.search(rf"\b{re.escape(name)}\b", between) for name in self.others)


# "my"/"me"/... -> (who it is, the word once they are named, the word before, or None for the name).
_REFERS: dict[str, tuple[str, str, str | None]] = {
    "me": ("speaker", "them", None),
    "my": ("speaker", "their", "'s"),
    "mine": ("speaker", "theirs", "'s"),
    "myself": ("speaker", "themself", "themself"),
    "us": ("group", "them", " and others"),
    "our": ("group", "their", "'s"),
    "ours": ("group", "theirs", "'s"),
    "ourselves": ("group", "themselves", "themselves"),
    "your": ("addressee", "their", "'s"),
    "yours": ("addressee", "theirs", "'s"),
    "yourself": ("addressee", "themself", "themself"),
}


def _first_singular(m: re.Match[str], speaker: str) -> str:
    """ "I"/"I'm"/"I really love" as the speaker, the verb after it in the third person."""
    contraction = (m.group("c") or "").lower()
    adv, verb = m.group("adv") or "", m.group("verb")
    if contraction:
        aux = {"'m": "is", "'ve": "has", "'ll": "will"}.get(contraction)
        if aux is None:  # 'd: "had" before a participle, else "would"
            aux = "had" if verb and (verb.endswith("ed") or verb in ("been", "gone", "got")) else "would"
        return f"{speaker} {aux}{adv}" + (f" {verb}" if verb else "")
    if m.string[: m.start()].rstrip().lower().endswith("and"):  # "Anthony and I went": plural verb
        return f"{speaker}{adv}" + (f" {verb}" if verb else "")
    return f"{speaker}{adv}" + (f" {third_person(verb)}" if verb else "")


def _first_plural(m: re.Match[str], speaker: str) -> str:
    """ "we"/"we're" as the speaker and others ("we've" -> "<speaker> and others have")."""
    contraction = (m.group("wc") or "").lower()
    aux = {"'re": " are", "'ve": " have", "'d": " would", "'ll": " will"}.get(contraction, "")
    return f"{speaker} and others{aux}"


def _second(m: re.Match[str], addressee: str) -> str:
    """ "you"/"you're"/"You work" as the addressee, a verb after an opening "you" in the third person."""
    contraction = (m.group("yc") or "").lower()
    aux = {"'re": " is", "'ve": " has", "'d": " would", "'ll": " will"}.get(contraction, "")
    yverb, yword = m.group("yverb"), m.group("yword")
    if yverb:
        aux += " " + _YOU_VERBS[yverb.lower()]
    elif yword:  # a verb only when "you" opens the clause ("You work at ..."), else an object
        aux += " " + (third_person(yword) if m.start() == 0 and not contraction else yword)
    return f"{addressee}{aux}"


_YOU_VERBS = {
    "are": "is",
    "were": "was",
    "have": "has",
    "do": "does",
    "don't": "doesn't",
    "aren't": "isn't",
    "weren't": "wasn't",
    "haven't": "hasn't",
}


# A rewritten clause whose subject is a group with the speaker in it: "<speaker> and others <verb>"
# (from "we") or "<someone> and <speaker> <verb>" (from "my wife and I"); at most four words before
# "and", none of them a clause break.
_GROUP_WORDS = r"(?:both|all|together|also|still|now|often|always|never|just|really|finally)"
# A reciprocal pronoun (a closed class) as the verb's own object, after at most one word (a particle or
# preposition: "see each other", "talk to one another"); one later in the clause leaves its verb the
# group's members' ("have regular meetings ... to support each other").
_RECIPROCAL = re.compile(r"^\s+(?:[a-z]+\s+)?(?:each\s+other|one\s+another)\b", re.IGNORECASE)


def speaker_alone(text: str, speaker: str) -> str | None:
    """A clause told of a group that includes the speaker, worded about the speaker: "The user and
    others have two kids" -> "The user has two kids", "Anna and the user moved to Berlin" -> "The user
    moved to Berlin with Anna". None when the clause's subject is no such group.

    What a group holds or did holds for each of its members, and a fact's subject must be one holder:
    the speaker, the person the user's memory is about. What two do to each other is said with the
    speaker first ("The user and their sister call each other every Sunday"); what "we" do among
    ourselves names no one to say it of (``among_group``).
    """
    group = _group(text, speaker)
    if group is None:
        return None
    adverbs = " ".join(w for w in group.group("adv").split() if w not in ("both", "all", "together"))
    verb = group.group("verb")
    other = group.group("other")
    if other:
        if other.lower().startswith(f"{speaker.lower()}'s "):
            other = "their " + other[len(speaker) + 3 :]  # "with their sister", after the speaker as subject
        elif other.lower().startswith(speaker.lower()):
            other = speaker + other[len(speaker) :]
        elif other.split()[0].lower() in ("the", "a", "an"):
            other = other[:1].lower() + other[1:]
    if _RECIPROCAL.match(group.group("tail")):
        if not other:
            return None
        return f"{speaker} and {other}{group.group('adv')} {verb}{group.group('tail')}"
    # Later verbs of the same predicate agree too ("... moved to Porto and love it" -> "loves").
    tail = agree_coordinated(f"I {verb}{group.group('tail')}")[len(f"I {verb}") :]
    out = f"{speaker} {adverbs + ' ' if adverbs else ''}{singular(verb)}{tail}"
    if other:
        if verb.endswith("n't") or "never" in adverbs.split():  # "doesn't eat meat with Tom" says else
            out = f"{speaker}, like {other}, {out[len(speaker) + 1 :]}"
        else:
            out = f"{out.rstrip(' .!?,;:')} with {other}"
    return out[:1].upper() + out[1:]


def among_group(text: str, speaker: str) -> bool:
    """Whether a clause tells what "we" do among ourselves ("The user and others finally see each other"):
    it names no one to say it of with the speaker, so it makes no fact of one holder."""
    group = _group(text, speaker)
    if group is None or group.group("other"):
        return False
    return _RECIPROCAL.match(group.group("tail")) is not None


def _group(text: str, speaker: str) -> re.Match[str] | None:
    """A clause whose subject is a group with the speaker in it: its other members, adverbs, verb and the
    rest (see ``speaker_alone``)."""
    name = re.escape(speaker)
    return re.match(
        rf"(?:(?i:{name})\s+and\s+others|(?P<other>(?:[\w'’-]+\s+){{0,3}}?[\w'’-]+)\s+and\s+(?i:{name}))"
        rf"(?P<adv>(?:\s+{_GROUP_WORDS})*)\s+(?P<verb>[a-z]+(?:n't)?)(?![\w'])(?P<tail>.*)",
        text,
        re.DOTALL,
    )


def has_unresolved_reference(text: str) -> bool:
    """Whether a phrase leans on something said elsewhere ("it", "them", "he", "that")."""
    low = text.lower()
    return _rx("unresolved").search(low) is not None or _rx("late_object_pronoun").search(low) is not None


def is_small_talk(clause: str) -> bool:
    """Whether a first-person clause is small talk ("I agree", "I'm so glad", "I can't wait")."""
    body = clause[_strip_prefix(clause) :].replace("’", "'").strip()
    return _rx("low_value").match(body) is not None


def is_low_value(clause: str) -> bool:
    """Whether a first-person clause is small talk ("I agree", "I'm so glad") or has too little content."""
    body = clause[_strip_prefix(clause) :].replace("’", "'").strip()
    if _rx("low_value").match(body):
        return True
    content = [w for w in re.findall(r"[a-z]{3,}", body.lower()) if w not in _WEAK_WORDS]
    return len(content) < 2


# ``render``, ``plan_object`` (``phrasing``) and ``third_person`` (``verbs``) are named here too, for the
# callers that read every wording helper from this module.
__all__ = [
    "among_group",
    "clause_subject",
    "first_person_as",
    "has_unresolved_reference",
    "in_third_person",
    "is_low_value",
    "plan_object",
    "render",
    "rewrite_clause",
    "speaker_alone",
    "split_clauses",
    "third_person",
]
