"""Fusion of several recalls' ranked hits (query decomposition, ``llm.query_decomposition``): interleaved
by rank.

Ranks, not scores: the engine scales each recall against its own best candidate, so every list's first
hit scores near 1 however well it answers — scores of different queries do not compare, their ranks do.
And not a sum of reciprocal ranks (RRF): sub-queries of one question all name the same people, so the
hits many lists share are those people's generic turns, while the evidence each part looks for tops one
list only (on a two-part list question RRF put the person's "My hobbies changed a lot" above the violin
lesson that only the second part found). So each hit ranks by its best rank in any list — the lists are
interleaved, the question's own first — and among hits of the same best rank, the one more lists found
comes first. Each hit keeps its record (kind, tier, source); its score becomes the best score of the
lists divided by its best rank, so scores stay in [0, 1] and in rank order.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from hermes_memory.records import Hit


def fuse(lists: Sequence[Sequence[Hit]], *, limit: int, per_tier: int | None = None) -> list[Hit]:
    """The hits of ``lists`` interleaved by rank (see the module doc), each once (the record of its
    best-ranked appearance), ``limit`` in all or with ``per_tier`` at most that many of each tier."""
    best: dict[str, tuple[int, Hit]] = {}  # id -> (its best rank, the hit at that rank)
    found_by: dict[str, int] = {}
    for hits in lists:
        for rank, hit in enumerate(hits, start=1):
            found_by[hit.id] = found_by.get(hit.id, 0) + 1
            if hit.id not in best or rank < best[hit.id][0]:
                best[hit.id] = (rank, hit)
    # Stable: among equals, the first seen (the question's list, then the sub-queries in order).
    order = sorted(best, key=lambda hit_id: (best[hit_id][0], -found_by[hit_id]))
    top = max((hit.score for hits in lists for hit in hits), default=0.0)
    out: list[Hit] = []
    taken: dict[str, int] = {}
    for hit_id in order:
        rank, hit = best[hit_id]
        if per_tier is not None:
            taken[hit.tier] = taken.get(hit.tier, 0) + 1
            if taken[hit.tier] > per_tier:
                continue
        elif len(out) == limit:
            break
        out.append(dataclasses.replace(hit, score=top / rank))
    return out


__all__ = ["fuse"]
