"""What the update decision learns from: the corpus counted more than once, the sets' pairs, and the
parts the bench holds out."""

from __future__ import annotations

from pathlib import Path

from hermes_memory.bench.updates import Pair
from hermes_memory.bench.updates_training import (
    UNTAUGHT_KINDS,
    counted,
    dealt,
    original,
    set_prefix,
    taught,
    without_sets,
)


def _pair(pair_id: str, kind: str = "cue", update: bool = True, family: str = "phone") -> Pair:
    return Pair(id=pair_id, family=family, kind=kind, update=update, earlier=[], later=[], raw={})


def test_a_counted_pair_comes_back_with_copies_that_name_it() -> None:
    pairs = counted([_pair("phone-01"), _pair("home-02", family="home")], 3)
    ids = ["phone-01", "phone-01~1", "phone-01~2", "home-02", "home-02~1", "home-02~2"]
    assert [p.id for p in pairs] == ids
    assert {original(p.id) for p in pairs} == {"phone-01", "home-02"}
    assert [p.family for p in pairs[3:]] == ["home"] * 3
    assert counted([_pair("a")], 1)[0].id == "a"


def test_families_and_sets_are_dealt_into_groups_none_empty() -> None:
    assert dealt(list("abcdefg"), 3) == [["a", "d", "g"], ["b", "e"], ["c", "f"]]
    assert dealt(["a", "b"], 12) == [["a"], ["b"]]
    assert dealt([], 4) == [[]]


def test_a_sets_event_told_as_an_ending_is_not_taught_and_everything_else_is() -> None:
    assert "event" in UNTAUGHT_KINDS
    pairs = [
        _pair("s:1", "event", update=True),
        _pair("s:2", "event", update=False),
        _pair("s:3", "cue", update=True),
        _pair("s:4", "unlabelled", update=True),
    ]
    assert [p.id for p in taught(pairs)] == ["s:2", "s:3", "s:4"]


def test_the_pairs_of_a_held_out_set_leave_the_training_pairs() -> None:
    fresh, blind = Path("data/updates_fresh.json"), Path("data/updates_blind.json")
    pairs = [_pair("home-01"), _pair(set_prefix(fresh) + "f-1"), _pair(set_prefix(blind) + "b-1")]
    assert [p.id for p in without_sets(pairs, [fresh])] == ["home-01", "updates_blind:b-1"]
    assert without_sets(pairs, []) == pairs
