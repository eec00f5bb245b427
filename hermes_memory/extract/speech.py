"""What a message does as speech: tells something, or only asks, greets, acknowledges or echoes.

Used at ingestion to mark turns that are kept as episodes but are not knowledge (recall never returns
them as hits on their own), and by extraction to read nothing from the AI assistant's echoes of the
user ("Noted: I moved to Lisbon in May."). Also removes recalled-memory fences from text before it is
stored, so memory never feeds on its own output. Pure functions, no I/O.
"""

from __future__ import annotations

import functools
import re

from hermes_memory.extract.dedup import content_tokens
from hermes_memory.extract.prefilter import classify_noise, split_sentences
from hermes_memory.extract.verbs import is_base_verb

#: Chatter kinds: a turn that only asks, only greets, only acknowledges, or (the AI assistant) echoes.
CHATTER_KINDS: tuple[str, ...] = ("question", "greeting", "ack", "echo")

# A question: a question mark, or an inverted auxiliary ("Did you ...", "What do you ...") at the start.
_QUESTION = re.compile(
    r"\W*(?:(?:(?:what|where|when|who|why|how|which)\s+(?:\w+\s+)?)?(?:do|does|did|are|is|was|were|have|"
    r"has|can|could|would|will|should)\s+(?:you|i|we|he|she|they|it|there|your|my|ya)\b|(?:what|how)['’]s\b)"
)  # matched at the start of the lower-cased sentence
_GREETING_WORDS = frozenset(
    "hi hey hello heya hiya yo howdy sup morning evening afternoon night gm gn bye goodbye later cya "
    "welcome".split()
)
# How the AI assistant opens a sentence that repeats what the user said, or says it will keep it.
_ECHO_OPENER = re.compile(
    r"\W*(?:noted|got it|gotcha|understood|roger|saved|stored|remembered|recorded|acknowledged"
    r"|thanks for (?:letting me know|telling me|sharing)|thank you for (?:letting me know|telling me|sharing)"
    r"|i(?:'ll| will) (?:remember|keep in mind|note|make a note)"
    r"|i(?:'ve| have) (?:noted|saved|stored|recorded|remembered|added|updated)|so you|you said|you told me"
    r"|you mentioned|you(?:'ve| have) (?:told|said|mentioned)|as you said|if i understand)\b",
    re.IGNORECASE,
)
# A closing "..., you said." marks a repetition too.
_ECHO_TAIL = re.compile(
    r"\b(?:you (?:just )?(?:said|mentioned|told me|wrote)|as you (?:said|mentioned|put it))\W*$",
    re.IGNORECASE,
)
# Weak openers ("OK, ...", "Sure! ..."): the rest of the sentence decides.
_WEAK_OPENER = re.compile(
    r"\W*(?:ok(?:ay)?|alright|all right|sure|right|done|great|perfect|thanks|thank you)\b[\s,.!:;-]*",
    re.IGNORECASE,
)
_ASIDE = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")
# How much of an assistant sentence's content must come from the user's message to count as an echo.
_ECHO_SHARE = 0.7

# Recalled-memory fences (Hermes wraps prefetched memory in them) and the system note inside them.
_FENCE_TAG = re.compile(r"<\s*(/?)\s*memory-context\s*>", re.IGNORECASE)
_SYSTEM_NOTE = re.compile(
    r"^[ \t]*\[System note:[^\n]*recalled memory context[^\n]*\][ \t]*(?:\n|$)",
    re.IGNORECASE | re.MULTILINE,
)


