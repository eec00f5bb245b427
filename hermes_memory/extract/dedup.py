"""Exact and near-duplicate tests for fact texts.

Exact: SHA-256 of the normalised content (NFKC, case-folded, punctuation removed, whitespace
collapsed), so "Caroline moved to Boston." and "caroline moved to  boston" share one hash.

Near: token Jaccard >= NEAR_DUPLICATE_THRESHOLD (0.8) over content tokens (filler words such as
"really", "so", "the" are ignored), with two vetoes that keep different facts apart even when
most words agree: the numbers (dates, counts) must be the same, and both texts must agree on
negation. 0.8 merges rewordings like "Caroline really loves hiking" / "Caroline loves hiking"
but keeps "Caroline moved to Boston" and "Caroline moved to Denver" apart (Jaccard 0.5).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import replace

from hermes_memory.extract.types import ExtractedFact

NEAR_DUPLICATE_THRESHOLD = 0.8

_PUNCT = re.compile(r"[^\w\s]+")
_SPACE = re.compile(r"\s+")
_IGNORED = frozenset(
    "a an the really so very just also too totally truly actually quite pretty such some".split()
)
_NEGATIONS = frozenset({"not", "never", "no", "nt", "dont", "doesnt", "didnt", "isnt", "wasnt", "cant"})


def normalize_content(text: str) -> str:
    """Lower-case, punctuation-free, single-spaced form of a text (the hash input)."""
    folded = unicodedata.normalize("NFKC", text).casefold().replace("'", "").replace("’", "")
    return _SPACE.sub(" ", _PUNCT.sub(" ", folded)).strip()


def content_hash(text: str) -> str:
    """SHA-256 hex digest of the normalised text."""
    return hashlib.sha256(normalize_content(text).encode("utf-8")).hexdigest()


def content_tokens(text: str) -> frozenset[str]:
    """The tokens compared by the near-duplicate test."""
    return frozenset(t for t in normalize_content(text).split() if t not in _IGNORED)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """|a ∩ b| / |a ∪ b| (1.0 for two empty sets)."""
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def is_near_duplicate(a: str, b: str, threshold: float = NEAR_DUPLICATE_THRESHOLD) -> bool:
    """Whether two fact texts say the same thing (see module docstring for the vetoes)."""
    ta, tb = content_tokens(a), content_tokens(b)
    if {t for t in ta if t.isdigit()} != {t for t in tb if t.isdigit()}:
        return False
    if bool(ta & _NEGATIONS) != bool(tb & _NEGATIONS):
        return False
    return jaccard(ta, tb) >= threshold


def find_near_duplicate(
    content: str,
    candidates: Iterable[tuple[str, str]],
    threshold: float = NEAR_DUPLICATE_THRESHOLD,
) -> str | None:
    """The id of the first (id, content) candidate that near-duplicates ``content``, or None."""
    for candidate_id, text in candidates:
        if is_near_duplicate(content, text, threshold):
            return candidate_id
    return None


def merge_facts(
    facts: Sequence[ExtractedFact],
    threshold: float = NEAR_DUPLICATE_THRESHOLD,
) -> tuple[ExtractedFact, ...]:
    """Collapse exact and near-duplicate facts, keeping order of first appearance.

    The survivor of a group is its most informative member (structured object, then higher
    confidence, then longer text); it takes the group's highest confidence and salience.
    """
    kept: list[ExtractedFact] = []
    for fact in facts:
        for i, other in enumerate(kept):
            if fact.content_hash == other.content_hash or (
                fact.subject == other.subject and is_near_duplicate(fact.content, other.content, threshold)
            ):
                kept[i] = _merge(other, fact)
                break
        else:
            kept.append(fact)
    return tuple(kept)


def _merge(a: ExtractedFact, b: ExtractedFact) -> ExtractedFact:
    def rank(f: ExtractedFact) -> tuple[bool, float, int]:
        return f.object is not None, f.confidence, len(f.content)

    best, other = (a, b) if rank(a) >= rank(b) else (b, a)
    return replace(
        best,
        confidence=max(best.confidence, other.confidence),
        salience=max(best.salience, other.salience),
        when=best.when or other.when,
    )


__all__ = [
    "NEAR_DUPLICATE_THRESHOLD",
    "content_hash",
    "content_tokens",
    "find_near_duplicate",
    "is_near_duplicate",
    "jaccard",
    "merge_facts",
    "normalize_content",
]
