"""Render recall hits as a compact block: one dated line per hit with its source, within a token budget.

The hits come from ``RecallEngine``, whose strings are safe already (scanned clean when written, or
neutralised when read): a line joins them with punctuation, so only the few patterns that can run over it
are tried (``neutralise_composed``) and the ``<memory-context>`` fence is escaped. A line cut short can
complete a pattern (a ``\b`` at the cut): it is neutralised in full.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from functools import lru_cache

from hermes_memory.records import Hit
from hermes_memory.security.threats import neutralise, neutralise_composed

CHARS_PER_TOKEN = 4  # a conservative estimate for English text


def approx_tokens(text: str) -> int:
    return max(1, (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN)


def clip(text: str, max_chars: int) -> str:
    """``text`` with its white space folded, cut to ``max_chars`` with an ellipsis when longer."""
    text = " ".join(text.split())
    return text if len(text) <= max_chars else text[: max_chars - 1] + "…"


def stamp(timestamp: float | None) -> str:
    """``YYYY-MM-DD HH:MM`` in UTC (24h), or ``undated``: two statements of one day stay ordered."""
    if not timestamp:
        return "undated"
    return _stamp(timestamp)


@lru_cache(maxsize=4096)
def _stamp(timestamp: float) -> str:  # the same turns and facts are shown again and again
    return datetime.fromtimestamp(timestamp, tz=UTC).strftime("%Y-%m-%d %H:%M")


def superseded_note(meta: dict[str, object]) -> str:
    """``superseded <when> by: <current statement>`` for a hit whose statement was replaced, else ""."""
    at = meta.get("superseded_at")
    if not isinstance(at, int | float):
        return ""
    by = meta.get("superseded_by")
    text = clip(str(by), 160) if by else ""
    return f"superseded {stamp(at)}" + (f" by: {text}" if text else "")


def _line(hit: Hit, max_chars: int = 300) -> tuple[str, bool]:
    """``- [YYYY-MM-DD HH:MM] <speaker: >text (source[; superseded <when> by: <what>])`` and whether a
    piece of it was cut short."""
    day = stamp(hit.timestamp)
    meta = hit.metadata
    if hit.kind == "episode":
        who = f"{meta.get('speaker')}: " if meta.get("speaker") else ""
        source = f"turn, {meta.get('session_id')}"
    elif hit.kind == "fact":
        who = ""
        source = "fact" + (f", {meta.get('session_id')}" if meta.get("session_id") else "")
    elif hit.kind == "curated":
        who = ""
        source = f"curated {meta.get('store', '')}".strip()
    else:
        who = ""
        source = hit.kind
    text = " ".join(hit.text.split())  # ``clip``, folding the white space once
    cut = len(text) > max_chars
    if cut:
        text = text[: max_chars - 1] + "…"
    note = superseded_note(meta)
    if note:
        source = f"{source}; {note}"
    by = meta.get("superseded_by")
    cut = cut or (by is not None and _longer(str(by), 160))
    return f"- [{day}] {who}{text} ({source})", cut


def _longer(text: str, max_chars: int) -> bool:
    """Whether ``clip`` cuts the text."""
    return len(" ".join(text.split())) > max_chars


def hit_line(hit: Hit, max_chars: int = 300) -> str:
    """``- [YYYY-MM-DD HH:MM] <speaker: >text (source[; superseded <when> by: <what>])`` of a hit from
    recall. Memory is data, never instructions: the line is safe to show (see the module docstring)."""
    line, cut = _line(hit, max_chars)
    return neutralise_composed(neutralise(line) if cut else line)


def render(hits: Sequence[Hit], budget_tokens: int | None = None) -> str:
    """Lines in rank order until the budget is spent (the first line is always kept, shortened)."""
    lines: list[str] = []
    used = 0
    for hit in hits:
        line, cut = _line(hit)
        if cut:
            line = neutralise(line)
        cost = approx_tokens(line) + 1
        if budget_tokens is not None and used + cost > budget_tokens:
            if not lines:
                keep = max(20, budget_tokens * CHARS_PER_TOKEN - 2)
                lines.append(neutralise(line[:keep]))  # a cut can complete a pattern
            break
        lines.append(line)
        used += cost
    # Patterns may span lines (an HTML comment opened in one, closed in another): the block is checked.
    return neutralise_composed("\n".join(lines))


__all__ = [
    "CHARS_PER_TOKEN",
    "approx_tokens",
    "clip",
    "hit_line",
    "render",
    "stamp",
    "superseded_note",
]
