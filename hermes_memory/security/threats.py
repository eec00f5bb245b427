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

``DETECTOR_VERSION`` names this detector: a verdict stored with a row by an older one is scanned again
(``tier2.verdicts``). Raise it whenever a change here can flag text the previous version passed.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any, Final

from hermes_memory.errors import ThreatDetectedError, ValidationError
from hermes_memory.security import disguise, fence

# Version of the detector (the tables and views below): verdicts of an older one are re-scanned.
# 1: Hermes' table with skeleton views (migration 8). 2: issue 14 (EXTRA_PATTERNS, disguise, confusables).
DETECTOR_VERSION: Final = 2

# Hermes scans only this many characters: the scanners are guards, not archival search, and a bound
# keeps the worst case predictable. ``neutralise`` scans everything (see there).
MAX_SCAN_CHARS: Final = 65_536

SCOPES: Final = ("all", "context", "strict")

# Bounded filler between key attack words (Hermes: "multi-word bypass" without unbounded backtracking).
_FILLER: Final = r"(?:\w+\s+){0,8}"

# Categories group Hermes' pattern sections; they label redactions and error messages.
PROMPT_INJECTION: Final = "prompt_injection"
ROLE_HIJACK: Final = "role_hijack"
C2_PROMPTWARE: Final = "c2_promptware"
EXFILTRATION: Final = "exfiltration"
PERSISTENCE: Final = "persistence"
CONFIG_MODIFICATION: Final = "config_modification"
HARDCODED_SECRET: Final = "hardcoded_secret"
INVISIBLE_UNICODE: Final = "invisible_unicode"


@dataclass(frozen=True, slots=True)
class ThreatPattern:
    """One row of the pattern table: regex source, Hermes pattern id, scope, category."""

    regex: str
    pattern_id: str
    scope: str
    category: str


