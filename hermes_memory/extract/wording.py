"""How a fact is worded: clauses of a sentence rewritten in the third person, and relation templates.

"I went there yesterday" said by Caroline becomes "Caroline went there on 7 May 2023": "I"/"me"/"my"
turn into the speaker, "you"/"your" into the addressee, "we" into "<speaker> and others", the verb
after "I" takes its third-person form, and relative dates become absolute. A rewrite that would not
read cleanly (an unresolved "he"/"they", too long, too short) is refused so the caller can fall back
to a template ("Caroline moved to Boston").
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from hermes_memory.extract.entities import Mention
from hermes_memory.extract.temporal import as_phrase
from hermes_memory.extract.types import TemporalMention

_I = re.IGNORECASE
# Pattern sources by name, compiled on first use by _rx() (no work at import time).
_SOURCES: dict[str, tuple[str, int]] = {
    # Clause breaks, matched against the lower-cased sentence.
    "clause_break": (
        r";\s*|\s[-–—]+\s+|,\s*but\s+|(?P<comma>,\s*)(?=(?:i|i'm|i've|i'd|i'll|we|we're|we've)\s)"
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
    # Chat drops "I": "Just got back", "Gonna start", "Dyed my hair" (but not "Excited to ...").
    "implied": (
        r"^(?:just |finally |recently |also )?(?:got|went|gonna|started|finished|bought|visited|adopted"
        r"|joined|took|spent|booked|ran|signed|moved|had|made|saw|met|tried|won|watched|played|wrote"
        r"|printed|baked|cooked|hiked|traveled|travelled|can't wait|cannot wait"
        r"|(?!(?:excited|tired|stressed|interested|thrilled|amazed|bored|scared|pleased|surprised|worried"
        r"|relieved|blessed|inspired|motivated|pumped|impressed|touched|hono(?:u)?red|overwhelmed|exhausted"
        r"|delighted|shocked|confused|obsessed|determined|dedicated|used|based|supposed|related|needed"
        r"|guessed)\b)[a-z]+ed)\b",
        _I,
    ),
    # First and second person, with the verb after "I" so it can be conjugated.
    "first": (
        r"\b(?:(?P<i>I|i)(?![.\w])(?P<c>['’](?:m|ve|d|ll))?(?P<adv>(?:\s+(?:really|just|also|still|always"
        r"|never|no\s+longer|actually|totally|finally|recently|usually|often|sometimes|even|only|definitely"
        r"|truly|absolutely|already|now|mostly|currently|too|personally|honestly|officially|seriously"
        r"|literally))*)(?:\s+(?P<verb>[a-z]+n['’]t|[a-z]+)(?![\w'’]))?"
        r"|(?P<we>we)(?P<wc>['’](?:re|ve|d|ll))?|(?P<you>you)(?P<yc>['’](?:re|ve|d|ll))?"
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
    # Small talk: "I agree", "I'm so glad", "I can't wait", "I won't give up".
    "low_value": (
        r"^(?:i|we)(?:['’](?:m|ve|d|ll)|\s+(?:am|are|have|was|were|will|would|do|did|just|really|totally|so"
        r"|also|can|can't|cannot|don't|didn't|too|absolutely|completely|definitely|always|still|never|not"
        r"|gotta|must|should|could))*\s*(?:agree|know|see|understand|think|guess|hope|bet|feel|hear|mean"
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
    body = clause[cut:]
    if _rx("speaker_start").match(body) or _rx("implied").match(body):
        return speaker
    if re.match(r"(?:[Mm]y|[Oo]ur)\s", body):
        for mention in mentions:
            if mention.owner == speaker and mention.start - offset in range(cut, cut + 40):
                # "My family, exercise, and ..." lists things; a subject is followed by its verb.
                after = clause[mention.end - offset :].lstrip()
                return mention.name if after[:1].isalpha() else None
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
    body = clause[cut:]
    # Relative dates become absolute ones ("yesterday" -> "on 7 May 2023"); spans are message offsets.
    for t in sorted(times, key=lambda m: -m.span[0]):
        s, e = t.span[0] - offset - cut, t.span[1] - offset - cut
        if s < 0 or e > len(body) or not (t.is_relative or t.text != t.label):
            continue
        before = body[:s].rstrip().rsplit(None, 1)[-1].lower() if body[:s].strip() else ""
        replacement = (
            t.label
            if before
            in (
                "in",
                "on",
                "during",
                "since",
                "from",
                "until",
                "by",
                "before",
                "after",
                "of",
                "around",
                "mid",
                "early",
                "late",
            )
            else as_phrase(t)
        )
        body = body[:s] + replacement + body[e:]
    body = body.replace("’", "'").strip()
    if _rx("implied").match(body):
        body = ("I'm " if body.lower().startswith("gonna") else "I ") + body[:1].lower() + body[1:]
    if addressee is None and re.search(r"\byou", body, re.IGNORECASE):
        return None
    if addressee:  # a trailing vocative: "..., Jon!"
        body = re.sub(rf",\s*{re.escape(addressee.split()[0])}\W*$", "", body)
    body = re.sub(r",\s*(?:right|huh|you know|lol|haha|though|too)\W*$", "", body, flags=re.IGNORECASE)
    text = _rx("first").sub(lambda m: _pronoun(m, speaker, addressee or ""), body)
    text = " ".join(text.split()).rstrip(" .!?,;:-")
    leading = [t for t in times if t.span[1] - offset <= cut]
    if leading:  # "Last week, I built a website": the time sat in the stripped lead-in
        text = f"{as_phrase(leading[-1])}, {text}"
    words = text.split()
    if len(words) < 3 or len(words) > _MAX_FACT_WORDS or _rx("unresolved").search(text.lower()):
        return None
    for pronoun in _rx("late_object_pronoun").finditer(text.lower()):
        preceding = text[: pronoun.start()].split()
        # Only "... my script and printed it": the object of the first verb is the antecedent.
        if len(preceding) < max(_EARLY_WORDS, 2) or preceding[-2].lower() != "and":
            return None
    if _rx("trailing_quantity").search(text.lower()):
        return None
    return text[:1].upper() + text[1:]


def _pronoun(m: re.Match[str], speaker: str, addressee: str) -> str:
    if m.group("i"):
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
    if m.group("we"):
        contraction = (m.group("wc") or "").lower()
        aux = {"'re": " are", "'ve": " have", "'d": " would", "'ll": " will"}.get(contraction, "")
        return f"{speaker} and others{aux}"
    if m.group("you"):
        contraction = (m.group("yc") or "").lower()
        aux = {"'re": " is", "'ve": " has", "'d": " would", "'ll": " will"}.get(contraction, "")
        yverb, yword = m.group("yverb"), m.group("yword")
        if yverb:
            aux += (
                " "
                + {
                    "are": "is",
                    "were": "was",
                    "have": "has",
                    "do": "does",
                    "don't": "doesn't",
                    "aren't": "isn't",
                    "weren't": "wasn't",
                    "haven't": "hasn't",
                }[yverb.lower()]
            )
        elif yword:  # a verb only when "you" opens the clause ("You work at ..."), else an object
            aux += " " + (third_person(yword) if m.start() == 0 and not contraction else yword)
        return f"{addressee}{aux}"
    word = m.group("word").lower()
    return {
        "me": speaker,
        "my": f"{speaker}'s",
        "mine": f"{speaker}'s",
        "myself": "themself",
        "us": f"{speaker} and others",
        "our": f"{speaker}'s",
        "ours": f"{speaker}'s",
        "ourselves": "themselves",
        "your": f"{addressee}'s",
        "yours": f"{addressee}'s",
        "yourself": addressee,
    }[word]


def has_unresolved_reference(text: str) -> bool:
    """Whether a phrase leans on something said elsewhere ("it", "them", "he", "that")."""
    low = text.lower()
    return _rx("unresolved").search(low) is not None or _rx("late_object_pronoun").search(low) is not None


def is_low_value(clause: str) -> bool:
    """Whether a first-person clause is small talk ("I agree", "I'm so glad") or has too little content."""
    body = clause[_strip_prefix(clause) :].replace("’", "'").strip()
    if _rx("low_value").match(body):
        return True
    content = [w for w in re.findall(r"[a-z]{3,}", body.lower()) if w not in _WEAK_WORDS]
    return len(content) < 2


_TEMPLATES: dict[str, tuple[str, str]] = {
    "works_at": ("{s} works at {o}", "{s} does not work at {o}"),
    "worked_at": ("{s} worked at {o}", "{s} did not work at {o}"),
    "works_on": ("{s} is working on {o}", "{s} is not working on {o}"),
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
}
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


def render(subject: str, predicate: str, obj: str, negated: bool, kind: str) -> str:
    """A third-person sentence for a triple: (Caroline, moved_to, Boston) -> "Caroline moved to Boston"."""
    positive, negative = _TEMPLATES.get(predicate, ("{s} " + predicate.replace("_", " ") + " {o}",) * 2)
    article = (
        ""
        if kind in ("place", "person", "org") or obj[:1].isupper() or obj.endswith("s") or "'s " in obj
        else ("an" if obj[:1].lower() in "aeiou" else "a")
    )
    if predicate in ("plans", "wants") and not obj.lower().startswith("to "):
        obj = f"to {obj}"
    text = (negative if negated else positive).format(s=subject, o=obj, a=article)
    return " ".join(text.split())


def plan_object(predicate: str, obj: str) -> str:
    """Object of a "plans" fact made from a planned triple: ("moved_to", "Boston") -> "move to Boston"."""
    verb = _BASE_VERB.get(predicate)
    return f"{verb} {obj}" if verb else obj


_UNCHANGED = frozenset(
    """can could will would should might may must shall did was were had used went got made took saw came
    said told found felt thought bought brought met left ran began won lost wrote kept knew gave grew drew
    threw flew spent sent built taught caught heard held led paid sat slept stood understood woke wore
    chose drove ate fell forgot rode sang swam became hung broke spoke stole shot fought sold hid meant
    dealt read put set cut hit let quit cannot too to and or so not also the a an""".split()
)


def third_person(verb: str) -> str:
    """The form a verb takes after "she" instead of "I": "love" -> "loves", "am" -> "is", "went" -> "went"."""
    low = verb.lower()
    special = {
        "am": "is",
        "have": "has",
        "do": "does",
        "don't": "doesn't",
        "dont": "doesn't",
        "haven't": "hasn't",
        "go": "goes",
        "'m": "is",
    }
    if low in special:
        return special[low]
    if low in _UNCHANGED or low.endswith(("ed", "n't", "'t")) or not low.isalpha():
        return verb
    if low.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if len(low) > 1 and low.endswith("y") and low[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


__all__ = [
    "clause_subject",
    "has_unresolved_reference",
    "is_low_value",
    "plan_object",
    "render",
    "rewrite_clause",
    "split_clauses",
    "third_person",
]
