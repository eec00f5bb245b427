"""What a user tells for the first time replaces nothing, and what they kept still holds: through the
real write path with the real MiniLM embedder. Most of what a person tells their assistant is new (their
broadband, their energy supplier, the book they are reading); a new attribute is about as near in meaning
to everything they said before, and ends none of it. The sentences are written for this test, not taken
from the corpus or the profiles of the bench."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from chat_closures import closed_in_chat

DAY = 86400.0
START = time.time() - 40 * DAY


def _closed(home: Path, said: list[str]) -> list[str]:
    """What the facts a user's messages (one a day) close said."""
    return [f.content.lower() for f in closed_in_chat(home, [("Ines", text) for text in said], START, DAY)]


def test_a_first_mention_closes_nothing_and_an_update_in_own_words_still_does(tmp_path: Path) -> None:
    """Nine things told for the first time close nothing (the job is not replaced by the energy supplier);
    then a new GP (the same slot) replaces the old one, and nothing else is closed."""
    said = [
        "I'm a night nurse at a hospital in Cork.",
        "My girlfriend Aoife works in a bookshop.",
        "We rent a flat above a chip shop on Oliver Plunkett Street.",
        "I go sea swimming on Sunday mornings.",
        "My car is a Nissan Micra.",
        "Our broadband comes from Eir.",
        "My GP is Dr Walsh.",
        "My energy supplier is Flogas.",
        "I'm reading a Sally Rooney novel.",
    ]
    assert _closed(tmp_path / "first", said) == []
    later = ["My GP is Dr Byrne.", "We get our internet through Virgin Media."]
    closed = _closed(tmp_path / "then", [*said, *later])
    assert any("walsh" in c for c in closed), closed
    assert all("walsh" in c or "eir" in c for c in closed), closed


@pytest.mark.xfail(
    strict=True,
    reason="the decision fitted on the everyday sets too gives this new value without a change word 0.39, "
    "under the 0.42 from which it needs no other evidence; fitted on the corpus alone it closed it",
)
def test_a_new_provider_in_other_words_replaces_the_old_one(tmp_path: Path) -> None:
    """"We get our internet through Virgin Media" (no change word, but near to the broadband alone)
    replaces "Our broadband comes from Eir", among things told for the first time."""
    said = ["I'm a night nurse at a hospital in Cork.", "Our broadband comes from Eir.", "My GP is Dr Walsh.",
            "We get our internet through Virgin Media."]  # fmt: skip
    closed = _closed(tmp_path, said)
    assert len(closed) == 1 and "eir" in closed[0], closed


@pytest.mark.parametrize(
    "said",
    [
        ["My mobile network is Lebara.", "New handset this week, but I kept Lebara as my network."],
        ["We bank with Monzo.", "Switched my phone to a Fairphone but stuck with Monzo for the banking."],
        ["My gym is PureGym.", "I moved flats but stayed with PureGym."],
    ],
)
def test_what_the_user_kept_still_holds(tmp_path: Path, said: list[str]) -> None:
    assert _closed(tmp_path, said) == []
