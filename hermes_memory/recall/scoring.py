"""Recall's score arithmetic: normalising a source's scores, adding them with weights (and each key's
share by tier), recency, and the diversity pass (``diversified``)."""

from __future__ import annotations

import heapq
import threading
from collections.abc import Sequence
from typing import Any

from hermes_memory.recall import present
from hermes_memory.recall.settings import RecallSettings


def believed_then(recorded_at: float | None, superseded_at: float | None, as_of: float) -> bool:
    if recorded_at is not None and recorded_at > as_of:
        return False
    return superseded_at is None or superseded_at > as_of


def recency_factor(when: float, now: float, st: RecallSettings) -> float:
    age_days = max(0.0, (now - when) / 86400.0)
    decay: float = 0.5 ** (age_days / st.recency_half_life_days)
    return 1.0 + st.recency_weight * decay


class RecencyAt(dict[float, float]):
    """``recency_factor`` by time at one ``now``, each time worked out when first asked (a session's
    turns share their time, a turn's facts its): ``recency_at[when]`` is a plain dict read once known."""

    def __init__(self, now: float, st: RecallSettings) -> None:
        super().__init__()
        self._now, self._settings = now, st

    def __missing__(self, when: float) -> float:
        value = self[when] = recency_factor(when, self._now, self._settings)
        return value


def minmax(scores: dict[Any, float]) -> dict[Any, float]:
    if not scores:
        return {}
    lo, hi = min(scores.values()), max(scores.values())
    if hi <= lo:
        return {k: 1.0 for k in scores}
    return {k: (v - lo) / (hi - lo) for k, v in scores.items()}


def floornorm(scores: dict[Any, float], floor: float) -> dict[Any, float]:
    """(s - floor) / (best - floor), clipped at 0; empty when nothing scores above the floor."""
    top = max(scores.values(), default=floor)
    if top <= floor:
        return {}
    span = top - floor
    return {k: scaled if (scaled := (v - floor) / span) > 0.0 else 0.0 for k, v in scores.items()}


def maxnorm(scores: dict[Any, float]) -> dict[Any, float]:
    top = max(scores.values(), default=0.0)
    return {k: v / top for k, v in scores.items()} if top > 0 else {}


def add(into: dict[Any, float], scores: dict[Any, float], weight: float) -> None:
    for key, value in scores.items():
        into[key] = into.get(key, 0.0) + weight * value


def add_part(
    into: dict[Any, float],
    parts: dict[Any, dict[str, float]],
    scores: dict[Any, float],
    weight: float,
    tier: str,
) -> None:
    """``add``, and each key's share by the tier that found it in ``parts``."""
    for key, value in scores.items():
        part = weight * value
        into[key] = into.get(key, 0.0) + part
        share = parts.get(key)
        if share is None:
            parts[key] = {tier: 0.0 + part}
        else:
            share[tier] = share.get(tier, 0.0) + part


def tier_of(parts: dict[str, float]) -> str:
    """The tier with the largest share (ties: the tier that added first)."""
    if len(parts) == 1:  # most candidates were found by one search
        for tier in parts:
            return tier
    return max(parts, key=parts.__getitem__)


def clip(x: float) -> float:
    return max(0.0, min(1.0, x))


