"""What the update writer embeds: only statements it weighs against an earlier one. A clause with no
earlier statement about the same holder that it could end needs no vector (the words decide that), and
embedding every clause was a third of the texts ingest embedded on LoCoMo."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from hermes_memory import updates
from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.tier3.hashing_embedder import HashingEmbedder

DAY = 86400.0
START = 1_760_000_000.0


class _Counting:
    """A stand-in for the update detector's MiniLM: hashing vectors, every text it is asked for kept."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self._inner = HashingEmbedder()

    def embed_document(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.texts.extend(texts)
        return self._inner.embed_document(texts)


def test_a_statement_with_nothing_to_replace_is_not_embedded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    encoder = _Counting()
    monkeypatch.setattr(HashingEmbedder, "carries_meaning", True)  # so the store gets a detector
    monkeypatch.setattr(updates, "_shared_minilm", lambda: encoder)
    with MemoryAPI(hermes_home=tmp_path, **{"tier3.embedding_model": "hashing"}) as api:
        assert api.remember_turn("My laptop is a ThinkPad X1.", "Nice!", "s1", START)["success"]
        assert api.flush(timeout=30)["data"]["drained"]
        assert encoder.texts == []  # nothing earlier it could replace: no vector needed
        assert api.remember_turn("My laptop is a MacBook Air now.", "Congrats!", "s1", START + DAY)["success"]
        assert api.flush(timeout=30)["data"]["drained"]
        assert any("MacBook" in t for t in encoder.texts), encoder.texts  # weighed against the ThinkPad


def test_remainders_are_embedded_only_where_they_could_change_the_decision(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The decision is linear in the remainders' cosine before its logistic: a statement under the
    threshold at both bounds of the cosine is decided without embedding its remainders, and every
    decision is the one the exact cosine gives."""
    from hermes_memory.updates.detector import UpdateDetector, apart_texts
    from hermes_memory.updates.statement import read

    earlier = [read(t) for t in (
        "My phone is a Samsung Galaxy S22.", "I bank with Barclays.", "I play tennis on Sundays.",
        "My sister lives in Porto.", "I work at Siemens as a planner.", "I drink oat flat whites.",
    )]  # fmt: skip
    later = [read(t) for t in (
        "Typing this on my OnePlus 12 now.", "Moved my current account to Monzo.", "I play padel now.",
        "I'm at Bosch these days.", "My brother lives in Lisbon.", "I love the new café on Elm Road.",
    )]  # fmt: skip
    from hermes_memory.tier3.int8_embedder import IntegerMiniLMEmbedder

    bounded, exact = _Counting(), _Counting()
    minilm = IntegerMiniLMEmbedder()  # the decision was fitted on its vectors
    bounded._inner = exact._inner = minilm  # type: ignore[assignment]
    fast, slow = UpdateDetector(bounded.embed_document), UpdateDetector(exact.embed_document)
    monkeypatch.setattr(slow, "_highest", lambda *_: 1.0)  # every remainder embedded
    for new in later:
        assert fast.replaced(new, earlier) == slow.replaced(new, earlier)
    remainders = {t for new in later for old in earlier for t in apart_texts(old, new) if t}
    assert remainders & set(exact.texts)
    assert len(remainders & set(bounded.texts)) < len(remainders & set(exact.texts))
