"""Subject-verb-object patterns: "I moved to Boston" -> (speaker, moved_to, Boston).

One alternation of verb phrases is searched per clause; for each hit the words before it must be
a subject (I, we, you, a name, "my sister") followed only by auxiliaries and adverbs, which also
give negation ("don't", "never", "no longer") and modality ("would", "used to", "will"). The object
is read word by word after the verb and stops at punctuation, conjunctions, prepositions and time
words. Questions and hypotheticals yield nothing.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from hermes_memory.extract.mentions import Mention

# (verb-phrase regex, predicate, object kind). Kinds: place org person concept activity thing tool role.
# Order matters where one phrase is a prefix of another: longer first.
_VERBS: tuple[tuple[str, str, str], ...] = (
    (r"(?:would|'d)\s+(?:really\s+)?(?:love|like)\s+to", "wants", "activity"),
    (
        r"want(?:s|ed)?\s+to|wanna|hop(?:e|es|ing)\s+to|dream(?:s|ing)?\s+(?:of|about)"
        r"|wish(?:es)?\s+to|aspir(?:e|ing)\s+to",
        "wants",
        "activity",
    ),
    (
        r"plan(?:s|ning)?\s+(?:to|on)|(?:am|'m|are|'re)\s+going\s+to|gonna|decided\s+to|intend(?:s)?\s+to"
        r"|(?:am|'m)\s+about\s+to|(?:am|'m)\s+thinking\s+(?:of|about)|can't\s+wait\s+to|looking\s+forward\s+to",
        "plans",
        "activity",
    ),
    (
        r"work(?:s|ing)?\s+(?:at|for)|(?:got|have|had|landed|started)\s+a\s+(?:new\s+)?job\s+(?:at|with)",
        "works_at",
        "org",
    ),
    (r"worked\s+(?:at|for)", "worked_at", "org"),
    (r"work(?:s|ing|ed)?\s+on", "works_on", "thing"),
    (r"live(?:s)?\s+in|living\s+in|(?:am|'m)\s+based\s+in", "lives_in", "place"),
    (r"lived\s+in", "lived_in", "place"),
    (r"mov(?:e|es|ed|ing)\s+(?:back\s+|here\s+|over\s+)?to|relocat(?:e|ed|ing)\s+to", "moved_to", "place"),
    (r"mov(?:e|ed|ing)\s+(?:here\s+|away\s+|over\s+)?from", "moved_from", "place"),
    (r"(?:am|'m)\s+(?:originally\s+)?from|come\s+from|grew\s+up\s+in", "is_from", "place"),
    (
        r"(?:am|'m)\s+(?:really\s+|so\s+|very\s+|super\s+)?(?:interested\s+in|keen\s+on|passionate\s+about)",
        "interested_in",
        "concept",
    ),
    (
        r"(?:am|'m)\s+(?:really\s+|so\s+|very\s+|super\s+)?(?:into|obsessed\s+with|fond\s+of"
        r"|a\s+(?:big\s+|huge\s+)?fan\s+of)",
        "likes",
        "concept",
    ),
    (r"like(?:s)?|love(?:s)?|enjoy(?:s)?|adore(?:s)?", "likes", "concept"),
    (r"hate(?:s)?|dislike(?:s)?|detest(?:s)?|can't\s+stand|cannot\s+stand", "dislikes", "concept"),
    (r"prefer(?:s)?", "prefers", "concept"),
    (r"own(?:s)?|(?:have|has|'ve\s+got)(?=\s+(?:a|an|two|three|four|several)\s)", "owns", "thing"),
    (r"bought|purchased", "bought", "thing"),
    (r"(?:am|'m|got|been)\s+married\s+to|married", "married_to", "person"),
    (r"(?:am|'m|got)\s+engaged\s+to|(?:am|'m)\s+dating", "partner_of", "person"),
    (r"(?:am|'m)\s+friends\s+with|became\s+friends\s+with|befriended", "friend_of", "person"),
    (r"report(?:s|ing)?\s+(?:directly\s+)?(?:in\s+)?to", "reports_to", "person"),
    (
        r"join(?:ed|ing)?|(?:am|'m)\s+(?:a\s+)?(?:member|part)\s+of|signed\s+up\s+(?:for|with)",
        "member_of",
        "org",
    ),
    (r"use(?:s)?|using", "uses", "tool"),
    (r"depend(?:s)?\s+on|rel(?:y|ies)\s+on", "depends_on", "tool"),
    (r"stud(?:y|ies|ying)\s+at|(?:am|'m)\s+(?:a\s+student|enrolled)\s+at", "studies_at", "org"),
    (r"studied\s+at|graduated\s+from", "studied_at", "org"),
    (r"stud(?:y|ies|ying|ied)|major(?:ing|ed)?\s+in", "studies", "concept"),
    (r"adopt(?:ed|ing)?", "adopted", "thing"),
    (r"attend(?:s|ed|ing)?|participated\s+in|took\s+part\s+in", "attended", "thing"),
    (
        r"visit(?:ed|ing)?|went\s+(?:back\s+)?to|been\s+to|travel(?:l)?ed\s+to|flew\s+to|drove\s+to"
        r"|took\s+a\s+trip\s+to|went\s+on\s+a\s+trip\s+to",
        "visited",
        "place",
    ),
    (r"start(?:ed)?|began|took\s+up", "started", "activity"),
    (r"learn(?:ed|t|ing)?", "learned", "activity"),
    (r"play(?:s|ing)?", "plays", "concept"),
    (r"work(?:s|ing)?\s+as|(?:am|'m)\s+(?:a|an)(?=\s)", "is_a", "role"),
)

_GAP = frozenset(
    """am 'm is are 're was were be been being have 've has had do does did will 'll would 'd shall can
    could should must might may not never no longer really just also still recently finally always
    usually often sometimes actually totally definitely even already currently now only absolutely truly
    kinda sorta so too both all basically officially originally mostly seriously honestly personally
    then again once ever used to soon happily proudly lately generally mainly especially literally
    gradually slowly eventually first newly secretly genuinely certainly probably maybe almost
    nearly""".split()
)
_PRESENT_BE = frozenset({"am", "'m", "is", "are", "'re"})
# Changes of state that, said in the present progressive, are still ahead ("I'm moving to", "joining").
_UNDER_WAY = re.compile(r"(?:moving|relocating|joining)\b", re.IGNORECASE)
_HYPOTHETICAL = frozenset({"would", "'d", "could", "might", "may", "should", "must", "shall"})
_HEDGES = frozenset({"probably", "maybe"})
_COPULA = frozenset({"am", "'m", "is", "are", "'re", "was", "were", "be", "been", "'s"})
_SUBJECT_PRONOUNS = {"i": "speaker", "we": "we", "you": "you"}
_DETERMINERS = frozenset(
    "a an the some my our your his her their its this that these those two three four five several".split()
)
_NAMING = frozenset("named called".split())
_DETERMINED = re.compile(r"\s+(?:a|an|the|my|our|this|that|some)\s", re.IGNORECASE)
_SPECIFIC = frozenset("this that these those your his her their its".split())
_STOP = frozenset(
    """and but or because so which who whom whose that when where while with for since if as than at in on
    from by about after before during over throughout into like until to yesterday today tonight
    tomorrow last next this every ago recently lately now again too either anymore though although
    already right there here soon more much lot all really very just also ever later earlier back
    together lol haha hopefully sometimes actually daily weekly anyway anyways even still is are was
    were be been i you we he she they it me him them us not named called or nonstop constantly
    regularly everyday usually always often anymore these those nowadays currently presently""".split()
)
_BAD_OBJECT_HEADS = frozenset(
    """it that this them him her you me us everything something anything nothing everyone someone
    anyone one what how there here thing things stuff lot bit time times way ones kind sort""".split()
)
_OWNABLE = frozenset(
    """car house home apartment flat condo bike bicycle motorcycle boat truck van guitar piano violin cello
    drum drums camera laptop garden farm business shop store studio cabin collection telescope kayak
    canoe ukulele keyboard bakery restaurant cafe""".split()
)
_PETS = frozenset(
    "dog dogs cat cats puppy puppies pup kitten kittens horse horses bunny rabbit hamster parrot bird "
    "turtle turtles snake pet pets".split()
)
_EVENT_NOUNS = frozenset(
    """group meeting conference concert festival party class classes workshop seminar session show game
    match parade fair event events rally protest retreat camp wedding funeral ceremony lecture talk
    convention expo competition contest tournament race marathon exhibition gala fundraiser service
    meetup church practice rehearsal audition interview""".split()
)
_BAD_ROLES = frozenset("bit little lot huge big fan part member kind sort fan".split())
_CONTRACTION = re.compile(r"(?i)^(.+?)(n't|'m|'ve|'re|'ll|'d|'s)$")


@dataclass(slots=True)
class Triple:
    """A relation found in a clause, before it becomes a fact/relation."""

    subject: str
    subject_mention: Mention | None
    subject_kind: str  # speaker | we | you | entity | implied
    predicate: str
    object_text: str
    object_mention: Mention | None
    object_kind: str
    negated: bool
    modality: str  # actual | planned | past
    confidence: float
    start: int  # absolute span of subject..object
    end: int
    specific: bool = False


@functools.cache
def _verb_pattern() -> re.Pattern[str]:
    parts = [f"(?P<v{i}>{regex})" for i, (regex, _, _) in enumerate(_VERBS)]
    # A phrase starts at a word boundary, or at the apostrophe of "I'm"/"I'd".
    return re.compile(r"(?:(?<![\w'])|(?='))(?:" + "|".join(parts) + r")(?![\w'])", re.IGNORECASE)


def _split_top(regex: str) -> list[str]:
    """Top-level alternatives of a regex source."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(regex):
        c = regex[i]
        if c == "\\":
            i += 2
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "|" and depth == 0:
            parts.append(regex[start:i])
            start = i + 1
        i += 1
    parts.append(regex[start:])
    return parts


