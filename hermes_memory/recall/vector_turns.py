"""The turns the vector search found, added to a recall's turn candidates (``vector_turns``).

Turn candidates are keyed by row id, and the vector search names turns by uuid, so each turn it found
that the keyword side did not was read (row id and neighbours, ``RecallReads.episode_rows``) before the
candidates were ranked. At scale only the best ``scale_candidates`` go on, and most of the few hundred
turns the vectors found are not among them: reading each one cost a recall ~2-3 ms on a cold read cache
at 100k turns. So at scale the candidates are ranked first, with a turn not read yet counting for its
vector score alone (what it would count for once read), and only the turns that make the cut are read,
with each view's best turn (the one its scores are scaled against). Should any of those turns not be
found (deleted, or another scope's), every turn found is read as before: the candidates are the same.
A turn left unread that comes back as a neighbour of a candidate gets its score then (``Unread``).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from hermes_memory.recall._reads import EpisodeRow, ReadsSnapshot
from hermes_memory.recall.scoring import floornorm

#: The vector views that score turns.
VIEWS = ("episode", "episode_window")


@dataclass(frozen=True, slots=True)
class TurnViews:
    """What the vector search says of turns: each view's scores (uuid -> score; other views may be there
    too), the weight of each of ``VIEWS``, and the floor the scores are scaled from."""

    scores: dict[str, dict[str, float]]
    weights: dict[str, float]
    floor: float

    def found(self) -> set[str]:
        """The uuids of every turn the views found."""
        return set().union(*(self.scores[view] for view in VIEWS))

    def add(
        self,
        rows: list[EpisodeRow],
        turn_scores: dict[int, float],
        turn_vectors: dict[int, float],
        ids: dict[str, int] | None = None,
    ) -> list[EpisodeRow]:
        """Each view's scores of the turns with ``rows``, scaled against the best of them, added by row id
        into ``turn_scores`` and ``turn_vectors``; ``rows``. ``ids``: each of the rows' row id by its uuid,
        when the caller has it already."""
        if ids is None:
            ids = {uuid: row_id for row_id, uuid, _, _ in rows}
        floor = self.floor
        own, vector = turn_scores.get, turn_vectors.get
        row_of = ids.get
        for view in VIEWS:
            scores = self.scores[view]
            # The turns read, in the view's order, each looked up once: (row id, score).
            read = [(row_id, score) for uuid, score in scores.items() if (row_id := row_of(uuid)) is not None]
            top = max([score for _, score in read], default=floor)  # the best of those read
            if top <= floor:
                continue
            weight, span = self.weights[view], top - floor  # ``floornorm`` and ``add``, in one pass
            for row_id, score in read:
                scaled = (score - floor) / span
                part = weight * (scaled if scaled > 0.0 else 0.0)  # ``max(0.0, scaled)``
                turn_scores[row_id] = own(row_id, 0.0) + part
                turn_vectors[row_id] = vector(row_id, 0.0) + part
        return rows


@dataclass
class Unread:
    """The turns the vector search found that were left unread (not among the best candidates), and what
    gives them their scores should one come back as a neighbour of a candidate: the scores before the
    vectors' were added, the views, and the rows read."""

    uuids: set[str] = field(default_factory=set)
    before: tuple[dict[int, float], dict[int, float]] = field(default_factory=lambda: ({}, {}))
    views: TurnViews | None = None
    rows: list[EpisodeRow] = field(default_factory=list)

    def restore(
        self, uuid_of: dict[int, str], turn_scores: dict[int, float], turn_vectors: dict[int, float]
    ) -> None:
        """When any of the turns ``uuid_of`` names (row id -> uuid) was left unread: ``turn_scores`` and
        ``turn_vectors`` added up again with it read, so they hold what they would hold had every turn
        been read (the same values, in the same order), for the turns read."""
        back = [(row_id, uuid, None, None) for row_id, uuid in uuid_of.items() if uuid in self.uuids]
        if not back or self.views is None:
            return
        self.uuids.difference_update(uuid for _, uuid, _, _ in back)
        self.rows = [*self.rows, *back]
        for into, before in zip((turn_scores, turn_vectors), self.before, strict=True):
            into.clear()
            into.update(before)
        self.views.add(self.rows, turn_scores, turn_vectors)


def vector_turns(
    views: TurnViews,
    rows: list[EpisodeRow],
    turn_scores: dict[int, float],
    turn_vectors: dict[int, float],
    keep: int | None,
    reads: ReadsSnapshot,
) -> tuple[list[EpisodeRow], Unread]:
    """``rows`` (the keyword side's candidates) with the rows of the turns the vector views found, their
    scaled scores added into ``turn_scores`` and ``turn_vectors`` (by row id); with ``keep`` (at scale),
    only the turns that can be among the best ``keep`` candidates are read, the others left ``Unread``."""
    ids = {uuid: row_id for row_id, uuid, _, _ in rows}
    fresh = sorted(views.found() - ids.keys())
    if keep is not None and fresh and len(rows) + len(fresh) > keep:
        picked, left = _best(views, rows, fresh, turn_scores, keep)
        found = reads.episode_rows([], picked)
        if len(found) == len(picked):
            unread = Unread(left, (dict(turn_scores), dict(turn_vectors)), views, [*rows, *found])
            return views.add(unread.rows, turn_scores, turn_vectors), unread
        # A turn not found: the candidates as if every turn were read.
    found = reads.episode_rows([], fresh) if fresh else []
    # The rows found are of turns not among ``rows``: their uuids are new keys of ``ids``.
    ids.update({uuid: row_id for row_id, uuid, _, _ in found})
    return views.add([*rows, *found], turn_scores, turn_vectors, ids), Unread()


def _best(
    views: TurnViews, rows: list[EpisodeRow], fresh: list[str], turn_scores: dict[int, float], keep: int
) -> tuple[list[str], set[str]]:
    """The turns of ``fresh`` to read: those among the best ``keep`` candidates (ranked as the engine
    ranks them once read: the keyword rows first, then these by uuid; equal scores in that order) and
    each view's best turn (the one its scores are scaled against); and the others."""
    # Every candidate by its key (a row id, or the uuid of a turn not read), in the engine's order.
    scores: dict[int | str, float] = {row_id: turn_scores.get(row_id, 0.0) for row_id, _, _, _ in rows}
    scores.update(dict.fromkeys(fresh, 0.0))
    known = {uuid: row_id for row_id, uuid, _, _ in rows}
    for view in VIEWS:  # ``TurnViews.add``'s sums, in its order
        weight = views.weights[view]
        for uuid, value in floornorm(views.scores[view], views.floor).items():
            key = known.get(uuid, uuid)
            scores[key] += weight * value
    best = set(heapq.nlargest(keep, scores, key=scores.__getitem__))
    best.update(max(views.scores[view], key=views.scores[view].__getitem__) for view in VIEWS
                if views.scores[view])  # fmt: skip
    return [u for u in fresh if u in best], {u for u in fresh if u not in best}


__all__ = ["VIEWS", "TurnViews", "Unread", "vector_turns"]
