"""Every case of the hand-written temporal corpus (tests/data/temporal_corpus.json) resolves as a careful
reader would: the phrase found, its first and last day, against the time the sentence was said."""

from __future__ import annotations

import json
import re
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from hermes_memory.extract.temporal import find_temporal

CORPUS = Path(__file__).resolve().parents[1] / "data" / "temporal_corpus.json"


def _cases() -> list[Any]:
    cases = json.loads(CORPUS.read_text(encoding="utf-8"))["cases"]
    params = []
    for i, case in enumerate(cases):
        slug = re.sub(r"[^A-Za-z0-9]+", "-", case["text"]).strip("-")[:48]
        params.append(pytest.param(case, id=f"{i:03d}-{slug}@{case['now'][:10]}"))
    return params


def test_the_corpus_is_large_and_varied() -> None:
    cases = json.loads(CORPUS.read_text(encoding="utf-8"))["cases"]
    assert len(cases) >= 150
    nows = {datetime.fromisoformat(c["now"]).date() for c in cases}
    assert any(d.month == 1 for d in nows) and any(d.month == 12 for d in nows)
    assert date(2028, 2, 29) in nows
    assert any(d.weekday() == 6 for d in nows)  # a Sunday
    assert any((d + timedelta(days=1)).day == 1 for d in nows)  # the last day of a month
    assert sum(1 for c in cases if not c["expect"]) >= 20  # sentences with no date at all


@pytest.mark.parametrize("case", _cases())
def test_corpus_case(case: dict[str, Any]) -> None:
    now = datetime.fromisoformat(case["now"])
    found = [
        {
            "phrase": m.text,
            "start": m.start.date().isoformat(),
            "end": (m.end.date() - timedelta(days=1)).isoformat(),  # the corpus gives the last day
        }
        for m in find_temporal(case["text"], now)
    ]
    assert found == case["expect"]