# (regex, pattern_id, scope) copied from hermes-agent 0.19.0 tools/threat_patterns.py; category added.
THREAT_PATTERNS: Final[tuple[ThreatPattern, ...]] = (
    # Classic prompt injection (scope "all").
    ThreatPattern(
        rf"ignore\s+{_FILLER}(previous|all|above|prior)\s+{_FILLER}instructions",
        "prompt_injection",
        "all",
        PROMPT_INJECTION,
    ),
    ThreatPattern(r"system\s+prompt\s+override", "sys_prompt_override", "all", PROMPT_INJECTION),
    ThreatPattern(
        rf"disregard\s+{_FILLER}(your|all|any)\s+{_FILLER}(instructions|rules|guidelines)",
        "disregard_rules",
        "all",
        PROMPT_INJECTION,
    ),
    ThreatPattern(
        rf"act\s+as\s+(if|though)\s+{_FILLER}you\s+{_FILLER}(have\s+no|don\'t\s+have)\s+"
        rf"{_FILLER}(restrictions|limits|rules)",
        "bypass_restrictions",
        "all",
        PROMPT_INJECTION,
    ),
    ThreatPattern(
        r"<!--[^>]{0,512}(?:ignore|override|system|secret|hidden)[^>]{0,512}-->",
        "html_comment_injection",
        "all",
        PROMPT_INJECTION,
    ),
    ThreatPattern(
        r'<\s*div\s+style\s*=\s*["\'][^>]{0,2048}display\s*:\s*none', "hidden_div", "all", PROMPT_INJECTION
    ),
    ThreatPattern(
        r"translate\s+[^\n]{0,512}\s+into\s+[^\n]{0,512}\s+and\s+(execute|run|eval)",
        "translate_execute",
        "all",
        PROMPT_INJECTION,
    ),
    ThreatPattern(
        rf"do\s+not\s+{_FILLER}tell\s+{_FILLER}the\s+user", "deception_hide", "all", PROMPT_INJECTION
    ),
    # Role-play / identity hijack (scope "context").
    ThreatPattern(rf"you\s+are\s+{_FILLER}now\s+(?:a|an|the)\s+", "role_hijack", "context", ROLE_HIJACK),
    ThreatPattern(rf"pretend\s+{_FILLER}(you\s+are|to\s+be)\s+", "role_pretend", "context", ROLE_HIJACK),
    ThreatPattern(
        rf"output\s+{_FILLER}(system|initial)\s+prompt", "leak_system_prompt", "context", ROLE_HIJACK
    ),
    ThreatPattern(
        rf"(respond|answer|reply)\s+without\s+{_FILLER}(restrictions|limitations|filters|safety)",
        "remove_filters",
        "context",
        ROLE_HIJACK,
    ),
    ThreatPattern(
        rf"you\s+have\s+been\s+{_FILLER}(updated|upgraded|patched)\s+to",
        "fake_update",
        "context",
        ROLE_HIJACK,
    ),
    ThreatPattern(r"\bname\s+yourself\s+\w+", "identity_override", "context", ROLE_HIJACK),
    # C2 / Brainworm-style promptware (scope "context").
    ThreatPattern(r"register\s+(as\s+)?a?\s*node", "c2_node_registration", "context", C2_PROMPTWARE),
    ThreatPattern(
        r"(heartbeat|beacon|check[\s\-]?in)\s+(to|with)\s+", "c2_heartbeat", "context", C2_PROMPTWARE
    ),
    ThreatPattern(r"pull\s+(down\s+)?(?:new\s+)?task(?:ing|s)?\b", "c2_task_pull", "context", C2_PROMPTWARE),
    ThreatPattern(r"connect\s+to\s+the\s+network\b", "c2_network_connect", "context", C2_PROMPTWARE),
    ThreatPattern(
        r"you\s+must\s+(?:\w+\s+){0,3}(register|connect|report|beacon)\b",
        "forced_action",
        "context",
        C2_PROMPTWARE,
    ),
    ThreatPattern(r"only\s+use\s+one[\s\-]?liners?\b", "anti_forensic_oneliner", "context", C2_PROMPTWARE),
    ThreatPattern(
        rf"never\s+{_FILLER}(?:create|write)\s+{_FILLER}(?:script|file)\s+{_FILLER}disk",
        "anti_forensic_disk",
        "context",
        C2_PROMPTWARE,
    ),
    ThreatPattern(
        r"unset\s+\w*(?:CLAUDE|CODEX|HERMES|AGENT|OPENAI|ANTHROPIC)\w*",
        "env_var_unset_agent",
        "context",
        C2_PROMPTWARE,
    ),
    ThreatPattern(
        r"\b(?:cobalt\s*strike|sliver|havoc|mythic|metasploit|brainworm)\b",
        "known_c2_framework",
        "context",
        C2_PROMPTWARE,
    ),
    ThreatPattern(
        r"\bc2\s+(?:server|channel|infrastructure|beacon)\b", "c2_explicit", "context", C2_PROMPTWARE
    ),
    ThreatPattern(r"\bcommand\s+and\s+control\b", "c2_explicit_long", "context", C2_PROMPTWARE),
    # Exfiltration.
    ThreatPattern(
        r"curl\s+[^\n]{0,2048}\$\{?\w*(KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|API)",
        "exfil_curl",
        "all",
        EXFILTRATION,
    ),
    ThreatPattern(
        r"wget\s+[^\n]{0,2048}\$\{?\w*(KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|API)",
        "exfil_wget",
        "all",
        EXFILTRATION,
    ),
    ThreatPattern(
        r"cat\s+[^\n]{0,2048}(\.env|credentials|\.netrc|\.pgpass|\.npmrc|\.pypirc)",
        "read_secrets",
        "all",
        EXFILTRATION,
    ),
    ThreatPattern(
        r"(send|post|upload|transmit)\s+[^\n]{0,2048}\s+(to|at)\s+https?://",
        "send_to_url",
        "strict",
        EXFILTRATION,
    ),
    ThreatPattern(
        rf"(include|output|print|share)\s+{_FILLER}(conversation|chat\s+history|previous\s+messages"
        r"|full\s+context|entire\s+context)",
        "context_exfil",
        "strict",
        EXFILTRATION,
    ),
    # Persistence / SSH backdoor (scope "strict").
    ThreatPattern(r"authorized_keys", "ssh_backdoor", "strict", PERSISTENCE),
    ThreatPattern(r"\$HOME/\.ssh|\~/\.ssh", "ssh_access", "strict", PERSISTENCE),
    ThreatPattern(r"\$HOME/\.hermes/\.env|\~/\.hermes/\.env", "hermes_env", "strict", PERSISTENCE),
    ThreatPattern(
        r"(update|modify|edit|write|change|append|add\s+to)\s+[^\n]{0,2048}"
        r"(?:AGENTS\.md|CLAUDE\.md|\.cursorrules|\.clinerules)",
        "agent_config_mod",
        "strict",
        CONFIG_MODIFICATION,
    ),
    ThreatPattern(
        r"(update|modify|edit|write|change|append|add\s+to)\s+[^\n]{0,2048}"
        r"\.hermes/(config\.yaml|SOUL\.md)",
        "hermes_config_mod",
        "strict",
        CONFIG_MODIFICATION,
    ),
    # Hard-coded secrets.
    ThreatPattern(
        r'(?:api[_-]?key|token|secret|password)\s*[=:]\s*["\'][A-Za-z0-9+/=_-]{20,}',
        "hardcoded_secret",
        "strict",
        HARDCODED_SECRET,
    ),
)