def _leading_literals(regex: str) -> list[str]:
    """Literal strings one of which every match of ``regex`` starts with (lower case)."""
    out: list[str] = []
    for alt in _split_top(regex):
        if alt.startswith("(?:"):
            depth, close = 0, 0
            while close < len(alt):
                depth += (alt[close] == "(") - (alt[close] == ")")
                if depth == 0:
                    break
                close += 1
            out.extend(_leading_literals(alt[3:close]))
            continue
        literal = re.match(r"[a-z']*", alt)
        text = literal.group() if literal else ""
        if alt[len(text) : len(text) + 1] in ("?", "*"):
            text = text[:-1]
        out.append(text)
    return out


@functools.cache
def _verb_prefixes() -> tuple[str, ...]:
    prefixes = {p for regex, _, _ in _VERBS for p in _leading_literals(regex)}
    return tuple(sorted(prefixes))


_WORD_START = re.compile(r"(?<![\w'])\w|'")


def verb_matches(clause: str) -> list[re.Match[str]]:
    """Non-overlapping verb-phrase matches; the big pattern is only tried where a known first word starts."""
    low = clause.lower()
    prefixes = _verb_prefixes()
    pattern = _verb_pattern()
    found: list[re.Match[str]] = []
    end = 0
    for start in _WORD_START.finditer(low):
        pos = start.start()
        if pos < end or not low.startswith(prefixes, pos):
            continue
        match = pattern.match(clause, pos)
        if match is not None:
            found.append(match)
            end = match.end()
    return found