# Where a clause may go on with a conjunct: ", and", " but", ", so", or a bare comma (a coordinator
# group is named so the caller can tell "so" from a comma).
_CONJUNCT = re.compile(r"\s*,\s*(?:(?P<c1>and|but|so)\s+)?|\s+(?P<c2>and|but|so)\s+", re.IGNORECASE)
# "<word> ago" is a time, whatever the word ("so long ago"), never a verb and its object.
_AGO = re.compile(r"\s+ago\b", re.IGNORECASE)
_POLITE = re.compile(r"(?:please|kindly|(?:could|can|would|will) you)\b", re.IGNORECASE)
# What may stand before an imperative's verb ("and always suggest ...", "and don't tell ...").
_IMPERATIVE_LEAD = re.compile(r"(?:(?:also|just|always|never|do not|don't|do)\s+)*", re.IGNORECASE)
_WORD = re.compile(r"[a-z]+(?![\w'])")
# Closed-class words: a conjunct opening with one has a subject or is a noun phrase, never a bare verb.
_CLOSED = frozenset(
    """a an the my our your his her their its this that these those some any every each all both no
    one two three four five six seven eight nine ten i me we us you he him she it they them there here
    who which what when where why how if then also as at in on for with from by to of not never""".split()
)
# The listener or the speaker as a word of a subjectless conjunct: it is said to the listener.
_ADDRESSED = re.compile(r"\b(?:me|us|you|your|yours)\b", re.IGNORECASE)
_ABOUT_LISTENER = re.compile(r"\W*(?:\w+\W+){0,2}?you(?:'re|'ve|'d|'ll)?\b", re.IGNORECASE)


def is_request(conjunct: str, coordinator: str | None, statement: str = "") -> bool:
    """Whether ``conjunct``, the words after ``coordinator`` ("and"/"but"/"so", None after a bare
    comma) in ``statement``, is a request tacked onto it rather than more of the statement.

    A request has no subject of its own: it asks politely ("please ...", "could you ..."), or it opens
    with a bare verb and either follows "so" (a "so" clause needs its own subject) or speaks to the
    listener ("let me know", "keep your answers short") in a statement that is not itself about the
    listener ("You work at Acme and love your job" goes on about them). A bare comma ("I bake, cook
    and paint") only splits off a polite request.
    """
    if _POLITE.match(conjunct):
        return True
    if coordinator is None or (coordinator.lower() != "so" and _ABOUT_LISTENER.match(statement)):
        return False
    lead = _IMPERATIVE_LEAD.match(conjunct)
    rest = conjunct[lead.end() if lead else 0 :]
    verb = _WORD.match(rest)
    if verb is None or verb.group() in _CLOSED or not _bare(verb.group()):
        return False
    if _AGO.match(rest, verb.end()):
        return False  # "... not so long ago": a time ("long ago"), no verb of a request
    return coordinator.lower() == "so" or _ADDRESSED.search(rest[verb.end() :]) is not None


def _bare(word: str) -> bool:
    """Whether a lower-case word can be a verb's bare form: a known one, or not inflected."""
    return is_base_verb(word) or not word.endswith(("ed", "ing", "s", "ly"))


def split_requests(clause: str) -> list[tuple[str, int]]:
    """``clause`` as (text, start) pieces, a request tacked onto a statement (``is_request``) split off
    as a piece of its own so the statement's fact does not run on into it ("I moved to Porto, so keep
    answers short" -> "I moved to Porto" | "keep answers short")."""
    pieces: list[tuple[str, int]] = []
    begin = 0
    for join in _CONJUNCT.finditer(clause):
        if join.start() == 0 or join.start() < begin:
            continue
        coordinator = join.group("c1") or join.group("c2")
        if not is_request(clause[join.end() :], coordinator, clause[begin : join.start()]):
            continue
        if clause[begin : join.start()].strip():
            pieces.append((clause[begin : join.start()], begin))
        begin = join.end()
    if clause[begin:].strip():
        pieces.append((clause[begin:], begin))
    return pieces


def is_question(sentence: str) -> bool:
    """Whether a sentence asks: it ends with "?" or opens with an inverted auxiliary ("Did you ...")."""
    return sentence.rstrip(" \t\"”')").endswith("?") or _QUESTION.match(sentence.lower()) is not None


