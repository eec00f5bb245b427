"""Reciprocal-rank fusion of several recalls' ranked hits (query decomposition, ``llm.query_decomposition``).

Ranks, not scores: the engine scales each recall against its own best candidate, so every list's first
hit scores near 1 however well it answers — scores of different queries do not compare, their ranks do.
A hit at rank r (from 1) of a list adds ``1 / (k + r)``; hits found by several lists rise. Each hit keeps
its record (kind, tier, source); its score becomes the fused one scaled so that the first hit keeps the
best score any list gave, which keeps scores in [0, 1] and in rank order (the prefetch's relative floor
and the renderer read them).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from hermes_memory.records import Hit


def fuse(lists: Sequence[Sequence[Hit]], *, k: float, limit: int, per_tier: int | None = None) -> list[Hit]:
    """The hits of ``lists`` in reciprocal-rank order (ties: first seen first), each once (the record of
    its best-ranked appearance), ``limit`` in all or with ``per_tier`` at most that many of each tier."""
    fused: dict[str, float] = {}
    record: dict[str, tuple[int, Hit]] = {}  # id -> (its best rank, the hit at that rank)
    for hits in lists:
        for rank, hit in enumerate(hits, start=1):
            fused[hit.id] = fused.get(hit.id, 0.0) + 1.0 / (k + rank)
            if hit.id not in record or rank < record[hit.id][0]:
                record[hit.id] = (rank, hit)
    order = sorted(fused, key=lambda hit_id: -fused[hit_id])  # stable: first seen first among equals
    if not order:
        return []
    top = max(hit.score for hits in lists for hit in hits)
    scale = top / fused[order[0]]
    out: list[Hit] = []
    taken: dict[str, int] = {}
    for hit_id in order:
        hit = record[hit_id][1]
        if per_tier is not None:
            taken[hit.tier] = taken.get(hit.tier, 0) + 1
            if taken[hit.tier] > per_tier:
                continue
        elif len(out) == limit:
            break
        out.append(dataclasses.replace(hit, score=min(1.0, fused[hit_id] * scale)))
    return out


__all__ = ["fuse"]
