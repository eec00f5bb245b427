"""Recalled text quoted for the model: nothing in it can end the ``<memory-context>`` fence or pose as a
role marker (issue 14).

Hermes wraps the prefetch block in ``<memory-context>…</memory-context>`` and strips fence tags from it
in one pass, which a nested tag survives; the model also reads tool results. So every piece of stored
text that reaches the model is passed through ``quote``:

* every ``<`` (and its full-width and small forms, which NFKC folds to ``<``) becomes ``&lt;``, and the
  ``>`` that ends a tag-like span becomes ``&gt;``: no tag of any case, spacing or nesting survives, so
  no fence tag, chat-template token (``<|im_start|>``) or HTML comment can be formed, whatever a later
  pass removes. Only a ``<`` that cannot start a tag stays: before ``=``, ``-`` or a digit ("<= 50");
* a role marker (``System:``, ``[developer note]``, ``### Instruction:``, ``[INST]``, a chat-template
  token, a markdown ``[//]: #`` comment) is prefixed with ``[quoted]``, so it reads as quoted memory.

Detection (what is an injection) happens once, when text is written (``security.threats``, the
``threat`` verdicts); this module is the read path's cheap half: a membership test, then at most two
regex passes over text that has a ``<`` or a ``:``/``[``/``#``.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Final

MARK: Final = "[quoted] "
_MARKED: Final = MARK.rstrip()

# '<' in any form NFKC folds to it; escaping all of them is what makes a closing tag impossible.
_LT_FORMS: Final = ("<", "\uff1c", "\ufe64")
_TAG_SPAN: Final = re.compile(
    r"[<\uff1c\ufe64](?![=\-\d]|[ \t]+[\d=])([^<>\uff1c\uff1e\ufe64\ufe65\n]{0,256})[>\uff1e\ufe65]"
)
# Comparisons and arrows ("<= 50", "< 5", "<3", "<-") cannot start a tag: left as they are.
_LT: Final = re.compile(r"[<\uff1c\ufe64](?![=\-\d]|[ \t]+[\d=])")

_ROLE_WORDS: Final = frozenset(
    {"system", "developer", "admin", "administrator", "sysadmin", "operator", "root", "assistant", "user",
     "human", "ai"}
)  # fmt: skip
_HEADING_WORDS: Final = _ROLE_WORDS | {"instruction", "instructions", "response", "input", "prompt"}
_QUALIFIERS: Final = frozenset(
    {"note", "notice", "message", "msg", "prompt", "instruction", "instructions", "override", "update",
     "alert", "directive", "command", "mode", "reminder", "rule", "rules", "policy", "response", "input",
     "output", "turn"}
)  # fmt: skip
_COLON_WORDS: Final = _ROLE_WORDS | _QUALIFIERS
_ROLE_RE: Final = "|".join(sorted(_ROLE_WORDS, key=len, reverse=True))
_QUALIFIER_RE: Final = "|".join(sorted(_QUALIFIERS, key=len, reverse=True))
_HEADING_RE: Final = "|".join(sorted(_HEADING_WORDS, key=len, reverse=True))
# Role markers are found from the few characters they contain, each tried where it stands (``match``,
# never a scan): before a colon, the role word (and qualifier); after an opening bracket, a role word
# closed by a bracket or colon, [INST], or a markdown comment "[//]: #"; a markdown heading naming a role
# or an instruction; an escaped chat-template token (&lt;|...) or Llama's <<SYS>>.
_BEFORE_COLON: Final = re.compile(
    rf"(?<![\w&#])(?:{_ROLE_RE})(?:[ \t_-]+(?:{_QUALIFIER_RE}))?[ \t]*\Z", re.IGNORECASE
)
_AT_BRACKET: Final = re.compile(
    rf"[\[(\{{][ \t]*/?[ \t]*(?:(?:{_ROLE_RE})(?:[ \t_-]+(?:{_QUALIFIER_RE}))?[ \t]*[\])\}}:]|INST\])"
    r"|\[[^\]\n]{0,20}\]:[ \t]*(?:#|&lt;&gt;)",
    re.IGNORECASE,
)
_AT_HASH: Final = re.compile(
    rf"#{{1,6}}(?:[ \t]+(?:{_HEADING_RE})\b|[ \t]*(?:{_HEADING_RE})[ \t]*[:\uff1a])", re.IGNORECASE
)
_AT_AMP: Final = re.compile(r"&lt;(?:\s*\||&lt;\s*/?\s*SYS)", re.IGNORECASE)
_ANCHORS: Final = re.compile(r"[:\uff1a\[(\{#&]")
# Every role marker holds one of these (lower case): a role or heading word, "ai" next to its colon or
# bracket, an escaped token, [INST], a markdown comment's "]:".
_HINTS: Final = (
    *sorted(_HEADING_WORDS - {"ai", "instructions", "administrator", "sysadmin"} | {"instruction"}),
    "ai:", "ai :", "ai]", "ai)", "ai}", "ai\uff1a", "&lt;", "inst]", "]:",
)  # fmt: skip
_PUNCTUATION: Final = "*_~`>\"'([{"  # markdown emphasis and quotes a role word may stand in
_LOOKBACK: Final = 48  # longer than any role word, qualifier and the blanks between them


def _marker_at(text: str, anchor: int) -> int | None:
    """Where the role marker that ``text[anchor]`` belongs to starts, or None."""
    ch = text[anchor]
    if ch in ":\uff1a":
        head = text[max(0, anchor - _LOOKBACK) : anchor]
        words = head.rstrip(" \t").rsplit(None, 1)
        last = words[-1].replace("_", "-").rsplit("-", 1)[-1].lstrip(_PUNCTUATION).lower() if words else ""
        if last not in _COLON_WORDS:
            return None  # the word before the colon is no role word or qualifier: the cheap way out
        found = _BEFORE_COLON.search(head)
        if found is None:
            return None
        return anchor - len(head) + found.start()
    if ch in "[({":
        return anchor if _AT_BRACKET.match(text, anchor) else None
    if ch == "#":
        if anchor > 0 and not text[anchor - 1].isspace():
            return None
        return anchor if _AT_HASH.match(text, anchor) else None
    return anchor if _AT_AMP.match(text, anchor) else None


def escape_tags(text: str) -> str:
    """``text`` with every ``<`` escaped (``&lt;``) and the ``>`` of each tag-like span too."""
    if not any(form in text for form in _LT_FORMS):
        return text
    text = _TAG_SPAN.sub(lambda m: f"&lt;{m.group(1)}&gt;", text)
    return _LT.sub("&lt;", text)


def mark_roles(text: str) -> str:
    """``text`` with ``[quoted]`` before every role marker not marked yet (idempotent)."""
    lowered = text.lower()
    if not any(hint in lowered for hint in _HINTS):
        return text  # no role word, token or comment in it: the common case, a few substring tests
    starts: list[int] = []
    for anchor in _ANCHORS.finditer(text):
        start = _marker_at(text, anchor.start())
        if start is None or text[:start].rstrip("# \t").endswith(_MARKED):
            continue
        # "## System:" is one marker, found at its hashes and at its colon.
        if not starts or (start > starts[-1] and text[starts[-1] : start].strip("# \t")):
            starts.append(start)
    if not starts:
        return text
    parts: list[str] = []
    cursor = 0
    for start in starts:
        parts += (text[cursor:start], MARK)
        cursor = start
    parts.append(text[cursor:])
    return "".join(parts)


def quote(text: str) -> str:
    """Stored text as the model may see it: tags escaped, role markers marked. Idempotent."""
    if len(text) <= _CACHED_CHARS:
        return _quoted_cached(text)
    return _quoted(text)


def _quoted(text: str) -> str:
    return mark_roles(escape_tags(text))


# Recall renders the same lines again and again (a turn's line depends only on the turn): recent short
# ones are kept, as ``threats.neutralise`` keeps its results (at most 8192 x 4096 chars).
_CACHED_CHARS = 4096
_quoted_cached = lru_cache(maxsize=8192)(_quoted)


def quote_data(value: Any) -> Any:
    """``value`` (JSON-like) with every string ``quote``d; keys and non-strings unchanged."""
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, dict):
        return {key: quote_data(item) for key, item in value.items()}
    if isinstance(value, list):
        return [quote_data(item) for item in value]
    if isinstance(value, tuple):
        return tuple(quote_data(item) for item in value)
    return value


__all__ = ["MARK", "escape_tags", "mark_roles", "quote", "quote_data"]