def verb_predicates(clause: str) -> frozenset[str]:
    """The relations the clause's verb phrases name ("the user reports to Tomasz" -> reports_to), read
    with the same patterns as ``find_triples`` but without a subject or object."""
    return frozenset(_VERBS[int(str(m.lastgroup)[1:])][1] for m in verb_matches(clause))


_WORDS = re.compile(r"[^\W_]+(?:['’][^\W_]+)*|[^\w\s]")


def _split_words(text: str) -> list[str]:
    out: list[str] = []
    for word in _WORDS.findall(text.replace("’", "'")):
        m = _CONTRACTION.match(word)
        if m and m.group(1).lower() not in ("let",):
            base, tail = m.group(1), m.group(2).lower()
            if tail == "n't":
                out.extend([{"ca": "can", "wo": "will", "sha": "shall"}.get(base.lower(), base), "not"])
            else:
                out.extend([base, tail])
        else:
            out.append(word)
    return out


def find_triples(
    clause: str,
    offset: int,
    mentions: list[Mention],
    speaker: str,
    addressee: str | None,
    stops: tuple[int, ...] = (),
) -> list[Triple]:
    """Relations stated in one clause (offset = its position in the message).

    ``stops`` are clause offsets (time expressions) where an object phrase must end.
    """
    triples: list[Triple] = []
    blocked_until = -1
    for match in verb_matches(clause):
        if match.start() < blocked_until:
            continue
        index = int(str(match.lastgroup)[1:])
        _, predicate, kind = _VERBS[index]
        subject = _subject(clause, match.start(), offset, mentions, speaker, addressee, predicate)
        if subject is None:
            continue
        name, mention, subject_kind, gap, subject_start = subject
        if any(w in _HYPOTHETICAL for w in gap) and predicate not in ("wants",):
            continue
        if predicate == "likes" and match.group().lower().startswith("like") and _COPULA.intersection(gap):
            continue  # "we're like a family": a comparison, not a preference
        obj = _object(clause, match.end(), offset, mentions, kind, stops)
        if obj is None:
            continue
        text, obj_mention, obj_end, specific = obj
        predicate, kind = _refine(predicate, kind, match.group().lower(), text, obj_mention, subject_kind)
        if predicate == "":
            continue
        negated = "not" in gap or "never" in gap or ("no" in gap and "longer" in gap)
        modality = "planned" if ("will" in gap or "'ll" in gap) else "past" if "used" in gap else "actual"
        if modality == "actual" and _PRESENT_BE.intersection(gap) and _UNDER_WAY.match(match.group()):
            modality = "planned"  # "I'm moving to Utrecht (next month)": a change still ahead, not done
        confidence = {"speaker": 0.8, "entity": 0.7, "we": 0.6, "you": 0.55, "implied": 0.6}[subject_kind]
        if any(w in _HEDGES for w in gap):
            confidence *= 0.7
        if (
            predicate == "plans"
            and "going" in match.group().lower()
            and (obj_mention or text[:1].isupper() or _DETERMINED.match(clause, match.end()))
        ):
            text = f"go to {text}"  # "I'm going to Paris" plans a trip, not an activity
        objects = [(predicate, text, obj_mention, obj_end)]
        objects.extend(
            (predicate, *o) for o in (_coordinated(clause, obj_end, offset, mentions) if obj_mention else [])
        )
        employer = _employer(clause, obj_end, offset, mentions) if predicate in ("is_a", "studies") else None
        if employer is not None:  # "I'm a nurse at Mercy Hospital", "I study physics at TU Delft"
            where = "works_at" if predicate == "is_a" else "studies_at"
            objects.append((where, employer.name, employer, employer.end - offset))
        for pred, text, obj_mention, obj_end in objects:
            triples.append(
                Triple(
                    subject=name,
                    subject_mention=mention,
                    subject_kind=subject_kind,
                    predicate=pred,
                    object_text=text,
                    object_mention=obj_mention,
                    object_kind="org" if pred in ("works_at", "studies_at") else kind,
                    negated=negated,
                    modality=modality,
                    confidence=round(confidence, 3),
                    start=subject_start + offset,
                    end=obj_end + offset,
                    specific=specific,
                )
            )
        blocked_until = objects[-1][3]
    return triples


