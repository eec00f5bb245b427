"""What counts as a threat: Hermes' pattern table, the stricter extra patterns, the scopes."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Final

from hermes_memory.errors import ValidationError

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

# A scope includes every narrower scope: all ⊂ context ⊂ strict.
_SCOPE_MEMBERS: Final = {
    "all": ("all",),
    "context": ("all", "context"),
    "strict": ("all", "context", "strict"),
}


@cache
def compiled_patterns(scope: str) -> tuple[tuple[re.Pattern[str], ThreatPattern], ...]:
    """The patterns ``scope`` includes, compiled (on first use, not at import), in table order."""
    members = _SCOPE_MEMBERS[scope]
    table = (*THREAT_PATTERNS, *EXTRA_PATTERNS)
    return tuple((re.compile(p.regex, re.IGNORECASE), p) for p in table if p.scope in members)


def includes_disguise(scope: str) -> bool:
    """Whether ``scope`` includes the disguise checks (they are ``context``-scope, like EXTRA_PATTERNS)."""
    return "context" in _SCOPE_MEMBERS[scope]


def checked_text(text: object, scope: str) -> str:
    """``text``, once it is known to be a str and ``scope`` a known scope.

    Raises ValidationError if ``text`` is not a str or ``scope`` is unknown.
    """
    if not isinstance(text, str):
        raise ValidationError(f"text to scan must be a str, got {type(text).__name__}")
    if scope not in _SCOPE_MEMBERS:
        raise ValidationError(f"unknown threat scope {scope!r}; use one of {', '.join(SCOPES)}")
    return text


__all__ = [
    "C2_PROMPTWARE",
    "CONFIG_MODIFICATION",
    "EXFILTRATION",
    "EXTRA_PATTERNS",
    "HARDCODED_SECRET",
    "INVISIBLE_CHARS",
    "INVISIBLE_UNICODE",
    "PERSISTENCE",
    "PROMPT_INJECTION",
    "ROLE_HIJACK",
    "SCOPES",
    "THREAT_PATTERNS",
    "ThreatPattern",
    "checked_text",
    "compiled_patterns",
    "includes_disguise",
]
