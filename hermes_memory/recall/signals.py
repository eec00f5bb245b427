"""Why a hit ranked: the parts recall fused into its score, put on the returned hits' metadata as
``signals`` (for the memory browser and anyone reading a hit). Only the returned hits are looked at,
after the ranking: nothing here changes a score or the order.

The parts, each rounded to 3 places and only when not zero:

- ``keywords`` — full text (BM25 over turns, facts or indexed text), weighted;
- ``meaning`` — vector similarity (the turn, its window, the fact or the text), weighted;
- ``graph`` — the fact was reached from an entity the question names;
- ``context`` — a turn's priors beside its own match: the pull of the turns around it, the session it
  belongs to, what the question asks for (an answer, a date, a person), a replaced statement's penalty
  (negative when it was pushed down).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from hermes_memory.records import Hit, hit_of

# The tier that found a part -> what it is called on a hit.
_NAMES = {"tier2": "keywords", "tier3": "meaning", "graph": "graph"}


def explain(
    hits: Sequence[Hit],
    *,
    fact_parts: Mapping[str, Mapping[str, float]],
    chunk_parts: Mapping[str, Mapping[str, float]],
    rows: Mapping[str, int],
    turn_scores: Mapping[int, float],
    turn_vectors: Mapping[int, float],
    turn_priors: Mapping[int, float],
) -> list[Hit]:
    """``hits`` with ``metadata["signals"]`` set where recall kept parts for them (the turn candidates'
    own scores, their vector share and their scores after the priors, by the row id ``rows`` gives a
    turn's uuid; each fact's and indexed text's parts by tier)."""
    out = []
    for hit in hits:
        key = hit.id.partition(":")[2]
        signals: dict[str, Any] = {}
        if hit.kind == "episode" and key in rows:  # ``_rounded`` of its three parts, written out
            row = rows[key]
            own, vector = turn_scores.get(row, 0.0), turn_vectors.get(row, 0.0)
            if (r := round(own - vector, 3)) != 0:
                signals["keywords"] = r
            if (r := round(vector, 3)) != 0:
                signals["meaning"] = r
            if (r := round(turn_priors.get(row, own) - own, 3)) != 0:
                signals["context"] = r
        elif hit.kind in ("fact", "chunk"):
            found = (fact_parts if hit.kind == "fact" else chunk_parts).get(key, {})
            signals = _rounded({_NAMES.get(tier, tier): value for tier, value in found.items()})
        if signals:  # ``dataclasses.replace`` without its generic field walk
            hit = hit_of(hit.id, hit.score, hit.text, hit.tier, hit.kind, hit.timestamp, hit.source_ids,
                      {**hit.metadata, "signals": signals})  # fmt: skip
        out.append(hit)
    return out


def _rounded(parts: Mapping[str, float]) -> dict[str, Any]:
    return {name: r for name, value in parts.items() if (r := round(value, 3)) != 0}


__all__ = ["explain"]
