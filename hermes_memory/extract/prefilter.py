"""Decide what text reaches extraction: mask code, cut sentence windows, flag noise.

The noise test only gates fact extraction (the caller stores every message as an episode anyway),
so it errs towards content: a message is noise only when it has no word characters or every
word is greeting / thanks / acknowledgement filler or a name being addressed.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass

#: Only this many leading characters of a message are read; the rest is ignored (``truncated``).
MAX_MESSAGE_CHARS = 20_000
#: A sentence longer than this is cut into windows at whitespace, so no pattern sees more.
MAX_SENTENCE_CHARS = 600
#: Messages longer than this many words are never noise.
MAX_NOISE_WORDS = 20

_FILLER = frozenset(
    """
    hi hey hello heya hiya yo howdy sup morning evening afternoon night gm gn
    thanks thank thx ty tysm appreciate appreciated cheers welcome anytime
    ok okay k kk alright alrighty sure yes yeah yep yup yea ya no nope nah right true indeed exactly
    absolutely totally definitely certainly agreed agree course np noted got gotcha understood
    cool nice great good awesome amazing wonderful fantastic perfect sweet lovely neat fun
    wow whoa woah omg oh ah aw aww awww haha hahaha lol lmao rofl hehe xd hmm hm um uh ugh yay woohoo
    congrats congratulations bye goodbye later cya see soon talk care take catch luck best regards xo xoxo
    you too same here and so much very really a lot the your yours me my i it that this is was be will
    do did am are been has have had sounds sound like looks look love glad happy to for with all of
    safe stay keep up going doing go on enjoy rest day everyone guys buddy dude friend man bro
    please sorry hear hope well wish means mean just then there again now what how about ur u r
    can can't cannot wait things thing s m ll ve d re t liked loved enjoyed glad excited proud cute
    beautiful pretty gorgeous incredible impressive inspiring interesting adorable funny hilarious special
    """.split()
)
_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?")
# Sentence ends: terminal punctuation (plus closing quotes/brackets) before whitespace, or newlines.
_BOUNDARY = re.compile(r"[.!?…]+[\"'”’)\]]*(?=\s|$)|\n\s*")
_ABBREVIATIONS = frozenset(
    "mr mrs ms dr prof st mt jr sr vs etc e.g i.e inc ltd co corp no approx dept univ ave".split()
)
_INLINE_CODE = re.compile(r"`[^`\n]{1,400}`")


# A capitalised word addressed directly: "Hey Mel", "Thanks, Mel", "..., Mel!", "Mel, ..." at the start.
@functools.cache
def _vocative() -> re.Pattern[str]:
    return re.compile(
        r"(?:\b(?:hi|hey|hello|thanks|thank\s+you|bye|congrats|yo|dear)[,!]?\s+|,\s*|^)"
        r"([A-Z][^\W\d_]+)(?=\s*[,!.?]|$)",
        re.IGNORECASE,
    )


@dataclass(frozen=True, slots=True)
class NoiseVerdict:
    is_noise: bool
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class Sentence:
    """A sentence window: its text and where it starts in the message."""

    text: str
    start: int


def mask_code(text: str) -> tuple[str, bool]:
    """Blank out fenced and inline code (same length, newlines kept) so offsets stay valid."""
    if "`" not in text and "~~~" not in text:
        return text, False
    chars = list(text)
    found = False
    pos = 0
    # Fences pair up in order; an unclosed fence runs to the end of the message.
    while True:
        start = _next_fence(text, pos)
        if start < 0:
            break
        end = _next_fence(text, start + 3)
        stop = len(text) if end < 0 else end + 3
        _blank(chars, start, stop)
        found = True
        if end < 0:
            break
        pos = stop
    masked = "".join(chars)
    for match in _INLINE_CODE.finditer(masked):
        _blank(chars, *match.span())
        found = True
    return "".join(chars), found


def _next_fence(text: str, pos: int) -> int:
    a, b = text.find("```", pos), text.find("~~~", pos)
    if a < 0:
        return b
    return a if b < 0 else min(a, b)


def _blank(chars: list[str], start: int, stop: int) -> None:
    for i in range(start, stop):
        if chars[i] != "\n":
            chars[i] = " "


def split_sentences(text: str) -> list[Sentence]:
    """Sentence windows of ``text`` (at most MAX_SENTENCE_CHARS each), skipping blank ones."""
    pieces: list[tuple[int, int]] = []
    start = 0
    mergeable = False  # the previous piece ended in "Dr." / "St." and not at a line break
    for match in _BOUNDARY.finditer(text):
        end = match.end()
        if mergeable:
            pieces[-1] = (pieces[-1][0], end)
        else:
            pieces.append((start, end))
        mergeable = "\n" not in match.group() and _ends_with_abbreviation(text, pieces[-1])
        start = end
    if start < len(text):
        if mergeable:
            pieces[-1] = (pieces[-1][0], len(text))
        else:
            pieces.append((start, len(text)))
    sentences: list[Sentence] = []
    for s, e in pieces:
        for ws, we in _windows(text, s, e):
            chunk = text[ws:we]
            stripped = chunk.lstrip()
            if stripped.strip():
                lead = len(chunk) - len(stripped)
                sentences.append(Sentence(stripped.rstrip(), ws + lead))
    return sentences


def _ends_with_abbreviation(text: str, piece: tuple[int, int]) -> bool:
    s, e = piece
    tail = text[max(s, e - 8) : e].rstrip()
    if not tail.endswith("."):
        return False
    word = tail[:-1].rsplit(None, 1)[-1] if tail[:-1].strip() else ""
    return word.lower() in _ABBREVIATIONS or (len(word) == 1 and word.isupper())


def _windows(text: str, start: int, end: int) -> Iterable[tuple[int, int]]:
    while end - start > MAX_SENTENCE_CHARS:
        cut = text.rfind(" ", start + MAX_SENTENCE_CHARS // 2, start + MAX_SENTENCE_CHARS)
        if cut <= start:
            cut = start + MAX_SENTENCE_CHARS
        yield start, cut
        start = cut
    yield start, end


@functools.lru_cache(maxsize=4096)
def _name_words(names: tuple[str, ...]) -> frozenset[str]:
    words: set[str] = set()
    for name in names:
        words.update(w.lower() for w in _WORD.findall(name))
    return frozenset(words)


def classify_noise(text: str, names: tuple[str, ...] = ()) -> NoiseVerdict:
    """Whether a message is noise for fact extraction; ``names`` are participants' names (vocatives)."""
    if not text.strip():
        return NoiseVerdict(True, "empty")
    words = _WORD.findall(text[:4000])
    if not words:
        return NoiseVerdict(True, "no_words")
    if len(words) > MAX_NOISE_WORDS:
        return NoiseVerdict(False)
    vocatives = set(_name_words(names))
    vocatives.update(m.group(1).lower() for m in _vocative().finditer(text[:4000]) if m.group(1)[0].isupper())
    for word in words:
        low = word.lower().replace("’", "'")
        if low in _FILLER or low in vocatives:
            continue
        if "'" in low and low.split("'")[0] in _FILLER:
            continue
        return NoiseVerdict(False)
    return NoiseVerdict(True, "filler")


__all__ = [
    "MAX_MESSAGE_CHARS",
    "MAX_NOISE_WORDS",
    "MAX_SENTENCE_CHARS",
    "NoiseVerdict",
    "Sentence",
    "classify_noise",
    "mask_code",
    "split_sentences",
]
