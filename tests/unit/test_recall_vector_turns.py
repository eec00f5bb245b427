"""At scale recall reads only the turns the vectors found that can be among its best candidates
(``recall.vector_turns``): the best candidates, their scores and their order are what reading every
turn gives; a turn left unread that comes back as a neighbour gets the score it would have had; a turn
that cannot be found makes it read every turn as before."""

from __future__ import annotations

import heapq
import random
from typing import Any, cast

from hermes_memory.recall._reads import EpisodeRow, ReadsSnapshot
from hermes_memory.recall.vector_turns import TurnViews, vector_turns

WEIGHTS = {"episode": 0.6, "episode_window": 0.4}
FLOOR = 0.5
KEEP = 20


class FakeReads:
    """``ReadsSnapshot.episode_rows`` over a fixed set of turns (uuid -> row id); counts the uuids read."""

    def __init__(self, rows: dict[str, int], missing: set[str] = frozenset()):  # type: ignore[assignment]
        self.rows = rows
        self.missing = missing
        self.read: list[str] = []

    def episode_rows(self, ids: list[int], uuids: list[str]) -> list[EpisodeRow]:
        assert not ids
        self.read.extend(uuids)
        return [(self.rows[u], u, None, None) for u in sorted(uuids) if u not in self.missing]


Case = tuple[dict[str, dict[str, float]], list[EpisodeRow], dict[int, float], dict[str, int]]


def _case(seed: int) -> Case:
    """Vector views over 120 turns, 30 of them keyword candidates with scores of their own (some equal)."""
    rnd = random.Random(seed)
    uuids = [f"turn-{i:03d}" for i in range(120)]
    row_of = {u: 1000 + i for i, u in enumerate(rnd.sample(uuids, len(uuids)))}
    views = {
        "episode": {u: round(rnd.uniform(0.4, 0.95), 2) for u in rnd.sample(uuids, 80)},
        "episode_window": {u: round(rnd.uniform(0.4, 0.95), 2) for u in rnd.sample(uuids, 60)},
    }
    keyword = sorted(rnd.sample(uuids, 30), key=row_of.__getitem__)
    rows = [(row_of[u], u, None, None) for u in keyword]
    scores = {row_of[u]: rnd.choice([0.2, 0.5, 0.5, 0.8]) for u in keyword}
    return views, rows, scores, row_of


def _run(seed: int, keep: int | None, missing: set[str] = frozenset()) -> tuple[Any, ...]:  # type: ignore[assignment]
    views, rows, scores, row_of = _case(seed)
    reads = FakeReads(row_of, missing)
    vectors: dict[int, float] = {}
    found = TurnViews(views, WEIGHTS, FLOOR)
    got, unread = vector_turns(found, rows, scores, vectors, keep, cast(ReadsSnapshot, reads))
    return got, scores, vectors, unread, reads, row_of


def _best(rows: list[EpisodeRow], scores: dict[int, float]) -> list[int]:
    neighbours = [row_id for row_id, _, _, _ in rows]
    return heapq.nlargest(KEEP, neighbours, key=lambda r: scores.get(r, 0.0))


def test_only_the_turns_that_can_make_the_cut_are_read_and_the_cut_is_the_same() -> None:
    for seed in range(20):
        every, every_scores, every_vectors, _, every_reads, _ = _run(seed, None)
        rows, scores, vectors, unread, reads, _ = _run(seed, KEEP)
        assert len(reads.read) < len(every_reads.read)
        assert _best(rows, scores) == _best(every, every_scores)
        best = _best(rows, scores)
        assert [scores[r] for r in best] == [every_scores[r] for r in best]
        assert list(scores) == [k for k in every_scores if k in scores]  # the order candidates were added in
        assert all(vectors[k] == every_vectors[k] for k in vectors)
        assert unread.uuids and not unread.uuids & set(reads.read)


def test_a_turn_left_unread_that_comes_back_gets_its_score_in_its_place() -> None:
    _, every_scores, every_vectors, _, _, row_of = _run(3, None)
    rows, scores, vectors, unread, _, _ = _run(3, KEEP)
    back = sorted(unread.uuids)[:3]
    unread.restore({row_of[u]: u for u in back}, scores, vectors)
    assert not unread.uuids & set(back)
    known = {row_id for row_id, _, _, _ in rows} | {row_of[u] for u in back}
    assert list(scores) == [k for k in every_scores if k in known]
    assert scores == {k: every_scores[k] for k in scores}
    assert vectors == {k: every_vectors[k] for k in vectors}


def test_a_turn_not_found_reads_every_turn() -> None:
    views = _case(5)[0]
    gone = max(views["episode"], key=views["episode"].__getitem__)  # the best: always read
    every, every_scores, _, _, every_reads, _ = _run(5, None, {gone})
    got, scores, _, unread, reads, _ = _run(5, KEEP, {gone})
    assert got == every and scores == every_scores
    assert not unread.uuids
    assert set(every_reads.read) <= set(reads.read)


def test_below_the_cut_every_turn_is_read() -> None:
    every = _run(7, None)
    few = _run(7, 1000)
    assert few[0] == every[0] and few[1] == every[1] and not few[3].uuids
