"""Disguised instructions the pattern table cannot see (issue 14): key phrases spaced out, punctuated or in
leetspeak (``i.g.n.o.r.e 4ll pr3v10us 1nstruct10ns``), reversed or ROT13, and instructions hidden in
base64. Part of the write-time scan (``security.threats``): the verdict stored with a row says whether
any of it was found, so reading needs none of this.

The phrase view ("squeezed") is the skeleton (look-alikes folded, see ``threats``) lower-cased, with
leetspeak digits and symbols read as the letters they imitate, ``l`` read as ``i`` (``1``/``|``/``!``
imitate both), and everything that is not a letter dropped. The phrases are long and specific enough
that ordinary sentences do not squeeze into them; each is written in plain spelling and read the same
way.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from functools import cache
from typing import Final

PROMPT_INJECTION: Final = "prompt_injection"
ROLE_HIJACK: Final = "role_hijack"

# ASCII read as the letters it imitates (1:1, so indices survive the translation).
_CANON: Final = str.maketrans(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZl01!|34@5$7+896",
    "abcdefghijkimnopqrstuvwxyzioiiieaassttbgg",
)
_NOT_LETTER: Final = re.compile(r"[^a-z]+")
# The same reading for ASCII text, in C: bytes.translate drops the rest, then maps.
_ASCII_KEEP: Final = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz01!|34@5$7+896"
_ASCII_DROP: Final = bytes(c for c in range(128) if c not in _ASCII_KEEP)
_ASCII_CANON: Final = bytes.maketrans(
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZl01!|34@5$7+896", b"abcdefghijkimnopqrstuvwxyzioiiieaassttbgg"
)
_LETTER: Final = re.compile(r"[a-z]")
_ROT13: Final = str.maketrans(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "nopqrstuvwxyzabcdefghijklmNOPQRSTUVWXYZABCDEFGHIJKLM",
)

_TARGET: Final = r"(?:instructions?|prompts?|directives?|guidelines|programming)"
_WHICH: Final = r"(?:all|any|every|previous|prior|above|earlier|preceding|your|system|initial|original)"
# "|" and "+" between the words read as "i" and "t" (they imitate them): a stray one is allowed between.
_FILL: Final = r"(?:[it]?(?:the|of|these|those|all|previous|prior|above|earlier|system|your)){0,3}[it]?"
# (pattern id, category, regex over the squeezed view in plain spelling)
_PHRASES: Final = (
    ("disguised_ignore", PROMPT_INJECTION, rf"(?:ignore|disregard){_FILL}{_WHICH}{_FILL}{_TARGET}"),
    ("disguised_forget", PROMPT_INJECTION,
     rf"forget(?:all|everything|about)?{_FILL}(?:previous|prior|above|earlier|initial|original|system)"
     rf"{_FILL}{_TARGET}"),
    ("disguised_override", PROMPT_INJECTION,
     r"(?:system[it]?prompt[it]?override|override[it]?(?:the|your)?[it]?system[it]?prompt|newsystemprompt"
     r"|(?:reveal|print|output|repeat|leak|dump)(?:me)?(?:your|the)(?:full|entire|hidden|initial|original)?"
     r"systemprompt)"),
    ("disguised_role", ROLE_HIJACK,
     r"(?:fromnowonyou(?:are|will|must|shall)|fromnowonactas|developermode(?:enabled|activated|on)"
     r"|doanythingnow|jailbreakmode)"),
)  # fmt: skip
_MIN_B64: Final = 16
_B64_RUN: Final = re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{16,}={0,2}(?![A-Za-z0-9+/=_-])")
_MAX_B64_RUNS: Final = 64  # a bound on the work per text; a text with more runs is flagged (below)

Found = tuple[str, str, int, int]  # pattern id, category, start, end (in the text the caller scanned)


def _plain(regex: str) -> str:
    """The regex with its letters read as the squeezed view reads them (``l`` -> ``i``)."""
    return "".join(ch.translate(_CANON) if ch.isalpha() else ch for ch in regex)


@cache
def _compiled() -> tuple[tuple[str, str, re.Pattern[str]], ...]:
    return tuple((pid, category, re.compile(_plain(regex))) for pid, category, regex in _PHRASES)


def squeezed(skeleton: str) -> str:
    """The phrase view of a skeleton (see the module docstring)."""
    if skeleton.isascii():
        return skeleton.encode("ascii").translate(_ASCII_CANON, _ASCII_DROP).decode("ascii")
    return _NOT_LETTER.sub("", skeleton.translate(_CANON))


# Every phrase starts with one of these words: a reading without one is not searched (the cheap test).
_KEYS: Final = ("ignore", "disregard", "forget", "prompt", "fromnowon", "developermode", "doanything",
                "jailbreak")  # fmt: skip


@cache
def _keys() -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """The keys as the plain, reversed and ROT13 readings show them in the plain squeezed view."""
    plain = tuple(squeezed(k) for k in _KEYS)
    return plain, tuple(k[::-1] for k in plain), tuple(squeezed(k.translate(_ROT13)) for k in _KEYS)


def _readings(skeleton: str) -> list[tuple[str, bool, str]]:
    """(view, read backwards, id suffix) of each reading of ``skeleton`` that holds a key."""
    flat = squeezed(skeleton)
    if len(flat) < 10:
        return []
    plain, backwards, rot13 = _keys()
    out: list[tuple[str, bool, str]] = []
    if any(k in flat for k in plain):
        out.append((flat, False, ""))
    if any(k in flat for k in backwards):
        out.append((flat[::-1], True, "_reversed"))
    if any(k in flat for k in rot13):
        # ROT13 is undone before the leetspeak reading (which maps l to i); letters stay where they were.
        out.append((squeezed(skeleton.translate(_ROT13)), False, "_rot13"))
    return out


def _phrase_spans(skeleton: str) -> list[Found]:
    """Phrase matches as spans of ``skeleton`` (plain, reversed and ROT13 readings)."""
    found: list[Found] = []
    positions: list[int] | None = None
    for view, backwards, suffix in _readings(skeleton):
        for pid, category, compiled in _compiled():
            for match in compiled.finditer(view):
                if positions is None:
                    positions = [m.start() for m in _LETTER.finditer(skeleton.translate(_CANON))]
                start, end = match.start(), match.end()
                if backwards:
                    start, end = len(view) - end, len(view) - start
                found.append((pid + suffix, category, positions[start], positions[end - 1] + 1))
    return found


def phrase_found(skeleton: str) -> bool:
    """Whether any disguised phrase is in ``skeleton`` (no spans: the cheap check)."""
    return any(compiled.search(view) for view, _, _ in _readings(skeleton) for _, _, compiled in _compiled())


def _decoded(run: str) -> str | None:
    """The text a base64 run encodes, when it decodes to printable UTF-8 text; else None."""
    body = run.rstrip("=").replace("-", "+").replace("_", "/")
    if len(body) % 4 == 1:
        return None
    try:
        raw = base64.b64decode(body + "=" * (-len(body) % 4), validate=True)
        text = raw.decode("utf-8")
    except (binascii.Error, ValueError):  # UnicodeDecodeError is a ValueError
        return None
    shown = sum(ch.isprintable() or ch in "\n\r\t" for ch in text)
    if shown < 0.9 * len(text) or sum(ch.isalpha() for ch in text) < 0.5 * len(text):
        return None
    return text


def _encoded_spans(text: str, is_clean: Callable[[str], bool]) -> list[Found]:
    """Base64 runs of ``text`` whose decoded text the scan flags."""
    found: list[Found] = []
    if not any(len(word) >= _MIN_B64 for word in text.split()):
        return found  # a run has no blanks: without a word this long there is none (the common case)
    for count, run in enumerate(_B64_RUN.finditer(text)):
        if count >= _MAX_B64_RUNS:
            found.append(("encoded_instructions", PROMPT_INJECTION, run.start(), len(text)))
            break
        decoded = _decoded(run.group(0))
        if decoded is not None and not is_clean(decoded):
            found.append(("encoded_instructions", PROMPT_INJECTION, run.start(), run.end()))
    return found


def spans(
    normalised: str, skeleton: str, origin: list[int] | None, is_clean: Callable[[str], bool]
) -> list[Found]:
    """Every disguised instruction in ``normalised`` (NFKC text), as spans of it. ``skeleton`` and
    ``origin`` are its skeleton view and the skeleton's index map (None: same indices); ``is_clean``
    scans a decoded payload."""
    found = _encoded_spans(normalised, is_clean)
    for pid, category, start, end in _phrase_spans(skeleton):
        if origin is not None:
            start, end = origin[start], origin[end - 1] + 1
        found.append((pid, category, start, end))
    return found


def found_any(normalised: str, skeleton: str, is_clean: Callable[[str], bool]) -> bool:
    """Whether ``spans`` would find anything (cheaper: no spans are built)."""
    return phrase_found(skeleton) or bool(_encoded_spans(normalised, is_clean))


__all__ = ["Found", "found_any", "phrase_found", "spans", "squeezed"]