# Role words a fake system/developer line uses, and what makes such a line an instruction to the model.
_AUTHORITY: Final = r"(?:system|developer|admin(?:istrator)?|sysadmin|operator|root|openai|anthropic)"
_QUALIFIER: Final = (
    r"(?:\s+(?:note|notice|message|msg|prompt|instructions?|override|update|alert|directive|command|mode"
    r"|reminder|policy))?"
)
_CUE: Final = (
    r"\b(?:you|your|must|never|always|ignore|reveal|disregard|do\s+not|don't|from\s+now|follow|obey"
    r"|override|instructions?|password|secret|credentials?|assistant|model|forget|pretend|act\s+as"
    r"|respond|reply|answer|comply|execute|run|send|print|output)\b"
)
# Stricter than Hermes, never looser (scope "context": recall, prefetch and every write refuse them).
EXTRA_PATTERNS: Final[tuple[ThreatPattern, ...]] = (
    # "System: you must now ...", "SYSTEM NOTE: ...", "Developer message: ignore ..." at a line or
    # sentence start, with an instruction after it on the same line.
    ThreatPattern(
        rf"(?:^|[\n.!?;>])[\s>*#\-]*[\[(<{{]?\s*{_AUTHORITY}{_QUALIFIER}\s*[\])>}}]?\s*[:\uff1a\-]"
        rf"[^\n]{{0,300}}?{_CUE}[^\n]{{0,300}}",
        "fake_role_line",
        "context",
        ROLE_HIJACK,
    ),
    # "[SYSTEM NOTE]", "(system message)", "[developer]", "[System note: ..." anywhere.
    ThreatPattern(
        rf"[\[(<{{]\s*/?\s*{_AUTHORITY}{_QUALIFIER}\s*[\])>}}:]", "fake_role_tag", "context", ROLE_HIJACK
    ),
    ThreatPattern(
        r"\bsystem\s+(?:note|notice|override|directive|alert)\b", "fake_system_note", "context", ROLE_HIJACK
    ),
    # Chat-template tokens and instruction formats: ChatML, Llama 2/3, Gemma, Alpaca headings.
    ThreatPattern(
        r"<\s*\|\s*[a-z_]{2,30}\s*\|\s*>|\[/?INST\]|<<\s*/?\s*SYS\s*>>|<\s*/?\s*(?:start|end)_of_turn\s*>"
        r"|<\s*/?\s*(?:system|developer)\s*>",
        "chat_template_token",
        "context",
        ROLE_HIJACK,
    ),
    ThreatPattern(
        r"(?:^|\n)\s*#{1,6}\s*(?:system(?:\s+(?:prompt|message|note))?|instructions?|response|input|human"
        r"|assistant|user|developer)\s*:",
        "instruction_heading",
        "context",
        ROLE_HIJACK,
    ),
    # Hidden comments: HTML (closed or not) and markdown's "[//]: # (...)" that carry an instruction.
    ThreatPattern(
        rf"<!--[\s\S]{{0,1024}}?{_CUE}[^\n]{{0,1024}}",
        "html_comment_instruction",
        "context",
        PROMPT_INJECTION,
    ),
    ThreatPattern(
        r"(?:^|\n)\s*\[\s*(?://|comment|_|#|\s)\s*\]\s*:\s*(?:#|<>)",
        "markdown_comment",
        "context",
        PROMPT_INJECTION,
    ),
    # Identity rewrites Hermes' "you are now a ..." misses.
    ThreatPattern(
        r"from\s+now\s+on\s*,?\s*(?:you\s*(?:are|'re|will|'ll|must|shall|should)\s+"
        r"(?:an?\b|the\b|now\b|no\s+longer|called|named|act|behave|respond|answer|reply|pretend|ignore"
        r"|obey|only|always|never|be\b)|act\s+as|your\s+(?:name|role|new)|ignore|respond|answer|reply)",
        "from_now_on",
        "context",
        ROLE_HIJACK,
    ),
    ThreatPattern(
        r"\byou\s+are\s+no\s+longer\s+(?:an?\s+|the\s+)?(?:ai|assistant|bound|restricted|limited|required"
        r"|hermes|chatbot|language\s+model)",
        "identity_release",
        "context",
        ROLE_HIJACK,
    ),
)

