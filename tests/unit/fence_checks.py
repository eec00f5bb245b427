"""What the fence tests call a fence tag and a role marker in what the model receives: written apart
from the code under test (``security.fence``), and broad (any case, blanks, separators, NFKC forms,
invisible characters dropped first)."""

from __future__ import annotations

import re
import unicodedata

_INVISIBLE = re.compile("[\u00ad\u200b-\u200f\u2060-\u2064\ufeff]")
FENCE_OPEN = re.compile(r"<\s*memory\s*[-_\s‐‑–—]?\s*context\s*>", re.IGNORECASE)
FENCE_CLOSE = re.compile(r"<\s*/\s*memory\s*[-_\s‐‑–—]?\s*context\s*>", re.IGNORECASE)
ROLE = re.compile(
    r"(?<![\w&])(?:system|developer|admin|administrator|operator|root|assistant|user|human)"
    r"(?:[ _-]+(?:note|notice|message|prompt|instructions?|override|update))?\s*:"
    r"|[\[(]\s*(?:system|developer|admin)[^\])\n]{0,20}[\])]"
    r"|<\s*\||\[/?INST\]|<<\s*/?\s*SYS|&lt;\s*\|"
    r"|(?:^|\n)\s*#{1,6}\s*(?:instructions?|system|response|input|human|assistant|developer)\b"
    r"|\[[^\]\n]{0,20}\]:\s*(?:#|<>|&lt;&gt;)",
    re.IGNORECASE,
)
# Hermes' own note and our header are the only authority lines allowed (they are not stored text).
HERMES_NOTE = re.compile(r"\[System note: The following is recalled memory context[^\]]*\]")


def plain(text: str) -> str:
    return unicodedata.normalize("NFKC", _INVISIBLE.sub("", text))


def fences(text: str) -> tuple[int, int]:
    shown = plain(text)
    return len(FENCE_OPEN.findall(shown)), len(FENCE_CLOSE.findall(shown))


def posing(text: str) -> list[str]:
    """Role markers in ``text`` not marked as quoted memory."""
    shown = HERMES_NOTE.sub("", plain(text))
    return [
        shown[max(0, m.start() - 20) : m.end() + 20]
        for m in ROLE.finditer(shown)
        if not shown[: m.start()].rstrip("# \t\n").endswith("[quoted]")
    ]
