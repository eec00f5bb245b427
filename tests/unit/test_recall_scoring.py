"""recall.scoring: the score arithmetic recall fuses its sources with."""

from __future__ import annotations

from hermes_memory.recall.scoring import add, add_floornormed, floornorm


def test_add_floornormed_is_floornorm_added_to_each() -> None:
    scores = {1: 0.62, 2: 0.91, 3: 0.48, 4: 0.75}
    for floor in (0.0, 0.5, 0.7):
        expected_a: dict[int, float] = {1: 0.3, 9: 1.0}
        expected_b: dict[int, float] = {}
        add(expected_a, floornorm(scores, floor), 0.4)
        add(expected_b, floornorm(scores, floor), 0.4)
        into_a: dict[int, float] = {1: 0.3, 9: 1.0}
        into_b: dict[int, float] = {}
        add_floornormed(scores, floor, 0.4, into_a, into_b)
        assert into_a == expected_a and into_b == expected_b  # the same floats, not just close ones
    # Nothing above the floor adds nothing (not even zeros).
    untouched: dict[int, float] = {}
    add_floornormed(scores, 0.95, 0.4, untouched)
    add_floornormed({}, 0.5, 0.4, untouched)
    assert untouched == {}
