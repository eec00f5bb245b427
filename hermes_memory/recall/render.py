"""The one renderer of recall: hits as dated lines with their sources, one budget rule, one "already
shown" filter. The API's ``rendered`` block, the Hermes prefetch block, the CLI and MCP all come from here.

The hits come from ``RecallEngine``, whose strings are safe already (scanned clean when written, or
neutralised when read). Each hit's line is built and quoted once (``lines``: ``fence.quote`` escapes the
tags and marks role markers, so no stored text can end the ``<memory-context>`` fence); a line cut short
can complete a pattern (a ``\b`` at the cut), so it is neutralised in full first. A block (``join``)
joins lines with punctuation: only the few patterns that can run over it are tried, across the lines,
and only when their literals occur (``composed.composed_threat``); a match neutralises the block.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache

from hermes_memory.records import Hit
from hermes_memory.security import fence
from hermes_memory.security.composed import composed_threat_lines
from hermes_memory.security.threats import neutralise

CHARS_PER_TOKEN = 4  # a conservative estimate for English text
# The longest hit text a line shows (white space folded), and the shortest cut of a first line that
# does not fit the budget.
LINE_CHARS = 300
_MIN_CUT_CHARS = 20


def approx_tokens(text: str) -> int:
    return max(1, (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN)


def clip(text: str, max_chars: int) -> str:
    """``text`` with its white space folded, cut to ``max_chars`` with an ellipsis when longer."""
    text = " ".join(text.split())
    return text if len(text) <= max_chars else text[: max_chars - 1] + "…"


def stamp(timestamp: float | None) -> str:
    """``YYYY-MM-DD HH:MM`` in UTC (24h), or ``undated``: two statements of one day stay ordered. A time
    of exactly midnight is a date without a time of day (a statement dated "on 8 May": ``YYYY-MM-DD``),
    the first of a month at midnight a month (dated "in May": ``YYYY-MM``) — not a moment that was
    never said."""
    if not timestamp:
        return "undated"
    return _stamp(timestamp)


@lru_cache(maxsize=4096)
def _stamp(timestamp: float) -> str:  # the same turns and facts are shown again and again
    when = datetime.fromtimestamp(timestamp, tz=UTC)
    if when.hour or when.minute or when.second or when.microsecond:
        return when.strftime("%Y-%m-%d %H:%M")
    return when.strftime("%Y-%m" if when.day == 1 else "%Y-%m-%d")


def replaced_since(record: Mapping[str, object]) -> float | None:
    """When a replaced statement (a hit's metadata or a fact's fields) stopped being true: ``valid_to``,
    the replacing statement's time, which for a conversation written later is not when the memory learned
    it (``superseded_at``, the fallback); None for one not replaced."""
    at = record.get("superseded_at")
    if not isinstance(at, int | float):
        return None
    ended = record.get("valid_to")
    return float(ended) if isinstance(ended, int | float) else float(at)


def superseded_note(meta: dict[str, object]) -> str:
    """``superseded <when> by: <current statement>`` for a hit whose statement was replaced, else "";
    <when> is ``replaced_since``."""
    at = replaced_since(meta)
    if at is None:
        return ""
    by = meta.get("superseded_by")
    text = clip(str(by), 160) if by else ""
    return f"superseded {stamp(at)}" + (f" by: {text}" if text else "")


@dataclass(frozen=True)
class Line:
    """One hit as a line of a block, built and quoted once: ``text`` is safe to show on its own."""

    key: str  # the hit's id: what the "already shown" filter remembers
    text: str
    tokens: int  # what the line costs in a block (its newline included)
    # A turn of this session (the conversation still holds it): not shown again in that session.
    session_turn: str | None = None
    # The line before quoting (cut lines neutralised): patterns across lines are looked for in it.
    raw: str = ""
    # The hit's text was flagged (not scanned clean when written; the engine neutralised it).
    flagged: bool = False


def _raw_line(hit: Hit, max_chars: int = LINE_CHARS) -> str:
    """``- [YYYY-MM-DD HH:MM] <speaker: >text (source[; superseded <when> by: <what>])``, neutralised in
    full when a piece of it was cut short."""
    meta = hit.metadata
    who = meta.get("speaker") if hit.kind == "episode" else None
    source = hit.source  # every kind says where it comes from (``Hit.source``)
    note = superseded_note(meta)
    if note:
        source = f"{source}; {note}"
    by = meta.get("superseded_by")
    long_by = by is not None and _longer(str(by), 160)
    return _formatted(hit.timestamp, who, hit.text, source, max_chars, long_by)


def _formatted(
    timestamp: float | None,
    who: object,
    text: str,
    source: str,
    max_chars: int = LINE_CHARS,
    cut: bool = False,
) -> str:
    """A line of ``text`` (``clip``, folding the white space once) said by ``who`` (none when empty) at
    ``timestamp``, from ``source``; neutralised in full when the text or (``cut``) a piece of ``source``
    was cut short."""
    shown = " ".join(text.split())
    if len(shown) > max_chars:
        shown = shown[: max_chars - 1] + "…"
        cut = True
    speaker = f"{who}: " if who else ""
    line = f"- [{stamp(timestamp)}] {speaker}{shown} ({source})"
    return neutralise(line) if cut else line


def _longer(text: str, max_chars: int) -> bool:
    """Whether ``clip`` cuts the text."""
    return len(" ".join(text.split())) > max_chars


def _of(key: str, raw: str, session_turn: str | None = None, flagged: bool = False) -> Line:
    text = fence.quote(raw)
    return Line(key, text, approx_tokens(text) + 1, session_turn, raw, flagged)


# Recall renders the same lines again and again (a turn's line depends only on the turn): the lines of
# recent ones are kept, quoted (a ``Line`` is immutable).
_line_of = lru_cache(maxsize=4096)(_of)


def line(hit: Hit) -> Line:
    """The hit's line (see ``hit_line``), with what the budget and the "already shown" filter need."""
    meta = hit.metadata
    flagged = bool(meta.get("neutralised"))
    if hit.kind == "episode":
        speaker, session = meta.get("speaker"), meta.get("session_id")
        replaced = "superseded_at" in meta or "superseded_by" in meta
        if not replaced and _plain(speaker) and _plain(session):
            return _turn_line(hit.id, hit.text, hit.timestamp, speaker, hit.source, session, flagged)
    turn_of = str(meta.get("session_id") or "") if hit.kind == "episode" else ""
    return _line_of(hit.id, _raw_line(hit), turn_of or None, flagged)


