"""Chat drops "I" in lower case too: "traded in the corsa for a hybrid" has no subject of its own and is the
speaker's, so it can end what the user said before; an episode told the same way ends nothing. Through
the write path with the real MiniLM embedder; sentences written for this test."""

from __future__ import annotations

from pathlib import Path

import pytest
from store_state import closed_after


@pytest.mark.parametrize(
    ("earlier", "later", "ended"),
    [
        ("I'm on an iPhone 13.", "finally gave in and swapped the iphone for a galaxy s24 lol", "iPhone 13"),
        ("My broadband is with Virgin Media.", "switched the broadband over to sky last month, way cheaper",
         "Virgin Media"),
    ],
)  # fmt: skip
def test_a_change_told_in_lower_case_with_no_subject_ends_the_users_old_value(
    tmp_path: Path, earlier: str, later: str, ended: str
) -> None:
    closed = closed_after(tmp_path, earlier, later)
    assert len(closed) == 1 and ended in closed[0], closed


def test_an_episode_told_in_lower_case_with_no_subject_ends_nothing(tmp_path: Path) -> None:
    later = "missed lotus yoga this tuesday, the kids were ill"
    assert closed_after(tmp_path, "I go to yoga at Lotus Studio on Tuesdays.", later) == []