def _subject(
    clause: str,
    verb_start: int,
    offset: int,
    mentions: list[Mention],
    speaker: str,
    addressee: str | None,
    predicate: str,
) -> tuple[str, Mention | None, str, list[str], int] | None:
    """(name, mention, kind, gap words, clause offset of subject) for the words before a verb."""
    prefix = clause[max(0, verb_start - 80) : verb_start]
    words = _split_words(prefix)
    gap: list[str] = []
    while words and words[-1].lower() in _GAP:
        gap.append(words.pop().lower())
    if words and words[-1].lower() in ("'d", "'m", "'ve", "'re", "'ll", "'s"):
        gap.append(words.pop().lower())
    if not words or words[-1] in (",", ".", "!", ";", ":", "-") or _is_discourse(words):
        # Chat often drops "I": "Just got back from Paris", "Went to the park yesterday".
        if (
            predicate in ("visited", "adopted", "started", "bought", "attended", "moved_to", "plans")
            and gap[-1:] != ["to"]
            and (not words or _is_discourse(words))
        ):
            return speaker, None, "implied", gap, verb_start
        return None
    last = words[-1]
    pronoun = _SUBJECT_PRONOUNS.get(last.lower())
    if pronoun is not None and len(words) >= 2 and not _opens_clause(words[-2]):
        return None  # "the things I love": the subject sits in a relative clause
    subject_start = max(0, verb_start - len(prefix) + prefix.rfind(last))
    if pronoun == "speaker" or pronoun == "we":
        return speaker, None, pronoun, gap, subject_start
    if pronoun == "you":
        return (addressee, None, "you", gap, subject_start) if addressee else None
    if len(words) >= 2 and words[-2].lower() == "and" and last == "I":
        return speaker, None, "speaker", gap, subject_start
    if last.lower() in ("i", "my", "me", "you", "your"):
        return None
    absolute_end = offset + max(0, verb_start - len(prefix) + prefix.rfind(last)) + len(last)
    for mention in mentions:
        # A name, or a relative of someone ("my sister"), right before the verb.
        if mention.end != absolute_end or not (last[:1].isupper() or mention.owner):
            continue
        is_person = mention.entity_type in ("person", "pet")
        # People and pets act; only things depend on other things.
        if is_person != (predicate == "depends_on"):
            return mention.name, mention, "entity", gap, mention.start - offset
    return None