# Invisible / bidirectional characters used to hide instructions (Hermes' INVISIBLE_CHARS, 17 of them).
INVISIBLE_CHARS: Final = frozenset(
    {
        "\u200b",
        "\u200c",
        "\u200d",
        "\u2060",
        "\u2062",
        "\u2063",
        "\u2064",
        "\ufeff",
        "\u202a",
        "\u202b",
        "\u202c",
        "\u202d",
        "\u202e",
        "\u2066",
        "\u2067",
        "\u2068",
        "\u2069",
    }
)
_INVISIBLE_TABLE: Final = dict.fromkeys(ord(ch) for ch in INVISIBLE_CHARS)
# Every other character that renders as nothing: Unicode format characters (category Cf, Unicode 14:
# soft hyphen, Arabic/Syriac marks, LRM/RLM/ALM, invisible operators, deprecated format controls,
# interlinear annotation, tag characters), the Hangul fillers, Khmer inherent vowels, Mongolian
# variation selectors and the variation-selector supplement (used to smuggle bytes after an emoji).
# The 16 emoji/text variation selectors U+FE00-FE0F are left alone: ordinary emoji carry them.
_HIDDEN_RE: Final = re.compile(
    "[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u115f\u1160\u17b4\u17b5"
    "\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\u3164\ufeff\uffa0"
    "\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U00013438\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f\U000e0100-\U000e01ef]"
)
# Look-alike letters folded to the Latin letter they imitate (one character each), for the skeleton.
# The table applies after NFKC, so it lists what NFKC leaves (Greek lunate sigma "ϲ" becomes final sigma
# "ς": both are here). Cherokee letters are listed upper case; their lower-case forms are added below.
_CONFUSABLE_PAIRS: Final = (
    ("аеёіїјорсухѕһԁԛԝɡкмтвнАВЕКМНОРСТХЅІЈԚԜҮ", "aeeiijopcyxshdqwgkmtbhABEKMHOPCTXSIJQWY"),
    ("гпԍѡүѵɩГПԌѴЬЗбьӏ", "rngwyvirngVb3bbl"),
    ("αεινκορτυχϲςΑΒΕΖΗΙΚΜΝΟΡΤΥΧβϐγ", "aeivkoptuxccABEZHIKMNOPTYXbby"),
    ("ıȷɑօսոռհցզᴀʙᴄᴅᴇɢʜɪᴊᴋʟᴍɴᴏᴘʀꜱᴛᴜᴠᴡʏᴢ", "ijaounnhgqabcdeghijklmnoprstuvwyz"),
    ("ᎠᎡᎢᎥᎩᎪᎫᎬᎳᎷᎻᏀᏂᏃᏏᏕᏚᏞᏟᏢᏦᏴᏙᏒᎤ", "DRTiyAJEWMHGhZbSSLCPKBVRu"),
)
_CONFUSABLES: Final = {
    **{ord(a): b for src, dst in _CONFUSABLE_PAIRS for a, b in zip(src, dst, strict=True)},
    **{ord(a.lower()): b.lower() for a, b in zip(*_CONFUSABLE_PAIRS[-1], strict=True) if a.lower() != a},
}
# Words joined by separators (ignore_all_previous_instructions) are also read with spaces instead.
_SEPARATORS: Final = str.maketrans("_-", "  ")

