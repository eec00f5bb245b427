"""FTS5 query building: user text is turned into quoted terms so it never reaches FTS as syntax."""

from __future__ import annotations

import re

# Words only: quotes, AND/OR/NOT/NEAR, '*', '-', ':', '^' and parentheses are dropped or quoted away.
_TOKEN = re.compile(r"\w+", re.UNICODE)
_STOPWORDS = frozenset(
    """a an and are as at be but by did do does for from had has have he her hers him his how i if in into
    is it its me my of on or our she so than that the their them then there these they this to too us
    was we were what when where which who whom why will with would you your""".split()
)
MAX_TERMS = 32


def fts_terms(query: str) -> list[str]:
    """The searchable terms of free text: word tokens, stop-words dropped (unless nothing else is left)."""
    tokens = [t.lower() for t in _TOKEN.findall(query)]
    content = [t for t in tokens if t not in _STOPWORDS]
    chosen = content or tokens
    seen: dict[str, None] = {}
    for token in chosen:
        seen.setdefault(token, None)
    return list(seen)[:MAX_TERMS]


def fts_match(query: str, *, mode: str = "or") -> str | None:
    """A safe FTS5 MATCH expression for free text, or None when the text has no searchable term.

    Every term is double-quoted, so FTS operators in user text are plain words.
    ``mode="and"`` requires every term; ``"or"`` ranks by how many match (BM25).
    """
    terms = fts_terms(query)
    if not terms:
        return None
    joiner = " AND " if mode == "and" else " OR "
    return joiner.join(f'"{term}"' for term in terms)


def bm25_to_score(rank: float) -> float:
    """Map FTS5 bm25() (lower = better, usually negative) onto (0, 1], higher = better."""
    positive = max(0.0, -rank)
    return positive / (1.0 + positive)