_AND = re.compile(r"\s*(?:,\s*(?P<and>and\s+|or\s+)?|\s+(?P<also>and|or|&)\s+)")
# What may follow an item of a list joined by bare commas: the list going on, or its end.
_LIST_GOES_ON = re.compile(r"\s*(?:$|[,.;:!?)]|(?:and|or|&)\b)")


def _coordinated(
    clause: str,
    end: int,
    offset: int,
    mentions: list[Mention],
) -> list[tuple[str, Mention | None, int]]:
    """Further named objects joined by "and" / commas: "Python and Docker"."""
    out: list[tuple[str, Mention | None, int]] = []
    while len(out) < 5:
        link = _AND.match(clause, end)
        if link is None:
            break
        nxt = next((m for m in mentions if m.start - offset == link.end() and m.end > m.start), None)
        if nxt is None:
            break
        if not (link.group("and") or link.group("also") or _LIST_GOES_ON.match(clause, nxt.end - offset)):
            break  # "moved over to Neovim, VS Code felt sluggish": a name opening a clause of its own
        end = nxt.end - offset
        out.append((nxt.name, nxt, end))
    return out


_CLAUSE_OPENERS = frozenset(
    """and but so because cause since when while then now also plus yeah yes well oh actually honestly or
    though although after before once until think know guess feel hope said thought believe mean bet
    yesterday today tonight week weekend month year monday tuesday wednesday thursday friday saturday
    sunday ago night morning afternoon evening summer winter spring fall lately recently finally just
    anyway anyways btw lol haha wow and that""".split()
)