# A scope includes every narrower scope: all ⊂ context ⊂ strict.
_SCOPE_MEMBERS: Final = {
    "all": ("all",),
    "context": ("all", "context"),
    "strict": ("all", "context", "strict"),
}

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


@cache
def _compiled(scope: str) -> tuple[tuple[re.Pattern[str], ThreatPattern], ...]:
    # Compiled on first use, not at import (no work at import time).
    members = _SCOPE_MEMBERS[scope]
    table = (*THREAT_PATTERNS, *EXTRA_PATTERNS)
    return tuple((re.compile(p.regex, re.IGNORECASE), p) for p in table if p.scope in members)


def _disguised(scope: str) -> bool:
    """Whether ``scope`` includes the disguise checks (they are ``context``-scope, like EXTRA_PATTERNS)."""
    return "context" in _SCOPE_MEMBERS[scope]


def _skeleton_of(views: list[tuple[str, list[int] | None]]) -> tuple[str, list[int] | None]:
    """The skeleton view among ``_views``' output (the NFKC text itself when nothing was folded)."""
    return views[1] if len(views) > 1 and views[1][1] is not None else (views[0][0], None)


def _check_args(text: object, scope: str) -> str:
    if not isinstance(text, str):
        raise ValidationError(f"text to scan must be a str, got {type(text).__name__}")
    if scope not in _SCOPE_MEMBERS:
        raise ValidationError(f"unknown threat scope {scope!r}; use one of {', '.join(SCOPES)}")
    return text


def _invisible_matches(text: str) -> list[ThreatMatch]:
    found: dict[str, ThreatMatch] = {}
    for hidden in _HIDDEN_RE.finditer(text):
        ch = hidden.group(0)
        if ch not in found:
            pid = f"invisible_unicode_U+{ord(ch):04X}"
            found[ch] = ThreatMatch(pid, INVISIBLE_UNICODE, hidden.start(), hidden.end(), ch)
    return list(found.values())


def _skeleton(text: str) -> tuple[str, list[int] | None]:
    """``text`` with look-alikes folded to Latin and combining marks and invisible characters dropped;
    plus, for each skeleton index, the index in ``text`` it came from (None when nothing was dropped,
    so indices agree)."""
    if text.isascii():  # the common case: nothing to drop or fold, no per-character loop
        return text, None
    chars: list[str] = []
    origin: list[int] = []
    for index, ch in enumerate(text):
        if unicodedata.combining(ch) or _HIDDEN_RE.match(ch):
            continue
        chars.append(ch)
        origin.append(index)
    return "".join(chars).translate(_CONFUSABLES), origin


def _views(normalised: str) -> list[tuple[str, list[int] | None]]:
    """The texts each pattern is tried on: the NFKC text, its skeleton, and the skeleton with ``_``/``-``
    read as spaces (each only when it differs from the one before)."""
    skeleton, origin = _skeleton(normalised)
    views: list[tuple[str, list[int] | None]] = [(normalised, None)]
    if skeleton != normalised:
        views.append((skeleton, origin))
    separated = skeleton.translate(_SEPARATORS)
    if separated != skeleton:
        views.append((separated, origin))
    return views


def _span(origin: list[int] | None, start: int, end: int) -> tuple[int, int]:
    """A match span in a view, as a span of the NFKC text."""
    if origin is None:
        return start, end
    return origin[start], origin[end - 1] + 1


