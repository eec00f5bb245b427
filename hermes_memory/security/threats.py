"""Threat scanning for text that will enter a system prompt or a recall block.

The pattern table, the invisible-character set, the 64 KiB cap and the NFKC step are ported from
Hermes Agent 0.19.0, ``tools/threat_patterns.py`` (lines 63-159), so a memory entry Hermes' own
``memory`` tool would refuse is refused here too, and vice versa. Patterns are data; keep this table
in lockstep with that file when Hermes changes it. Differences from Hermes, all deliberate:

* results are ``ThreatMatch`` records (pattern id, category, span) instead of bare id strings;
* invisible characters are reported in order of first occurrence (Hermes iterates a ``set``, so
  its order is arbitrary);
* an unknown scope raises ``ValidationError`` (Hermes: ``ValueError``);
* the default scope is ``"strict"`` (Hermes' ``scan_for_threats`` defaults to ``"context"``; its
  memory path always passes ``"strict"``);
* stricter, never looser: besides Hermes' 17 invisible characters every other Unicode format
  character (category Cf: soft hyphen, LRM/RLM, tag characters...), the Hangul fillers and the
  variation-selector supplement are invisible too; and each pattern is also tried on a *skeleton* of
  the text (look-alike Cyrillic/Greek letters folded to Latin, combining marks dropped, ``_``/``-``
  between words read as spaces), so ``іgnоre_all_previous_instructions`` is caught like the plain form;
* ``EXTRA_PATTERNS`` (scope ``context``) add what recalled memory must never carry and Hermes' table does
  not name: fake system/developer lines, chat-template tokens, instruction-format headings, HTML and
  markdown comments with instructions, "from now on you are ..."; ``security.disguise`` finds key
  phrases spaced out, punctuated, in leetspeak, reversed or ROT13, and instructions in base64.

The rooms: ``threat_patterns`` (the tables and scopes), ``text_views`` (how text is read: NFKC, the
skeleton, separators), this module (scan, verdict, neutralise) and ``composed`` (text joined from clean
pieces, the fence escape).

``DETECTOR_VERSION`` names this detector: a verdict stored with a row by an older one is scanned again
(``tier2.verdicts``). Raise it whenever a change to these rooms can flag text the previous version
passed.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

from hermes_memory.errors import ThreatDetectedError
from hermes_memory.security import disguise
from hermes_memory.security.text_views import HIDDEN_RE, skeleton_view, source_span, views_of
from hermes_memory.security.threat_patterns import (
    C2_PROMPTWARE,
    CONFIG_MODIFICATION,
    EXFILTRATION,
    HARDCODED_SECRET,
    INVISIBLE_CHARS,
    INVISIBLE_UNICODE,
    PERSISTENCE,
    PROMPT_INJECTION,
    ROLE_HIJACK,
    SCOPES,
    THREAT_PATTERNS,
    ThreatPattern,
    checked_text,
    compiled_patterns,
    includes_disguise,
)

# Version of the detector (``threat_patterns``' tables, ``text_views``' views, the scan here): verdicts
# of an older one are re-scanned.
# 1: Hermes' table with skeleton views (migration 8). 2: issue 14 (EXTRA_PATTERNS, disguise, confusables).
DETECTOR_VERSION: Final = 2

# Hermes scans only this many characters: the scanners are guards, not archival search, and a bound
# keeps the worst case predictable. ``neutralise`` scans everything (see there).
MAX_SCAN_CHARS: Final = 65_536

# Redaction can create a new match across the seam only in contrived text; a few passes settle it and
# the fallback replaces everything, so the output is always clean.
_MAX_NEUTRALISE_PASSES: Final = 4


@dataclass(frozen=True, slots=True)
class ThreatMatch:
    """One finding. ``start``/``end`` index the NFKC-normalised scanned text (for invisible
    characters: the raw text); ``text`` is the matched snippet."""

    pattern_id: str
    category: str
    start: int
    end: int
    text: str

    @property
    def message(self) -> str:
        """The refusal line shown to the model (Hermes' wording plus the category)."""
        if self.category == INVISIBLE_UNICODE:
            codepoint = self.pattern_id.removeprefix("invisible_unicode_")
            return f"Blocked: content contains invisible unicode character {codepoint} (possible injection)."
        return (
            f"Blocked: content matches threat pattern '{self.pattern_id}' (category: {self.category}). "
            "Content is injected into the system prompt and must not contain "
            "injection or exfiltration payloads."
        )


def _invisible_matches(text: str) -> list[ThreatMatch]:
    found: dict[str, ThreatMatch] = {}
    for hidden in HIDDEN_RE.finditer(text):
        ch = hidden.group(0)
        if ch not in found:
            pid = f"invisible_unicode_U+{ord(ch):04X}"
            found[ch] = ThreatMatch(pid, INVISIBLE_UNICODE, hidden.start(), hidden.end(), ch)
    return list(found.values())


def scan_for_threats(text: str, scope: str = "strict") -> list[ThreatMatch]:
    """Return every finding in the first 64 KiB of ``text`` (invisible characters first, then one
    match per pattern in table order); an empty list means clean.

    Raises ValidationError if ``text`` is not a str or ``scope`` is unknown.
    """
    text = checked_text(text, scope)
    if not text:
        return []
    text = text[:MAX_SCAN_CHARS]
    # Invisible characters are checked on the raw text: NFKC can fold some of them away.
    findings = _invisible_matches(text)
    # NFKC folds full-width / compatibility forms (ｃａｔ → cat) so they cannot dodge the regexes.
    normalised = unicodedata.normalize("NFKC", text)
    views = views_of(normalised)
    for compiled, pattern in compiled_patterns(scope):
        for view, origin in views:
            found = compiled.search(view)
            if found is not None and found.end() > found.start():
                start, end = source_span(origin, found.start(), found.end())
                findings.append(
                    ThreatMatch(pattern.pattern_id, pattern.category, start, end, normalised[start:end])
                )
                break
    if includes_disguise(scope):
        skeleton, origin = skeleton_view(views)
        seen: set[str] = set()
        plain = [(f.start, f.end) for f in findings if f.category != INVISIBLE_UNICODE]
        for pid, category, start, end in disguise.spans(normalised, skeleton, origin, is_clean):
            # A phrase the table already matched in plain words is reported once, as the table's.
            if pid not in seen and not any(start < e and s < end for s, e in plain):
                seen.add(pid)
                findings.append(ThreatMatch(pid, category, start, end, normalised[start:end]))
    return findings


def first_threat(text: str, scope: str = "strict") -> ThreatMatch | None:
    """Return the finding Hermes would report (the first one), or None when ``text`` is clean.

    Raises ValidationError if ``text`` is not a str or ``scope`` is unknown.
    """
    findings = scan_for_threats(text, scope)
    return findings[0] if findings else None


def ensure_safe(text: str, scope: str = "strict") -> None:
    """Refuse text that matches a threat pattern or contains invisible/bidi characters.

    Raises ThreatDetectedError naming the first matched pattern id and its category;
    ValidationError if ``text`` is not a str or ``scope`` is unknown.
    """
    finding = first_threat(text, scope)
    if finding is not None:
        raise ThreatDetectedError(finding.message)


def is_clean(text: str, scope: str = "strict") -> bool:
    """True when ``neutralise`` would return ``text`` unchanged: no invisible/bidi character and no
    pattern match in any view of the whole text (not only its first 64 KiB). The verdict written with a
    row, so reading it back needs no scan.

    Raises ValidationError if ``text`` is not a str or ``scope`` is unknown.
    """
    text = checked_text(text, scope)
    if not text:
        return True
    if HIDDEN_RE.search(text):
        return False
    normalised = unicodedata.normalize("NFKC", text)
    views = views_of(normalised)
    for compiled, _pattern in compiled_patterns(scope):
        for view, _origin in views:
            found = compiled.search(view)
            if found is not None and found.end() > found.start():
                return False
    return not (
        includes_disguise(scope) and disguise.found_any(normalised, skeleton_view(views)[0], is_clean)
    )


def strip_invisible(text: str) -> str:
    """Remove the invisible/bidi characters Hermes flags.

    Raises ValidationError if ``text`` is not a str.
    """
    return HIDDEN_RE.sub("", checked_text(text, "all"))


def _pattern_spans(text: str, scope: str) -> list[tuple[int, int, str]]:
    views = views_of(text)
    spans = [
        (*source_span(origin, found.start(), found.end()), pattern.category)
        for view, origin in views
        for compiled, pattern in compiled_patterns(scope)
        for found in compiled.finditer(view)
        if found.end() > found.start()
    ]
    if includes_disguise(scope):
        skeleton, origin = skeleton_view(views)
        spans.extend((start, end, category) for _, category, start, end in
                     disguise.spans(text, skeleton, origin, is_clean))  # fmt: skip
    spans.sort()
    return spans


def _redact(text: str, spans: list[tuple[int, int, str]]) -> str:
    # Overlapping matches collapse into one marker that lists every category involved.
    merged: list[tuple[int, int, list[str]]] = []
    for start, end, category in spans:
        if merged and start <= merged[-1][1]:
            last_start, last_end, categories = merged[-1]
            if category not in categories:
                categories.append(category)
            merged[-1] = (last_start, max(last_end, end), categories)
        else:
            merged.append((start, end, [category]))
    parts: list[str] = []
    cursor = 0
    for start, end, categories in merged:
        parts.append(text[cursor:start])
        span = text[start:end]
        # Keep the whitespace a pattern swallowed at its edges so the marker does not glue words.
        core = span.strip()
        lead = span[: len(span) - len(span.lstrip())]
        trail = span[len(span.rstrip()) :] if core else ""
        parts.append(f"{lead}[BLOCKED: {', '.join(categories)}]{trail}")
        cursor = end
    parts.append(text[cursor:])
    return "".join(parts)


def neutralise(text: str, scope: str = "strict") -> str:
    """Make text inert for output: strip invisible/bidi characters and replace every matched span
    with ``[BLOCKED: <category>]``. Clean text comes back unchanged (minus invisible characters);
    flagged text comes back NFKC-normalised, because that is the form the spans refer to. Unlike
    ``scan_for_threats`` the whole text is scanned, since nothing past 64 KiB may slip through.

    Raises ValidationError if ``text`` is not a str or ``scope`` is unknown.
    """
    text = checked_text(text, scope)
    if len(text) <= _CACHED_CHARS:
        return _neutralised_cached(text, scope)
    return _neutralised(text, scope)


def _neutralised(text: str, scope: str) -> str:
    cleaned = strip_invisible(text)
    for _ in range(_MAX_NEUTRALISE_PASSES):
        normalised = unicodedata.normalize("NFKC", cleaned)
        spans = _pattern_spans(normalised, scope)
        if not spans:
            return cleaned
        cleaned = strip_invisible(_redact(normalised, spans))
    remaining = _pattern_spans(unicodedata.normalize("NFKC", cleaned), scope)
    if not remaining:
        return cleaned
    return f"[BLOCKED: {', '.join(sorted({category for _, _, category in remaining}))}]"


# Recall neutralises the same remembered texts (and speakers, session ids) again and again; the result
# depends only on the text, so recent short ones are kept (at most 8192 x 4096 chars = 32 MiB).
_CACHED_CHARS = 4096
_neutralised_cached = lru_cache(maxsize=8192)(_neutralised)


def neutralise_data(value: Any, scope: str = "strict") -> Any:
    """``value`` (JSON-like: dicts, lists, scalars) with every string ``neutralise``d; keys and
    non-strings unchanged. For records leaving the store, whose fields may hold remembered text.

    Raises ValidationError if ``scope`` is unknown.
    """
    if isinstance(value, str):
        return neutralise(value, scope)
    if isinstance(value, dict):
        return {key: neutralise_data(item, scope) for key, item in value.items()}
    if isinstance(value, list):
        return [neutralise_data(item, scope) for item in value]
    if isinstance(value, tuple):
        return tuple(neutralise_data(item, scope) for item in value)
    return value


__all__ = [
    "C2_PROMPTWARE",
    "CONFIG_MODIFICATION",
    "DETECTOR_VERSION",
    "EXFILTRATION",
    "HARDCODED_SECRET",
    "INVISIBLE_CHARS",
    "INVISIBLE_UNICODE",
    "MAX_SCAN_CHARS",
    "PERSISTENCE",
    "PROMPT_INJECTION",
    "ROLE_HIJACK",
    "SCOPES",
    "THREAT_PATTERNS",
    "ThreatMatch",
    "ThreatPattern",
    "ensure_safe",
    "first_threat",
    "is_clean",
    "neutralise",
    "neutralise_data",
    "scan_for_threats",
    "strip_invisible",
]
