"""Content hashing and near-duplicate merging of facts."""

from __future__ import annotations

from hermes_memory.extract.dedup import (
    NEAR_DUPLICATE_THRESHOLD,
    content_hash,
    find_near_duplicate,
    is_near_duplicate,
    jaccard,
    merge_facts,
    normalize_content,
)
from hermes_memory.extract.types import ExtractedFact


def fact(
    content: str, *, confidence: float = 0.6, salience: float = 0.3, obj: str | None = None,
) -> ExtractedFact:
    return ExtractedFact(
        content=content, subject="Caroline", predicate="states" if obj is None else "likes", object=obj,
        category="general", confidence=confidence, salience=salience, content_hash=content_hash(content),
    )


def test_hash_ignores_case_spacing_and_punctuation() -> None:
    assert normalize_content("  Caroline   moved to BOSTON! ") == "caroline moved to boston"
    assert content_hash("Caroline moved to Boston.") == content_hash("caroline  moved to boston")
    assert content_hash("Caroline moved to Boston") != content_hash("Caroline moved to Denver")
    assert len(content_hash("x")) == 64


def test_near_duplicates_ignore_filler_words() -> None:
    assert is_near_duplicate("Caroline really loves hiking", "Caroline loves hiking")
    assert is_near_duplicate("Melanie went camping with the kids", "Melanie went camping with kids!")


def test_different_objects_are_not_near_duplicates() -> None:
    assert not is_near_duplicate("Caroline moved to Boston", "Caroline moved to Denver")


def test_numbers_and_negation_veto_a_merge() -> None:
    assert not is_near_duplicate("Caroline went to the group on 7 May 2023",
                                 "Caroline went to the group on 8 May 2023")
    assert not is_near_duplicate("Caroline likes spiders a lot", "Caroline does not like spiders a lot")


def test_threshold_is_documented_value() -> None:
    assert NEAR_DUPLICATE_THRESHOLD == 0.8
    assert jaccard(frozenset("abcd"), frozenset("abce")) == 0.6
    assert jaccard(frozenset(), frozenset()) == 1.0


def test_merge_facts_keeps_the_structured_fact_and_best_scores() -> None:
    merged = merge_facts([
        fact("Caroline loves hiking", confidence=0.9, salience=0.2),
        fact("Caroline moved to Boston"),
        fact("Caroline really loves hiking!", confidence=0.5, salience=0.7, obj="hiking"),
    ])
    assert len(merged) == 2
    hiking = merged[0]
    assert hiking.object == "hiking"
    assert hiking.confidence == 0.9 and hiking.salience == 0.7
    assert merged[1].content == "Caroline moved to Boston"


def test_find_near_duplicate_returns_the_candidate_id() -> None:
    candidates = [("f1", "Caroline moved to Denver"), ("f2", "caroline really loves hiking")]
    assert find_near_duplicate("Caroline loves hiking.", candidates) == "f2"
    assert find_near_duplicate("Caroline adopted a dog", candidates) is None