def scan_for_threats(text: str, scope: str = "strict") -> list[ThreatMatch]:
    """Return every finding in the first 64 KiB of ``text`` (invisible characters first, then one
    match per pattern in table order); an empty list means clean.

    Raises ValidationError if ``text`` is not a str or ``scope`` is unknown.
    """
    text = _check_args(text, scope)
    if not text:
        return []
    text = text[:MAX_SCAN_CHARS]
    # Invisible characters are checked on the raw text: NFKC can fold some of them away.
    findings = _invisible_matches(text)
    # NFKC folds full-width / compatibility forms (ｃａｔ → cat) so they cannot dodge the regexes.
    normalised = unicodedata.normalize("NFKC", text)
    views = _views(normalised)
    for compiled, pattern in _compiled(scope):
        for view, origin in views:
            found = compiled.search(view)
            if found is not None and found.end() > found.start():
                start, end = _span(origin, found.start(), found.end())
                findings.append(
                    ThreatMatch(pattern.pattern_id, pattern.category, start, end, normalised[start:end])
                )
                break
    if _disguised(scope):
        skeleton, origin = _skeleton_of(views)
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
    text = _check_args(text, scope)
    if not text:
        return True
    if _HIDDEN_RE.search(text):
        return False
    normalised = unicodedata.normalize("NFKC", text)
    views = _views(normalised)
    for compiled, _pattern in _compiled(scope):
        for view, _origin in views:
            found = compiled.search(view)
            if found is not None and found.end() > found.start():
                return False
    return not (_disguised(scope) and disguise.found_any(normalised, _skeleton_of(views)[0], is_clean))


def strip_invisible(text: str) -> str:
    """Remove the invisible/bidi characters Hermes flags.

    Raises ValidationError if ``text`` is not a str.
    """
    return _HIDDEN_RE.sub("", _check_args(text, "all"))


def _pattern_spans(text: str, scope: str) -> list[tuple[int, int, str]]:
    views = _views(text)
    spans = [
        (*_span(origin, found.start(), found.end()), pattern.category)
        for view, origin in views
        for compiled, pattern in _compiled(scope)
        for found in compiled.finditer(view)
        if found.end() > found.start()
    ]
    if _disguised(scope):
        skeleton, origin = _skeleton_of(views)
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
    text = _check_args(text, scope)
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


# Patterns whose gaps ([^>], [^\n], the secret's "[=:]\s*[\"']") can run over punctuation: only they can
# match text joined from clean pieces by a template whose seams hold punctuation ("- [date] ", ": ",
# " (", "; ", ")\n"), which stops every other pattern's word-and-space gaps. Each needs all of its groups
# of literals (one literal of each group) in the folded text, or it cannot match in any view.
_SEAM_LITERALS: Final[dict[str, tuple[tuple[str, ...], ...]]] = {
    "html_comment_injection": (("<!--",), ("-->",)),
    "hidden_div": (("div",), ("display",), ("none",)),
    "translate_execute": (("translate",), ("into",)),
    "exfil_curl": (("curl",), ("$",)),
    "exfil_wget": (("wget",), ("$",)),
    "read_secrets": (("cat",), (".env", "credentials", ".netrc", ".pgpass", ".npmrc", ".pypirc")),
    "send_to_url": (("http",), ("://",)),
    "agent_config_mod": (("agents.md", "claude.md", ".cursorrules", ".clinerules"),),
    "hermes_config_mod": ((".hermes/",),),
    "hardcoded_secret": (("key", "token", "secret", "password"), ('"', "'")),
}
# Hermes wraps recalled memory in <memory-context>…</memory-context>: a tag inside it (any case, spacing,
# separator or full-width bracket) could close the fence early.
_FENCE_TAG: Final = re.compile(r"[<＜﹤]\s*/?\s*memory\s*[-_‐‑–—\s]?\s*context\s*[>＞﹥]", re.IGNORECASE)


# Non-ASCII characters as the folded view reads them (None: dropped), filled in as they are first met.
_FOLD: dict[int, str | None] = {}


def _learn_folds(text: str) -> None:
    for ch in set(text):
        if ord(ch) > 127 and ord(ch) not in _FOLD:
            dropped = unicodedata.combining(ch) or _HIDDEN_RE.match(ch)
            _FOLD[ord(ch)] = None if dropped else ch.translate(_CONFUSABLES)


