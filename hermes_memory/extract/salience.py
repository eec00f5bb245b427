"""Salience on write (Engram): how much a memory stated by hand is worth keeping, in [0, 1], computed
once when it is written and stored as the fact's ``importance``.

Three parts, added and clamped:
- the wording (``classify.salience``: life events, decisions, preferences, emotion words, hedges and
  small talk), for the category the text suggests;
- explicit cues: "remember this", "don't forget", "important", "keep in mind", ... (+0.3), and emphasis
  (an exclamation mark, +0.05);
- novelty against the nearest memories already believed (the caller finds them): a statement that only
  repeats one (word overlap 1.0) loses 0.2, one with nothing near it gains 0.1.

Where it is used: recall ranks a fact by ``importance`` (its prior, ``RecallSettings.importance_weight``)
and ``prune`` archives facts whose decayed importance (cron/importance.py, which starts from this value)
falls below ``limits.prune_importance_threshold`` — a salient fact (>= 0.5) never decays that far.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from hermes_memory.extract import classify

_EXPLICIT = re.compile(
    r"\b(?:remember (?:this|that)|please remember|don'?t forget|do not forget|never forget|keep in mind|"
    r"make a note|note that|important|crucial|critical|must remember|for future reference)\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[a-z0-9]+")
_EXPLICIT_BONUS = 0.3
_EMPHASIS_BONUS = 0.05
_REPEAT_PENALTY = 0.2
_NOVEL_BONUS = 0.1


@dataclass(frozen=True, slots=True)
class Salience:
    """A write's salience and what it came from (``novelty`` None: nothing to compare with)."""

    score: float
    explicit: bool
    novelty: float | None


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if len(w) > 2}


def novelty(text: str, nearest: Sequence[str]) -> float | None:
    """1 minus the largest word overlap (Jaccard) between ``text`` and any of ``nearest`` (1.0: nothing
    near it); None for a text without words."""
    mine = _words(text)
    if not mine:
        return None
    if not nearest:
        return 1.0
    overlaps = (len(mine & other) / len(mine | other) for other in map(_words, nearest) if other)
    overlap = max(overlaps, default=0.0)
    return 1.0 - overlap


def write_salience(text: str, *, category: str | None = None, nearest: Sequence[str] = ()) -> Salience:
    """The salience of ``text`` written now, next to the ``nearest`` believed memories."""
    kind = category if category is not None else classify.category_for("", text)
    score = classify.salience(text, kind)
    explicit = bool(_EXPLICIT.search(text))
    if explicit:
        score += _EXPLICIT_BONUS
    if "!" in text:
        score += _EMPHASIS_BONUS
    new = novelty(text, nearest)
    if new is not None:
        score += _NOVEL_BONUS * new - _REPEAT_PENALTY * (1.0 - new)
    return Salience(round(max(0.05, min(1.0, score)), 3), explicit, None if new is None else round(new, 3))


__all__ = ["Salience", "novelty", "write_salience"]