def _opens_clause(word: str) -> bool:
    return not word[:1].isalnum() or word.lower() in _CLAUSE_OPENERS or word[:1].isupper()


_AT = re.compile(r"\s+(?:at|for|with)\s+(?:the\s+)?", re.IGNORECASE)


def _employer(clause: str, end: int, offset: int, mentions: list[Mention]) -> Mention | None:
    link = _AT.match(clause, end)
    if link is None:
        return None
    at = link.end() + offset
    return next((m for m in mentions if m.start == at and m.entity_type in ("org", "other")), None)


_DISCOURSE = frozenset(
    "yeah yes yep well oh ah wow so and but also plus actually honestly btw anyway anyways haha lol hey "
    "hi thanks ok okay sure totally definitely omg aw aww cool great nice finally recently".split()
)


def _is_discourse(words: list[str]) -> bool:
    return all(w.lower() in _DISCOURSE or w in (",", "!", ".", "-") for w in words)


def _object(
    clause: str,
    pos: int,
    offset: int,
    mentions: list[Mention],
    kind: str,
    stops: tuple[int, ...] = (),
) -> tuple[str, Mention | None, int, bool] | None:
    """(object text, entity mention, clause end offset, specific) for the words after a verb."""
    starts = {m.start - offset: m for m in mentions if m.end > m.start}
    words: list[str] = []
    end = pos
    specific = False
    limit = 9 if kind == "activity" else 5
    for part in _OBJECT_TOKEN.finditer(clause[pos : pos + 160]):
        at = pos + part.start()
        token, low = part.group(), part.group().lower()
        if at in stops or at - pos > 150:
            break
        mention = starts.get(at)
        # A named object right after the verb, or after "a puppy named", "my sister": take the entity.
        if (
            mention is not None
            and all(w.lower() in _PETS or w.lower() in _NAMING for w in words)
            and (not words or mention.entity_type in ("pet", "person"))
            and (mention.owner is not None or _ends_phrase(clause, mention.end - offset))
        ):
            return mention.name, mention, mention.end - offset, specific and mention.owner is None
        if token[0] in '"“':
            if words:
                break
            return token.strip('"“”'), None, pos + part.end(), False
        if not words and low in _DETERMINERS:
            specific = specific or low in _SPECIFIC or (low == "the" and kind == "concept")
            continue
        if not token[0].isalnum():
            break
        if kind == "activity" and low in _ACTIVITY_END:
            break
        if low in _NAMING and words and all(w.lower() in _PETS for w in words):
            continue  # "a puppy named Max": the name follows
        # "sinking into magical worlds": a lone gerund keeps its prepositional phrase.
        gerund_phrase = (
            len(words) == 1
            and words[0].lower().endswith("ing")
            and low in _PREPOSITIONS
            and words[0].lower() not in HOBBIES
        )
        if (
            kind != "activity"
            and low in _STOP
            and not (low == "of" and words)
            and not gerund_phrase
            and not (not words and low == "to" and kind in ("concept", "thing"))
        ):
            break
        words.append(token)
        end = pos + part.end()
        if len(words) >= limit:
            break
    while words and words[-1].lower() in _PREPOSITIONS:  # "escaping to (that world)"
        words.pop()
        end = clause.rfind(words[-1], pos, end) + len(words[-1]) if words else end
    if not words or words[0].lower() in _BAD_OBJECT_HEADS:
        return None
    return " ".join(words), None, end, specific


