"""The update decision past the readings: a replacement without evidence of a change, and a past event
read as the end of what it names or as an episode of it.

The sentences here are written for these tests; none is taken from the labelled corpus.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from hermes_memory.updates.detector import UpdateDetector
from hermes_memory.updates.model import (
    FEATURES,
    UNEVIDENCED_NEVER,
    Cues,
    UpdateModel,
    ended,
    episode_of,
    evidence,
    features,
    packaged,
)
from hermes_memory.updates.statement import read


def _alike(texts: Sequence[str]) -> np.ndarray:  # every text the same in meaning
    return np.tile(np.eye(1, 384, dtype=np.float32), (len(texts), 1))


def _axis(i: int) -> np.ndarray:
    row: np.ndarray = np.eye(1, 384, i, dtype=np.float64)[0]
    return row


def _detector(monkeypatch: pytest.MonkeyPatch, chance: float, unevidenced: float) -> UpdateDetector:
    detector = UpdateDetector(_alike)
    monkeypatch.setattr(detector, "features", lambda *_: [chance])
    monkeypatch.setattr(detector.model, "probability", lambda x: x[0])
    monkeypatch.setattr(detector.model, "unevidenced", unevidenced)
    monkeypatch.setattr(detector, "says_change", lambda *_: False)  # no cue, no shape, no ending
    return detector


def test_without_evidence_only_a_probability_above_the_bar_replaces(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same frame with another value ("I host my podcast on Buzzsprout", then "... on Transistor")
    carries no change cue and no one-valued shape: it replaces the earlier statement only when the
    model is surer than of any statement the fit knew to be no update."""
    old = read("I host my podcast on Buzzsprout")
    new = read("I host my podcast on Transistor, with the premium plan")
    assert [r.index for r in _detector(monkeypatch, 0.8, 0.5).replaced(new, [old])] == [0]
    assert _detector(monkeypatch, 0.4, 0.5).replaced(new, [old]) == []
    assert _detector(monkeypatch, 0.99, UNEVIDENCED_NEVER).replaced(new, [old]) == []


def test_without_evidence_what_is_barred_is_never_replaced(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two one-valued attributes with different nouns are not one attribute, however sure the model."""
    old = read("My tablet is an iPad Air")
    new = read("My watch is a Garmin Venu")
    assert _detector(monkeypatch, 0.99, 0.1).replaced(new, [old]) == []


def test_the_bar_and_the_ending_direction_survive_a_round_trip() -> None:
    model = packaged()
    model.unevidenced = 0.42
    model.cues.ending = [0.5] * 384
    again = UpdateModel.from_dict(model.to_dict())
    assert again.unevidenced == pytest.approx(0.42)
    assert again.cues.ending == [0.5] * 384
    older = {k: v for k, v in model.to_dict().items() if k not in ("unevidenced", "ending_direction")}
    old = UpdateModel.from_dict(older)  # a model fitted before either existed
    assert old.unevidenced == UNEVIDENCED_NEVER
    assert old.cues.ending == []


def test_past_events_are_read_as_endings_along_a_learned_direction() -> None:
    """Endings lie along one direction, everyday episodes along another, real talk's events along a
    third: the direction fitted on them tells an ending from an episode; without an ending among them
    there is no direction, and every event that names the old value counts (``ends`` is 1)."""
    cues = Cues()
    assert cues.ends(_axis(0)) == 1.0
    told = [(_axis(0) + 0.1 * _axis(5 + i), True) for i in range(6)]
    told += [(_axis(1) + 0.1 * _axis(20 + i), False) for i in range(6)]
    cues.fit_ending(told, [_axis(2) + 0.1 * _axis(40 + i) for i in range(30)])
    assert cues.ends(_axis(0)) > 0
    assert cues.ends(_axis(1)) < 0
    assert cues.ends(_axis(2)) < 0
    cues.fit_ending([(_axis(1), False)])
    assert cues.ending == []


def test_an_episode_of_the_old_value_is_no_ending_feature() -> None:
    """ "Parked the Octavia outside the gym" names the car and is told in the past, as "Sold the Octavia"
    is: the decision sees an ending only where the clause reads as one."""
    old = read("I drive a grey Skoda Octavia")
    sold, parked = read("Sold the Octavia to a neighbour"), read("Parked the Octavia outside the gym")
    assert ended(old, sold) and ended(old, parked)
    cues = Cues()
    cues.ending = list(_axis(0))
    at = FEATURES.index("ended")

    def flag(new_masked: np.ndarray) -> float:
        return features(old, parked, 0.5, 0.5, cues, new_masked)[at]

    assert flag(_axis(0)) == 1.0
    assert flag(-_axis(0)) == 0.0


def test_an_episode_of_the_old_value_is_no_evidence_whatever_its_cues() -> None:
    """ "Cancelled Tuesday's lesson with Mr Adeyemi" carries a change cue and names the old value, told
    in the past; read as an episode, it says nothing changed; read as an ending, its cue counts."""
    old = read("My driving instructor is Mr Adeyemi")
    new = read("Cancelled Tuesday's lesson with Mr Adeyemi")
    cues = Cues({"cancelled": 2.0})
    cues.ending = list(_axis(0))
    assert evidence(old, new, [], cues, 0.5)
    assert episode_of(old, new, cues, -_axis(0)) and not episode_of(old, new, cues, _axis(0))
    assert not evidence(old, new, [], cues, 0.5, episode=True)
    present = read("I have lessons with Mr Adeyemi")
    assert not episode_of(old, present, cues, -_axis(0))  # not told in the past: no event
