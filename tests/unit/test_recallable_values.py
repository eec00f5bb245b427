"""The exact index's fact values kept to those believed now (``tier3._recallable``): the same first
``limit`` as checking every value, with belief asked about only as many of the nearest as it takes."""

from __future__ import annotations

import random
from collections.abc import Collection, Sequence

from hermes_memory.tier3 import _recallable


def _values(n: int, seed: int) -> list[tuple[str, float]]:
    rnd = random.Random(seed)
    scores = sorted((rnd.random() for _ in range(n)), reverse=True)
    return [("" if i % 17 == 5 else f"f{i % (n - 3)}", s) for i, s in enumerate(scores)]  # some repeat


def test_the_first_believed_are_those_a_check_of_every_value_keeps() -> None:
    for seed in range(40):
        rnd = random.Random(seed)
        values = _values(rnd.randint(1, 400), seed)
        hidden_share = rnd.choice((0.0, 0.1, 0.5, 0.9, 1.0))
        believed_set = {s for s, _ in values if s and rnd.random() >= hidden_share}
        limit = rnd.choice((1, 5, 100, 500))
        asked: list[str] = []

        def believed(
            uuids: Sequence[str], _b: set[str] = believed_set, _a: list[str] = asked
        ) -> Collection[str]:
            _a.extend(uuids)
            return [u for u in uuids if u in _b]

        got = _recallable._first_believed(values, limit, believed, set(), set())
        expected = [(s, _recallable.unit(v)) for s, v in values if s in believed_set]
        assert got[:limit] == expected[:limit], seed
        assert len(asked) == len(set(asked)) and "" not in asked  # each source asked about once


def test_belief_is_asked_about_the_nearest_first_and_no_deeper_than_needed() -> None:
    values = [(f"f{i}", 1.0 - i / 1000) for i in range(400)]
    asked: list[list[str]] = []

    def all_believed(uuids: Sequence[str]) -> Collection[str]:
        asked.append(list(uuids))
        return uuids

    got = _recallable._first_believed(values, 100, all_believed, set(), set())
    assert got[:100] == values[:100] and asked == [[f"f{i}" for i in range(100)]]

    asked.clear()
    hidden = {f"f{i}" for i in range(0, 400, 2)}  # every other fact hidden: two more reads, deeper each time

    def half_believed(uuids: Sequence[str]) -> Collection[str]:
        asked.append(list(uuids))
        return [u for u in uuids if u not in hidden]

    got = _recallable._first_believed(values, 100, half_believed, set(), set())
    assert got[:100] == [v for v in values if v[0] not in hidden][:100]
    assert [len(a) for a in asked] == [100, 200]