def strip_memory_context(text: str) -> str:
    """``text`` without any ``<memory-context>`` span (nested, unclosed to the end, any case or spacing)
    and without Hermes' "[System note: ... recalled memory context ...]" line. Raises nothing."""
    if "memory-context" not in text.lower() and "system note" not in text.lower():
        return text
    out: list[str] = []
    depth = 0
    pos = 0
    for tag in _FENCE_TAG.finditer(text):
        closing = tag.group(1) == "/"
        if depth == 0:
            if closing:  # a stray closing tag outside any span: drop the tag, keep the text before it
                out.append(text[pos : tag.start()])
                pos = tag.end()
                continue
            out.append(text[pos : tag.start()])
            depth = 1
        elif closing:
            depth -= 1
        else:
            depth += 1
        pos = tag.end()
    if depth == 0:
        out.append(text[pos:])  # an unclosed span runs to the end of the text
    cleaned = _SYSTEM_NOTE.sub("", "".join(out))
    return cleaned.strip() if cleaned != text else text


def is_echo(sentence: str, replying_to: str | None) -> bool:
    """Whether an AI assistant's sentence only repeats the user or acknowledges it ("Noted: ...",
    "Got it, you ...", or mostly the user's own words)."""
    if _ECHO_OPENER.match(sentence) or _ECHO_TAIL.search(sentence):
        return True
    weak = _WEAK_OPENER.match(sentence)
    if weak is not None:
        rest = _ASIDE.sub(" ", sentence[weak.end() :])  # "OK (memory-context injected=True)": a status aside
        if not rest.strip() or classify_noise(rest).is_noise or _ECHO_OPENER.match(rest):
            return True
        sentence = rest
    if not replying_to:
        return False
    own = _content(sentence)
    if not own:
        return False
    theirs = _content(replying_to)
    return len(own & theirs) >= _ECHO_SHARE * len(own)


# An AI reply this short, with no number and no name in it ("Plain answer.", "Done, thanks."), tells
# the memory nothing: whatever it answered is in the user's message beside it.
_SHORT_REPLY_WORDS = 3


def _says_little(text: str) -> bool:
    words = re.findall(r"[^\W\d_]+|\d+", text)
    if not words or len(words) > _SHORT_REPLY_WORDS or any(w.isdigit() for w in words):
        return False
    return not any(w[0].isupper() for w in words[1:])


@functools.lru_cache(maxsize=256)
def _content(text: str) -> frozenset[str]:
    tokens = content_tokens(text)
    return frozenset(t for t in tokens if t not in _PERSON_WORDS)


# "I"/"you" swap between the user's message and its echo; they say nothing about the content.
_PERSON_WORDS = frozenset("i me my mine you your yours we our us im ive youre youve".split())


_JSON_START = re.compile(r'[\[{]\s*"')


def _quotes_tool_output(text: str) -> bool:
    """Whether most of an assistant's message is a JSON dump (a tool result read out)."""
    found = _JSON_START.search(text)
    if found is None:
        return False
    end = max(text.rfind("}"), text.rfind("]"))
    return end > found.start() and (end - found.start()) >= 0.5 * len(text.strip())


def chatter_kind(text: str, *, role: str = "user", replying_to: str | None = None) -> str | None:
    """``"question"``, ``"greeting"``, ``"ack"`` or (an AI assistant's message) ``"echo"`` when the
    message tells nothing on its own; None when it states something worth recalling.

    ``role`` "assistant" means the AI agent; ``replying_to`` is the message it answers (the user's).
    """
    sentences = [s.text for s in split_sentences(text) if s.text.strip()]
    if not sentences:
        return None
    if role == "assistant" and _says_little(text):
        return "ack"
    if role == "assistant" and _quotes_tool_output(text):
        return "echo"  # a reply that reads out a tool's JSON result repeats memory, it adds nothing
    kinds: list[str] = []
    for sentence in sentences:
        if is_question(sentence):
            kinds.append("question")
        elif classify_noise(sentence).is_noise:
            words = {w.lower() for w in re.findall(r"[^\W\d_]+", sentence)}
            kinds.append("greeting" if words & _GREETING_WORDS else "ack")
        elif role == "assistant" and is_echo(sentence, replying_to):
            kinds.append("echo")
        else:
            return None
    for kind in ("echo", "question", "greeting"):
        if kind in kinds:
            return kind
    return "ack"


__all__ = [
    "CHATTER_KINDS",
    "chatter_kind",
    "is_echo",
    "is_question",
    "is_request",
    "split_requests",
    "strip_memory_context",
]