def _folded(text: str) -> str:
    """Lower-case skeleton of the NFKC text without combining marks: a literal any view of ``text``
    matches (case-insensitively) is a substring of it. Per character, through a table (no loop here)."""
    if text.isascii():
        return text.lower()
    normalised = unicodedata.normalize("NFKC", text)
    _learn_folds(normalised)
    lowered = normalised.translate(_FOLD).casefold()
    if lowered.isascii():
        return lowered
    _learn_folds(lowered)  # casefold can add combining marks ("İ" -> "i" + U+0307)
    return lowered.translate(_FOLD)


def _seam_patterns() -> tuple[tuple[re.Pattern[str], tuple[tuple[str, ...], ...]], ...]:
    return tuple(
        (compiled, _SEAM_LITERALS[pattern.pattern_id])
        for compiled, pattern in _compiled("strict")
        if pattern.pattern_id in _SEAM_LITERALS
    )


_seam_compiled = cache(_seam_patterns)


def escape_fence(text: str) -> str:
    """``text`` without anything that could open or close the ``<memory-context>`` fence.

    Raises ValidationError if ``text`` is not a str.
    """
    return _escape_fence(_check_args(text, "strict"), None)


def _escape_fence(text: str, folded: str | None) -> str:
    folded = _folded(text) if folded is None else folded
    if "memory" not in folded or "context" not in folded:
        return text
    if not _FENCE_TAG.search(text):
        text = unicodedata.normalize("NFKC", strip_invisible(text))
    return _FENCE_TAG.sub("", text)


def neutralise_composed(text: str) -> str:
    """Make text that was joined from pieces each scanned clean (``is_clean``) safe for output, cheaply:
    only the patterns that can run over the template's punctuation are tried, and only when their
    literals occur; a match makes it ``neutralise`` the whole text. Then it is quoted (``fence.quote``: tags
escaped, role markers marked).

    The pieces must be clean and joined by seams holding punctuation (as ``recall.render`` lines are);
    text with an unscanned or flagged piece needs ``neutralise``. Raises ValidationError if ``text`` is
    not a str.
    """
    if composed_threat(text):
        return fence.quote(neutralise(text))
    # Reading only escapes and marks: disguised phrases were looked for when each piece was written.
    return fence.quote(text)


def composed_threat(text: str) -> bool:
    """Whether text joined from clean pieces (see ``neutralise_composed``) matches one of the patterns
    that can run over the template's punctuation: each is tried only when its literals occur.

    Raises ValidationError if ``text`` is not a str.
    """
    text = _check_args(text, "strict")
    folded = _folded(text)
    for compiled, groups in _seam_compiled():
        if all(any(literal in folded for literal in group) for group in groups):
            views = _views(unicodedata.normalize("NFKC", text))
            if any(compiled.search(view) for view, _ in views):
                return True
    return False


def composed_threat_lines(lines: Sequence[str]) -> bool:
    """``composed_threat("\\n".join(lines))``, from each line's folded text and views worked out once
    per line text (recall renders the same lines again and again). Every step of those (NFKC, the
    skeleton, the separators, case folding) maps a newline to itself and never combines it with the
    characters beside it, so the views of the block are the lines' views joined by newlines.

    Raises ValidationError if a line is not a str.
    """
    parts = [_line_views(_check_args(line, "strict")) for line in lines]
    folded = "\n".join(part[0] for part in parts)
    for compiled, groups in _seam_compiled():
        if all(any(literal in folded for literal in group) for group in groups) and any(
            compiled.search("\n".join(part[i] for part in parts)) for i in (1, 2, 3)
        ):
            return True
    return False


@lru_cache(maxsize=2048)
def _line_views(line: str) -> tuple[str, str, str, str]:
    """A line's folded text and its three views (NFKC, skeleton, separated; equal when unchanged)."""
    normalised = unicodedata.normalize("NFKC", line)
    skeleton, _ = _skeleton(normalised)
    return _folded(line), normalised, skeleton, skeleton.translate(_SEPARATORS)


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
    "composed_threat",
    "composed_threat_lines",
    "ensure_safe",
    "escape_fence",
    "first_threat",
    "is_clean",
    "neutralise",
    "neutralise_composed",
    "neutralise_data",
    "scan_for_threats",
    "strip_invisible",
]
