"""Checks for text joined from pieces each scanned clean (recall's rendered lines), and the fence escape."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import cache, lru_cache
from typing import Final

from hermes_memory.security import fence
from hermes_memory.security.text_views import SEPARATORS, folded, skeleton, views_of
from hermes_memory.security.threat_patterns import checked_text, compiled_patterns
from hermes_memory.security.threats import neutralise, strip_invisible

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
# A part every match of a seam pattern holds, searched for before the pattern in a rendered block: it opens
# with a plain character class, which the regex engine skips to, while the pattern (an alternation under
# IGNORECASE) is tried at every position. A view without it cannot match. Compiled with the pattern's
# IGNORECASE (its letters match what the pattern's do). The secret's core runs to the pattern's end: its
# value of 20 characters without a space, which a quoted remark ('she said: "I went…') lacks.
_SEAM_CORES: Final[dict[str, re.Pattern[str]]] = {
    "hardcoded_secret": re.compile(r"[=:]\s*[\"'][A-Za-z0-9+/=_-]{20,}", re.IGNORECASE),
}
# Hermes wraps recalled memory in <memory-context>…</memory-context>: a tag inside it (any case, spacing,
# separator or full-width bracket) could close the fence early.
_FENCE_TAG: Final = re.compile(r"[<＜﹤]\s*/?\s*memory\s*[-_‐‑–—\s]?\s*context\s*[>＞﹥]", re.IGNORECASE)


def _seam_patterns() -> tuple[tuple[re.Pattern[str], tuple[tuple[str, ...], ...]], ...]:
    return tuple(
        (compiled, _SEAM_LITERALS[pattern.pattern_id])
        for compiled, pattern in compiled_patterns("strict")
        if pattern.pattern_id in _SEAM_LITERALS
    )


_seam_compiled = cache(_seam_patterns)


def escape_fence(text: str) -> str:
    """``text`` without anything that could open or close the ``<memory-context>`` fence.

    Raises ValidationError if ``text`` is not a str.
    """
    return _escape_fence(checked_text(text, "strict"), None)


def _escape_fence(text: str, folded_text: str | None) -> str:
    folded_text = folded(text) if folded_text is None else folded_text
    if "memory" not in folded_text or "context" not in folded_text:
        return text
    if not _FENCE_TAG.search(text):
        text = unicodedata.normalize("NFKC", strip_invisible(text))
    return _FENCE_TAG.sub("", text)


def neutralise_composed(text: str) -> str:
    """Make text that was joined from pieces each scanned clean (``is_clean``) safe for output, cheaply:
    only the patterns that can run over the template's punctuation are tried, and only when their
    literals occur; a match makes it ``neutralise`` the whole text. Then it is quoted (``fence.quote``:
    tags escaped, role markers marked).

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
    text = checked_text(text, "strict")
    folded_text = folded(text)
    for compiled, groups in _seam_compiled():
        if all(any(literal in folded_text for literal in group) for group in groups):
            views = views_of(unicodedata.normalize("NFKC", text))
            if any(compiled.search(view) for view, _ in views):
                return True
    return False


def composed_threat_lines(lines: Sequence[str]) -> bool:
    """``composed_threat("\\n".join(lines))``, from each line's folded text and views worked out once
    per line text (recall renders the same lines again and again). Every step of those (NFKC, the
    skeleton, the separators, case folding) maps a newline to itself and never combines it with the
    characters beside it, so the views of the block are the lines' views joined by newlines.

    No seam literal holds a newline, so one occurs in the block's folded text exactly when it occurs in
    a line's: which literals each line holds is kept with its views (a bit set), and the block's are
    their union. A pattern whose literals all occur is searched for in each distinct view of the block
    (the views are often equal: a plain line's NFKC and skeleton views are the same text).

    Raises ValidationError if a line is not a str.
    """
    parts = [_line_views(checked_text(line, "strict")) for line in lines]
    held = 0
    for part in parts:
        held |= part[3]
    views: list[str] | None = None
    for compiled, groups, core in _seam_gates():
        if all(held & group for group in groups):
            if views is None:
                views = _distinct_views(parts)
            if any((core is None or core.search(view)) and compiled.search(view) for view in views):
                return True
    return False


def _distinct_views(parts: Sequence[tuple[str, str, str, int]]) -> list[str]:
    """The block's three views (its lines' ``_line_views`` joined by newlines), each distinct text once,
    in the order they are searched: a search of a text already searched finds the same."""
    nfkc = "\n".join(part[0] for part in parts)
    look_alikes = "\n".join(part[1] for part in parts)
    separated = "\n".join(part[2] for part in parts)
    return list(dict.fromkeys((nfkc, look_alikes, separated)))


# Every seam literal, once: a line's literals are the bits of its ``_line_views`` set. None holds a newline
# (``test_composed_lines``), so the block holds one exactly when one of its lines does.
_LITERALS: Final[tuple[str, ...]] = tuple(
    dict.fromkeys(literal for groups in _SEAM_LITERALS.values() for group in groups for literal in group)
)


def _seam_gate_masks() -> tuple[tuple[re.Pattern[str], tuple[int, ...], re.Pattern[str] | None], ...]:
    """``_seam_patterns`` with each group of literals as a bit set over ``_LITERALS``, and the pattern's
    ``_SEAM_CORES`` entry (None when it has none)."""
    bit = {literal: 1 << i for i, literal in enumerate(_LITERALS)}
    return tuple(
        (
            compiled,
            tuple(sum(bit[literal] for literal in group) for group in _SEAM_LITERALS[pattern.pattern_id]),
            _SEAM_CORES.get(pattern.pattern_id),
        )
        for compiled, pattern in compiled_patterns("strict")
        if pattern.pattern_id in _SEAM_LITERALS
    )


_seam_gates = cache(_seam_gate_masks)


@lru_cache(maxsize=2048)
def _line_views(line: str) -> tuple[str, str, str, int]:
    """A line's three views (NFKC, skeleton, separated; equal when unchanged) and the seam literals its
    folded text holds (bit i: ``_LITERALS[i]``)."""
    normalised = unicodedata.normalize("NFKC", line)
    look_alikes_folded, _ = skeleton(normalised)
    folded_line = folded(line)
    held = sum(1 << i for i, literal in enumerate(_LITERALS) if literal in folded_line)
    return normalised, look_alikes_folded, look_alikes_folded.translate(SEPARATORS), held


__all__ = [
    "composed_threat",
    "composed_threat_lines",
    "escape_fence",
    "neutralise_composed",
]
