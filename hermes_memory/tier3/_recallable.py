"""Vector hits mapped back to what may be recalled: chunks that still exist in Tier 2, facts believed
now; and the search that looks deeper while hidden facts fill the top hits."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from hermes_memory.records import Hit
from hermes_memory.tier2 import Tier2
from hermes_memory.tier2.chunks import ChunkRow
from hermes_memory.tier3._search_paths import Searchable
from hermes_memory.tier3.backend import VectorHit

if TYPE_CHECKING:  # numpy's exact index is imported when it is first built
    from hermes_memory.tier3._exact import ExactIndex

_T = TypeVar("_T")
# semantic_search over-fetches when archived/superseded facts fill the top hits, up to this many.
MAX_FETCH = 1000

#: Which of these fact uuids are believed now (``FactStore.active_uuids``, or recall's cached answer).
Believed = Callable[[Sequence[str]], Collection[str]]


def unit(score: float) -> float:
    """``score`` clipped to [0, 1] (``max(0.0, min(1.0, score))`` without two calls per hit)."""
    return score if 0.0 <= score <= 1.0 else (0.0 if score < 0.0 else 1.0)


def nearest(
    backend: Searchable,
    vector: Any,
    limit: int,
    wanted: Mapping[str, Any],
    keep: Callable[[list[VectorHit]], list[_T]],
    *,
    min_score: float = 0.0,
    fields: Sequence[str] | None = None,
    first: list[VectorHit] | None = None,
) -> list[_T]:
    """The first ``limit`` of the nearest hits that ``keep`` maps to recallable results (``first``:
    the search of ``limit`` hits, done already)."""
    cap = max(limit, MAX_FETCH)
    fetch = limit
    while True:
        if first is not None and fetch == limit:
            raw = first
        else:
            raw = backend.search(vector, limit=fetch, filters=wanted, fields=fields)
        out = keep([h for h in raw if h.score >= min_score])
        exhausted = len(raw) < fetch or fetch >= cap or (bool(raw) and raw[-1].score < min_score)
        if len(out) >= limit or exhausted:
            return out[:limit]
        # hidden facts (archived, superseded, expired) took some of the top hits: look further
        fetch = min(fetch * 4, cap)


def believed_values(
    index: ExactIndex,
    vector: Any,
    limit: int,
    wanted: Mapping[str, Any],
    first: list[tuple[str, float]],
    believed: Believed,
    fetched: int | None = None,
) -> list[tuple[str, float]]:
    """``nearest`` with ``believed_sources`` over the exact index's (source, score) values, without
    building hits: the first ``limit`` whose fact is believed now, searched 4x deeper (up to
    ``MAX_FETCH``) while hidden facts took some; ``first``: the ``fetched`` (default ``limit``) nearest,
    read already. Belief is asked about the nearest sources first, only as deep as it takes."""
    cap, fetch, values = max(limit, MAX_FETCH), fetched or limit, first
    kept_now: set[str] = set()
    checked: set[str] = set()
    while True:
        out = _first_believed(values, limit, believed, kept_now, checked)
        exhausted = len(values) < fetch or fetch >= cap or (bool(values) and values[-1][1] < 0.0)
        if len(out) >= limit or exhausted:
            return out[:limit]
        fetch = min(fetch * 4, cap)
        deeper = index.search_values(vector, {"fact": (fetch, wanted)}, "source_uuid")["fact"]
        if deeper is None:  # the view's filters need the loaded payloads (not the case for "fact")
            raise RuntimeError("the exact index could not read the fact view's values")
        values = deeper


def _first_believed(
    values: list[tuple[str, float]], limit: int, believed: Believed, kept_now: set[str], checked: set[str]
) -> list[tuple[str, float]]:
    """The ``values`` with a score >= 0 whose source is believed, in order (scores clipped to [0, 1]):
    at least the first ``limit`` of them, or all when there are fewer. ``believed`` is asked about the
    first ``limit`` values, then twice as many more each time while too few passed (a fact's belief costs
    a read of its row: most of a deep read's facts would never be looked at); ``kept_now`` and
    ``checked`` keep its answers (across the deeper searches of one ``believed_values``)."""
    kept = [(source, score) for source, score in values if score >= 0.0]
    out: list[tuple[str, float]] = []
    start, step = 0, max(limit, 1)
    while start < len(kept) and len(out) < limit:
        part = kept[start : start + step]
        fresh = list(dict.fromkeys(source for source, _ in part if source and source not in checked))
        if fresh:
            kept_now.update(believed(fresh))
            checked.update(fresh)
        out.extend((source, unit(score)) for source, score in part if source in kept_now)
        start, step = start + step, 2 * step
    return out


def recallable(tier2: Tier2, hits: Sequence[VectorHit]) -> list[Hit]:
    """The hits as Tier 2 chunk hits, less those whose chunk is gone or whose fact is not believed."""
    chunks = tier2.chunks.get_many([h.id.removeprefix("chunk:") for h in hits])
    hidden = hidden_facts(tier2, chunks.values())
    out: list[Hit] = []
    for h in hits:
        chunk = chunks.get(h.id.removeprefix("chunk:"))
        if chunk is None:  # deleted in Tier 2, vector delete still queued
            continue
        if chunk.source_kind == "fact" and chunk.source_uuid in hidden:
            continue  # archived, superseded or expired facts keep their vector but are not recalled
        out.append(chunk_hit(chunk, h.score, "tier3"))
    return out


def recallable_sources(tier2: Tier2, hits: Sequence[VectorHit]) -> list[tuple[str, float]]:
    """``recallable`` reduced to (source uuid or "", score) for hits carrying their ``source_kind`` and
    ``source_uuid``: the same hits survive. A chunk row is never updated (only inserted and deleted)
    and its vector payload is written from it, so the payload's kind, source and scope (which the
    search filtered on) are the row's; Tier 2 is asked only whether the row still exists (and facts
    whether they are believed)."""
    live = tier2.chunks.existing([h.id.removeprefix("chunk:") for h in hits])
    facts = [h.payload.get("source_uuid") for h in hits if h.payload.get("source_kind") == "fact"]
    believed = tier2.facts.active_uuids([str(f) for f in facts if f])
    out: list[tuple[str, float]] = []
    for h in hits:
        if h.id.removeprefix("chunk:") not in live:  # deleted in Tier 2, vector delete still queued
            continue
        source = str(h.payload.get("source_uuid") or "")
        if h.payload.get("source_kind") == "fact" and source not in believed:
            continue  # archived, superseded or expired facts keep their vector but are not recalled
        out.append((source, max(0.0, min(1.0, h.score))))
    return out


def live_chunks(tier2: Tier2, hits: Sequence[VectorHit]) -> list[tuple[str, float]]:
    """(chunk uuid, score) of the hits whose chunk still exists in Tier 2."""
    live = tier2.chunks.existing([h.id.removeprefix("chunk:") for h in hits])
    return [(u, unit(h.score)) for h in hits if (u := h.id.removeprefix("chunk:")) in live]


def believed_sources(tier2: Tier2, hits: Sequence[VectorHit], kind: str) -> list[tuple[str, float]]:
    """``recallable_sources`` for hits of one source kind whose chunks are known to exist (the exact
    index, just refreshed): only facts are checked, for whether they are believed now."""
    found = [(str(h.payload.get("source_uuid") or ""), unit(h.score)) for h in hits]
    if kind != "fact":
        return found
    believed = tier2.facts.active_uuids([source for source, _ in found if source])
    # archived, superseded or expired facts keep their vector but are not recalled
    return [(source, score) for source, score in found if source in believed]


def hidden_facts(tier2: Tier2, chunks: Iterable[ChunkRow]) -> set[str | None]:
    """Source uuids of fact chunks whose fact is not believed now (archived, superseded, expired)."""
    facts = [c.source_uuid for c in chunks if c.source_kind == "fact"]
    believed = tier2.facts.active_uuids([f for f in facts if f])
    return {f for f in facts if f not in believed}


def chunk_hit(chunk: ChunkRow, score: float, tier: str) -> Hit:
    sources = tuple(s for s in (chunk.source_uuid,) if s)
    return Hit(
        id=f"chunk:{chunk.uuid}",
        score=max(0.0, min(1.0, score)),
        text=chunk.text,
        tier=tier,
        kind=chunk.source_kind,
        timestamp=chunk.timestamp,
        source_ids=sources,
        metadata={
            "session_id": chunk.session_id,
            "source_type": chunk.source_type,
            "category": chunk.category,
            "chunk_index": chunk.chunk_index,
        },
    )


__all__ = [
    "MAX_FETCH",
    "Believed",
    "believed_sources",
    "believed_values",
    "chunk_hit",
    "hidden_facts",
    "live_chunks",
    "nearest",
    "recallable",
    "recallable_sources",
    "unit",
]