_PREPOSITIONS = frozenset("into to in on at with about from for".split())
#: Pastimes named by a gerund: "hiking" stays a concept even in "hiking in the mountains".
HOBBIES = frozenset(
    """hiking camping swimming running dancing painting drawing reading writing cooking baking gardening
    fishing surfing skiing snowboarding skating climbing cycling biking knitting singing traveling
    travelling sketching journaling kayaking sailing volunteering gaming jogging walking exploring
    meditating crafting sewing woodworking photographing blogging boxing rowing""".split()
)
_OBJECT_TOKEN = re.compile(r"[\"“][^\"”]{1,80}[\"”]|[^\W_]+(?:['’-][^\W_]+)*|[^\w\s]")
_ACTIVITY_END = frozenset("and but because so which since if when while though".split())


def _ends_phrase(clause: str, end: int) -> bool:
    """Whether a noun phrase ends at ``end`` ("LGBTQ" in "LGBTQ support group" does not)."""
    nxt = re.match(r"\s*([^\W_]+|\S)?", clause[end : end + 40])
    word = nxt.group(1) if nxt else None
    return word is None or not word[0].isalnum() or word.lower() in _STOP


_PLACE_PREDICATES = frozenset({"visited", "moved_to", "moved_from", "lives_in", "is_from", "lived_in"})
# Where someone lives, lived or comes from: never a thing of these kinds.
_HOME_PREDICATES = _PLACE_PREDICATES - {"visited"}
_NO_HOME = frozenset({"tool", "tech", "concept", "project", "event"})
_NAMED_OBJECT_PREDICATES = frozenset(
    {"uses", "depends_on", "works_at", "studies_at", "married_to", "friend_of", "partner_of"}
)


def _refine(
    predicate: str,
    kind: str,
    verb: str,
    text: str,
    mention: Mention | None,
    subject_kind: str,
) -> tuple[str, str]:
    """Adjust the predicate to what the object turned out to be; "" drops the triple."""
    head = text.lower().split()[-1] if text else ""
    first = text.split()[0] if text else ""
    if predicate == "owns" and mention is not None and mention.entity_type == "pet":
        return "has_pet", "pet"  # "I have a cat named Pepper"
    if predicate == "owns" and mention is None:
        if head in _PETS:
            return "has_pet", "pet"
        if head not in _OWNABLE:
            return "", kind
    if predicate == "visited" and mention is None and head in _EVENT_NOUNS:
        return "attended", "thing"
    if predicate == "depends_on" and subject_kind != "entity":
        return "", kind  # people rely on people; only things depend on things
    named = mention is not None or first[:1].isupper()
    if predicate in _PLACE_PREDICATES and not named and len(text.split()) > 3:
        return "", kind
    if predicate in _HOME_PREDICATES and mention is not None and mention.entity_type in _NO_HOME:
        return "", kind  # "I moved over to Neovim": a switch of tools, no move of home
    if predicate in _NAMED_OBJECT_PREDICATES and not named:
        return "", kind
    if predicate == "is_a" and (head in _BAD_ROLES or text.lower().split()[0] in _BAD_ROLES):
        return "", kind
    if predicate == "likes" and subject_kind == "you" and verb.startswith(("like", "love")):
        return "", kind  # "you like X" is usually a question without the question mark
    return predicate, kind


#: Single-valued predicates: a new object supersedes the old one.
EXCLUSIVE_PREDICATES: frozenset[str] = frozenset({"lives_in", "works_at", "studies_at", "married_to"})
#: A state said in the past tense ("I used to live in Oslo") is its own predicate.
PAST_FORMS: dict[str, str] = {"lives_in": "lived_in", "works_at": "worked_at", "studies_at": "studied_at"}
#: Every predicate ``find_triples`` can give: its verb patterns' and what ``_refine`` turns them into.
PREDICATES: frozenset[str] = frozenset({p for _, p, _ in _VERBS} | {"has_pet", "attended"})

__all__ = [
    "EXCLUSIVE_PREDICATES",
    "HOBBIES",
    "PAST_FORMS",
    "PREDICATES",
    "Triple",
    "find_triples",
    "verb_matches",
    "verb_predicates",
]
