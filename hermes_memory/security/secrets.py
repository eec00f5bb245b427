"""Credential detection and redaction for text that is about to be stored (or shown) by memory.

Memory keeps what was said; a credential said in passing (an API key pasted into a turn, "my password is
…") must not be kept verbatim, recalled into a prompt, exported or backed up. ``redact_secrets`` replaces
each credential with a marker naming its kind (``[REDACTED:aws_access_key]``) and keeps the words around
it, so "the deploy key is [REDACTED:github_token]" still says what was stored.

Detection is by format, never by entropy alone: keys with a known prefix (``sk-``, ``AKIA``, ``ghp_``,
``xoxb-``, ``AIza``…), JWTs, PEM private keys, ``Bearer`` tokens, URLs carrying ``user:password@``, and
a value given to a credential word (``password: …``, ``pw=…``, ``api_key = …``, "my password is …").
A value that is an ordinary word of prose ("the password is incorrect") is left alone, so ordinary
sentences pass unchanged. Every pattern is linear (bounded repetitions, no nested quantifiers), so a
long or hostile text costs one pass per pattern.

Which write paths call this, and the config switch ``security.redact_secrets``: see
``hermes_memory.api``. Nothing here raises.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

MARKER_PREFIX: Final = "[REDACTED:"


def marker(kind: str) -> str:
    """The text a credential of ``kind`` is replaced with."""
    return f"{MARKER_PREFIX}{kind}]"


@dataclass(frozen=True, slots=True)
class SecretMatch:
    """One credential found: its kind and the span of the secret part (the value, not its label)."""

    kind: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class _Pattern:
    kind: str
    regex: re.Pattern[str]
    # Group holding the secret; 0 = the whole match. A label ("password:") stays readable.
    group: int | str = 0
    # Values that are ordinary words are not secrets ("password: reset yesterday").
    prose_check: bool = False
    # "password is X" in prose: X must also look like a password (see _looks_like_password).
    shape_check: bool = False


# A value cannot start with an earlier marker: redaction is idempotent.
_NOT_MARKER = r"(?!\[REDACTED:)"
# Credential words that label a value in prose or config. Longest first (regex alternation is ordered).
_PASSWORD_WORDS = r"(?:passwords?|passwd|passphrase|passcode|pass\s?word|pwd|pw|pin\s?code|pin)"
_KEY_WORDS = (
    r"(?:aws_?secret_?access_?key|aws_?secret_?key|secret_?access_?key|client[_-]?secret|"
    r"api[_-]?secret|api[_-]?key|apikey|api[_-]?token|secret[_-]?key|access[_-]?key[_-]?secret|"
    r"access[_-]?token|auth[_-]?token|refresh[_-]?token|bearer[_-]?token|private[_-]?key|"
    r"session[_-]?token|secret|token)"
)
# Where an unquoted value ends: whitespace, quotes, and the punctuation that closes a clause.
_VALUE = rf"{_NOT_MARKER}[^\s\"'`,;<>()\[\]{{}}]{{1,512}}"

_PATTERNS: Final[tuple[_Pattern, ...]] = (
    _Pattern(
        "private_key",
        re.compile(
            r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY( BLOCK)?-----"
            r"[\s\S]{0,16384}?(?:-----END[A-Z0-9 ]{0,40}PRIVATE KEY( BLOCK)?-----|\Z)"
        ),
    ),
    _Pattern(
        "jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{8,4096}\.eyJ[A-Za-z0-9_-]{8,8192}\.[A-Za-z0-9_-]{8,4096}")
    ),
    # OpenAI / Anthropic style (sk-…, sk-proj-…, sk-ant-api03-…): random, so it holds a digit ("sk-learn-…"
    # does not).
    _Pattern("api_key", re.compile(r"(?<![A-Za-z0-9_-])sk-(?=[A-Za-z0-9_-]{0,511}\d)[A-Za-z0-9_-]{20,512}")),
    _Pattern("stripe_key", re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,256}")),
    _Pattern("aws_access_key", re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b")),
    _Pattern(
        "github_token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,255}|github_pat_[A-Za-z0-9_]{30,255})")
    ),
    _Pattern("gitlab_token", re.compile(r"\bglpat-[A-Za-z0-9_-]{20,255}")),
    _Pattern("slack_token", re.compile(r"\bxox[abposrte]-[A-Za-z0-9-]{10,255}")),
    _Pattern("google_api_key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}")),
    _Pattern("huggingface_token", re.compile(r"\bhf_[A-Za-z0-9]{30,255}")),
    _Pattern("npm_token", re.compile(r"\bnpm_[A-Za-z0-9]{36,255}")),
    _Pattern(
        "bearer_token",
        re.compile(r"(?i)\bBearer\s+(?P<value>(?=[A-Za-z0-9._~+/=-]{0,4095}\d)[A-Za-z0-9._~+/=-]{16,4096})"),
        "value",
    ),
    _Pattern(
        "bearer_token",
        re.compile(
            r"(?i)\bAuthorization\s{0,4}:\s{0,4}(?:Basic|Bearer|Token)\s+(?P<value>[A-Za-z0-9._~+/=-]{8,4096})"
        ),
        "value",
    ),
    _Pattern(
        "url_password",
        re.compile(
            rf"\b[A-Za-z][A-Za-z0-9+.-]{{0,30}}://[^\s/:@]{{1,256}}:(?P<value>{_NOT_MARKER}[^\s/@]{{1,256}})@"
        ),
        "value",
    ),
    # A key word with a value: "api_key = abc123…", "AWS_SECRET_ACCESS_KEY=…", "token: …". The value must
    # look like a key (12+ characters with a digit), so "token: none" and "secret: yes" stay.
    _Pattern(
        "secret_value",
        re.compile(
            rf"(?i)(?<![A-Za-z0-9]){_KEY_WORDS}[\"']?\s{{0,4}}(?:[:=]|=>|:=)\s{{0,4}}[\"']?"
            rf"(?P<value>{_NOT_MARKER}(?=[A-Za-z0-9_\-./+=~]{{0,511}}\d)[A-Za-z0-9_\-./+=~]{{12,512}})"
        ),
        "value",
    ),
    # "password: hunter2", "pw=hunter2", "PASSWORD=…" (labelled, unquoted or quoted).
    _Pattern(
        "password",
        re.compile(
            rf"(?i)(?<![A-Za-z0-9]){_PASSWORD_WORDS}[\"']?\s{{0,4}}(?:[:=]|=>|:=)\s{{0,4}}[\"']?(?P<value>{_VALUE})"
        ),
        "value",
        prose_check=True,
    ),
    # "my password is hunter2", "the wifi password was Tr0ub4dor", "our admin passphrase is: x".
    _Pattern(
        "password",
        re.compile(
            rf"(?i)(?:(?:\A|(?<=[\n.!?]))\s{{0,3}}|\b(?:my|our|your|his|her|their|the|its|this|that|new|old)"
            rf"\s+(?:[\w'’-]{{1,30}}\s+){{0,2}}){_PASSWORD_WORDS}\s+(?:is|was|will\s+be|is\s+now|was\s+changed\s+to|changed\s+to|"
            rf"reads|=)\s*:?\s{{0,4}}[\"']?(?P<value>{_VALUE})"
        ),
        "value",
        prose_check=True,
        shape_check=True,
    ),
)

# Words that follow "password is" / "password:" in ordinary prose; such a value is not a secret.
_PROSE_WORDS: Final = frozenset(
    """
    a an the is was be been being not no none null nil n/a na tbd unknown empty blank set unset missing
    required optional incorrect wrong invalid correct valid right expired weak strong secure insecure
    reset changed saved stored encrypted hashed protected hidden redacted secret private same different
    too very still now already also just only really quite so long short case sensitive locked reused
    compromised leaked ok okay fine good bad great easy hard simple complex new old default temporary
    in on at of from with for to by about into as like than then there here where when which what who
    my your our their his her its it this that these those mine yours ours theirs
    and or but if because since until while
    being getting got gets get kept written needed necessary enough known shared public personal unique
    random generated best better worse safe unsafe safer stronger weaker manager managers field fields
    policy policies hint hints rule rules requirement requirements change update protection
    """.split()
)


def _is_prose(value: str) -> bool:
    word = value.strip(".,!?:;").lower()
    return not word or word in _PROSE_WORDS or len(word) < 3


def _looks_like_password(value: str, after: str) -> bool:
    """After "password is": a value with a digit, a symbol or an inner capital ("hunter2", "Tr0ub4dor&3",
    "zebraCrossing"); or a single plain word that ends the clause ("my password is swordfish."), not
    one that goes on as prose ("the wifi password is printed under the router")."""
    if any(ch.isdigit() or not ch.isalnum() for ch in value) or any(ch.isupper() for ch in value[1:]):
        return True
    if value.lower().endswith(("ed", "ing", "ly")):
        return False
    rest = after.lstrip(" \t")
    return not rest or rest[0] in ".,;!?)\n"


# Every pattern needs one of these; a text without any (most of them) costs a few substring scans. Matched
# against the lower-cased text (three times faster than IGNORECASE): the fixed prefixes and phrases are
# looked for as substrings, which takes far less than one regular expression with them all as
# alternatives (that tries each one at every position of a long text, such as a rendered recall block).
_TRIGGER_WORDS: Final = (
    "sk-", "sk_", "rk_", "akia", "asia", "agpa", "aida", "aroa", "anpa", "anva", "aipa", "ghp_", "gho_",
    "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "xox", "aiza", "hf_", "npm_", "eyj", "private key",
    "bearer", "authorization", "://",
)  # fmt: skip
# A credential word only where it labels a value ("password: …", "api_key=…", "pin is …"); tried only
# where one of ``_LABEL_STARTS`` occurs.
_LABEL: Final = re.compile(
    r"(?:pass(?:\s?word)?|pw|pin(?:\s?code)?|secret|token|key)[\w-]*[\"']?\s{0,4}"
    r"(?:[:=]|is\b|was\b|will\b|reads\b|changed\b)"
)
_LABEL_STARTS: Final = ("pass", "pw", "pin", "secret", "token", "key")


def _triggered(low: str) -> bool:
    """Whether the lower-cased text holds anything a pattern of ``_PATTERNS`` could match."""
    if any(word in low for word in _TRIGGER_WORDS):
        return True
    for start in _LABEL_STARTS:
        at = low.find(start)
        while at >= 0:
            if _LABEL.match(low, at):
                return True
            at = low.find(start, at + 1)
    return False


def find_secrets(text: str) -> list[SecretMatch]:
    """Every credential in ``text``, sorted by position, overlaps merged (the widest kind wins)."""
    if not isinstance(text, str) or not text or not _triggered(text.lower()):
        return []
    found: list[SecretMatch] = []
    for pattern in _PATTERNS:
        for match in pattern.regex.finditer(text):
            value = match.group(pattern.group)
            if not value:
                continue
            start, end = match.span(pattern.group)
            if pattern.prose_check:
                while end > start and text[end - 1] in ".!?:":  # the sentence's end is not the password's
                    end -= 1
                value = text[start:end]
                if _is_prose(value):
                    continue
                if pattern.shape_check and not _looks_like_password(value, text[end : end + 8]):
                    continue
            found.append(SecretMatch(pattern.kind, start, end))
    found.sort(key=lambda m: (m.start, -(m.end - m.start)))
    merged: list[SecretMatch] = []
    for item in found:
        if merged and item.start < merged[-1].end:
            last = merged[-1]
            if item.end > last.end:
                merged[-1] = SecretMatch(last.kind, last.start, item.end)
            continue
        merged.append(item)
    return merged


def contains_secret(text: str) -> bool:
    """True when ``text`` holds a credential ``find_secrets`` recognises."""
    return bool(find_secrets(text))


# Texts found to hold no credential (recall shows the same turns, dates and names again and again, and
# every envelope is redacted at the edge): a dict lookup instead of a scan. Bounded (cleared when full);
# only secret-free texts are kept, and ``forget_checked`` drops them (after a forget).
_CLEAN: dict[str, None] = {}
_CLEAN_MAX = 8192
_CLEAN_LONGEST = 2000


def forget_checked() -> None:
    """Drop the texts ``redact_secrets`` remembers as secret-free."""
    _CLEAN.clear()


def redact_secrets(text: str) -> str:
    """``text`` with every credential replaced by ``[REDACTED:<kind>]``; unchanged when there is none.

    Idempotent: redacting a redacted text changes nothing.
    """
    if not isinstance(text, str) or text in _CLEAN:
        return text
    matches = find_secrets(text)
    if not matches:
        if len(text) <= _CLEAN_LONGEST:
            if len(_CLEAN) >= _CLEAN_MAX:
                _CLEAN.clear()
            _CLEAN[text] = None
        return text
    parts: list[str] = []
    at = 0
    for item in matches:
        parts.append(text[at : item.start])
        parts.append(marker(item.kind))
        at = item.end
    parts.append(text[at:])
    return "".join(parts)


# Values ``redact_data`` returns as they are without looking further (most of a record's fields).
_PLAIN: Final = frozenset({int, float, bool, type(None)})


def redact_data(value: Any) -> Any:
    """``value`` (JSON-like: dicts, lists, tuples, strings) with every string redacted; other values and
    dict keys as they are. Returns the same object when nothing changed (no copy on the hot path)."""
    kind = type(value)
    if kind is str:  # a text known to be clean is a dict lookup, without a call
        return value if value in _CLEAN else redact_secrets(value)
    if kind in _PLAIN:
        return value
    if kind is dict or kind is list or kind is tuple:  # one pass; a copy only once something changed
        changed: Any = None
        for key, item in value.items() if kind is dict else enumerate(value):
            # A clean text or a plain value (most of a hit's metadata) is passed over without a call.
            inner = type(item)
            if (inner is str and item in _CLEAN) or inner in _PLAIN:
                continue
            new = redact_data(item)
            if new is not item:
                if changed is None:
                    changed = dict(value) if kind is dict else list(value)
                changed[key] = new
        if changed is None:
            return value
        return tuple(changed) if kind is tuple else changed
    if isinstance(value, str):
        return redact_secrets(value)
    if isinstance(value, Mapping):
        items = {key: redact_data(item) for key, item in value.items()}
        if all(items[key] is item for key, item in value.items()):
            return value
        return items
    if isinstance(value, list | tuple):
        redacted = [redact_data(item) for item in value]
        if all(new is old for new, old in zip(redacted, value, strict=True)):
            return value
        return redacted if isinstance(value, list) else tuple(redacted)
    return value


__all__ = [
    "MARKER_PREFIX",
    "SecretMatch",
    "contains_secret",
    "find_secrets",
    "forget_checked",
    "marker",
    "redact_data",
    "redact_secrets",
]
