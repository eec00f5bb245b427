"""``composed_threat_lines`` (the renderer's per-line form) agrees with ``composed_threat`` of the block."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from hermes_memory.security.composed import _LITERALS, composed_threat, composed_threat_lines

DATA = Path(__file__).resolve().parents[1] / "data"


def _texts(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    return [text for item in items for text in _texts(item)]


def test_agrees_with_the_joined_block_over_the_corpora() -> None:
    texts = [t for name in ("fence_corpus.json", "injection_corpus.json")
             for t in _texts(json.loads((DATA / name).read_text(encoding="utf-8")))]  # fmt: skip
    texts += ["<!-- a", "b -->", "e\u0301", "\u0301x", "\u200bhi", "İstanbul", "ＩＧＮＯＲＥ", "a_b-c"]
    rnd = random.Random(30)
    flagged = 0
    for _ in range(3000):
        lines = [rnd.choice(texts)[: rnd.randint(1, 300)] for _ in range(rnd.randint(1, 5))]
        block = composed_threat("\n".join(lines))
        assert composed_threat_lines(lines) == block, lines
        flagged += block
    assert flagged > 100  # the corpora do reach the patterns


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(max_size=60), min_size=0, max_size=4))
def test_agrees_with_the_joined_block_on_any_text(lines: list[str]) -> None:
    assert composed_threat_lines(lines) == composed_threat("\n".join(lines))


def test_no_seam_literal_holds_a_newline() -> None:
    """What ``composed_threat_lines`` relies on to find the block's literals line by line."""
    assert _LITERALS
    assert not any("\n" in literal for literal in _LITERALS)


_SECRET_PIECES = ["token", "PASSWORD", "api_key", "apikey", "secret", " ", "\n", "\t", "=", ":", '"', "'",
                  "A" * 20, "b9+/=_-" * 3, "ſ", "\u212a", "x", "- [2023] ", ")"]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_SECRET_PIECES), max_size=12).map("".join), min_size=1, max_size=4))
def test_a_secret_run_over_the_lines_is_found_as_in_the_block(lines: list[str]) -> None:
    """The part of the secret pattern searched for first (``_SEAM_CORES``) never hides a match."""
    assert composed_threat_lines(lines) == composed_threat("\n".join(lines))


def test_a_secret_split_over_two_lines_is_found() -> None:
    assert composed_threat_lines(["my password", "= 'AAAAAAAAAAAAAAAAAAAAAAAA'"])
    assert not composed_threat_lines(["my password", "is 'AAAAAAAAAAAAAAAAAAAAAAAA'"])