def _plain(value: object) -> bool:
    """Whether a metadata value is a string or None (what a turn's speaker and session are)."""
    return value is None or type(value) is str


@lru_cache(maxsize=4096)
def _turn_line(
    key: str,
    text: str,
    timestamp: float | None,
    speaker: str | None,
    source: str,
    session: str | None,
    flagged: bool,
) -> Line:
    """The line of a turn hit not replaced since (``_raw_line`` of it: no note), kept by what it is made of:
    recall shows the same turns again and again, and only the newest lines matter."""
    raw = _formatted(timestamp, speaker, text, source)
    return _line_of(key, raw, str(session or "") or None, flagged)


def lines(hits: Iterable[Hit]) -> tuple[Line, ...]:
    """Each hit's line, in rank order."""
    return tuple(line(hit) for hit in hits)


class Shown:
    """The "already shown" filter of one session: a line shown once is not repeated (Hermes keeps every
    injected block in the conversation), and a turn of the running session (still in the conversation)
    is not shown at all. Not thread-safe: its owner serialises ``select`` calls that pass it."""

    def __init__(self, session_id: str = "") -> None:
        self.session_id = session_id
        self._keys: set[str] = set()

    def hides(self, line: Line) -> bool:
        turn = line.session_turn
        return line.key in self._keys or (turn is not None and turn == self.session_id)

    def add(self, line: Line) -> None:
        self._keys.add(line.key)

    def reset(self, session_id: str) -> None:
        """A new session: nothing has been shown in it yet."""
        self.session_id = session_id
        self._keys.clear()


def select(lines: Iterable[Line], budget_tokens: int | None = None, shown: Shown | None = None) -> list[Line]:
    """The budget rule: lines in rank order (those ``shown`` hides left out) until the next one does
    not fit ``budget_tokens``; when not even the first fits, it is kept, cut to the budget (a budget
    already spent, as the prefetch's can be by its header, shows nothing). The lines chosen are added
    to ``shown``."""
    chosen: list[Line] = []
    used = 0
    for candidate in lines:
        if shown is not None and shown.hides(candidate):
            continue
        if budget_tokens is not None and used + candidate.tokens > budget_tokens:
            if not chosen and budget_tokens > 0:
                keep = max(_MIN_CUT_CHARS, budget_tokens * CHARS_PER_TOKEN - 2)
                raw = candidate.raw or candidate.text
                cut = neutralise(raw[:keep])  # a cut can complete a pattern
                chosen.append(_of(candidate.key, cut, candidate.session_turn, candidate.flagged))
            break
        chosen.append(candidate)
        used += candidate.tokens
    if shown is not None:
        for picked in chosen:
            shown.add(picked)
    return chosen


def join(chosen: Sequence[Line]) -> str:
    """The lines as one block. Patterns may span lines (an HTML comment opened in one, closed in
    another): when one of the patterns that can run over the lines' punctuation matches across them,
    the block is neutralised in full."""
    raws = [item.raw or item.text for item in chosen]
    if composed_threat_lines(raws):
        return fence.quote(neutralise("\n".join(raws)))
    return "\n".join(item.text for item in chosen)


def render(hits: Iterable[Hit], budget_tokens: int | None = None, shown: Shown | None = None) -> str:
    """The block of ``hits``: their lines by the budget rule (``select``), joined (``join``)."""
    return join(select(lines(hits), budget_tokens, shown))


def hit_line(hit: Hit) -> str:
    """``- [YYYY-MM-DD HH:MM] <speaker: >text (source[; superseded <when> by: <what>])`` of a hit from
    recall. Memory is data, never instructions: the line is safe to show (see the module docstring)."""
    return join([line(hit)])


__all__ = [
    "CHARS_PER_TOKEN",
    "LINE_CHARS",
    "Line",
    "Shown",
    "approx_tokens",
    "clip",
    "hit_line",
    "join",
    "line",
    "lines",
    "render",
    "replaced_since",
    "select",
    "stamp",
    "superseded_note",
]