def diversified(
    texts: Sequence[str],
    scores: Sequence[float],
    sessions: Sequence[Any],
    tiers: Sequence[str],
    weight: float,
    limit: int,
    same_session: float = 0.0,
    caps: dict[str, int] | None = None,
) -> list[tuple[int, float]]:
    """Greedy maximal-marginal-relevance order of a pool given as its hits' ``texts`` and ``scores`` (best
    first), their ``sessions`` and ``tiers``: the chosen positions in their order, each with the score it
    keeps (no higher than the one before, so scores still descend). ``same_session`` adds to the overlap
    of two hits from one conversation session (``sessions`` is read with it only); ``caps``: at most so
    many hits of each tier (``tiers`` is read with it only). Recall's pool is not built as hits: only the
    chosen become hits.

    Lazy greedy, plain Python: a hit's value (its score less ``weight`` times its largest word overlap
    with a chosen hit) only falls as hits are chosen, so the value it was last given is an upper bound.
    The best in the heap is brought up to date against the hits chosen since; it is taken when it is still
    the best (the first in rank order among equals, as a scan would take it), else it goes back. Only the
    overlaps of hits that reach the top are computed, each an AND of two word bit sets (``WordBits``,
    kept across recalls), and a recall that needs no vector never loads numpy."""
    n = len(texts)
    if not n or limit < 1:
        return []
    masks, sizes = _WORD_BITS.of(list(texts))
    if not same_session:
        sessions = [None] * n
    overlap = [0.0] * n
    heap = [(-score, i, 0) for i, score in enumerate(scores)]  # (-value, rank, chosen hits counted)
    heapq.heapify(heap)
    chosen: list[int] = []
    # The chosen hits' (mask, size, session), in the order chosen: what a hit brought up to date reads.
    taken: list[tuple[int, int, Any]] = []
    room = dict(caps) if caps is not None else None
    pop, push = heapq.heappop, heapq.heappush
    while heap and len(chosen) < limit:
        _, i, counted = pop(heap)
        if room is not None and room.get(tiers[i], 0) <= 0:
            continue  # its tier is full, and stays so
        if counted < len(chosen):
            mine, size, most = masks[i], sizes[i], overlap[i]
            session = sessions[i]  # None without ``same_session``: adding 0.0 to a share changes nothing
            for mask, other, where in taken[counted:]:
                common = (mask & mine).bit_count()
                value = common / (size + other - common or 1)
                if session is not None and session == where:
                    value += same_session
                if value > most:
                    most = value
            overlap[i] = most
            value = -(scores[i] - weight * most)
            if heap and (value, i) > heap[0][:2]:
                push(heap, (value, i, len(chosen)))
                continue
        chosen.append(i)
        taken.append((masks[i], sizes[i], sessions[i]))
        if room is not None:
            room[tiers[i]] -= 1
    out: list[tuple[int, float]] = []
    for i in chosen:
        score = scores[i]
        if out and score > out[-1][1]:
            score = out[-1][1]
        out.append((i, score))
    return out


class WordBits:
    """Each text's content words as the set bits of one integer, kept across recalls: two hits' shared
    words are then one AND and a bit count, and a text met again (the same turns come back recall after
    recall) costs a dict lookup, not a pass over its words.

    A bit stands for one word for as long as the masks built with it are kept: when the words seen pass
    ``max_words`` or the texts ``max_texts`` both are dropped together (at the start of a call, so one
    call's masks all share one numbering). That bounds the memory and the integers' width, which is
    what an AND and a bit count cost (measured: 4096 bits about 1.6x 2048, 2x 1024); a LoCoMo
    conversation's recalls see some 1,500 words."""

    def __init__(self, max_words: int = 2048, max_texts: int = 8192):
        self._max_words = max_words
        self._max_texts = max_texts
        self._bit: dict[str, int] = {}
        self._masks: dict[str, tuple[int, int]] = {}
        self._lock = threading.Lock()

    def of(self, texts: list[str]) -> tuple[list[int], list[int]]:
        """Each text's mask and how many content words it has."""
        masks: list[int] = []
        sizes: list[int] = []
        with self._lock:
            if len(self._bit) > self._max_words or len(self._masks) > self._max_texts:
                self._bit.clear()
                self._masks.clear()
            known = self._masks
            for text in texts:
                found = known.get(text)
                if found is None:
                    found = known[text] = self._mask(text)
                masks.append(found[0])
                sizes.append(found[1])
        return masks, sizes

    def _mask(self, text: str) -> tuple[int, int]:
        bit = self._bit
        words = present.content_words(text)
        mask = 0
        for word in words:
            flag = bit.get(word)
            if flag is None:
                flag = bit[word] = 1 << len(bit)
            mask |= flag
        return mask, len(words)


_WORD_BITS = WordBits()


__all__ = [
    "RecencyAt",
    "WordBits",
    "add",
    "add_part",
    "believed_then",
    "clip",
    "diversified",
    "floornorm",
    "maxnorm",
    "minmax",
    "recency_factor",
    "tier_of",
]
