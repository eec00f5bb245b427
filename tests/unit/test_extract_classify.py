"""Fact categories and salience."""

from __future__ import annotations

import pytest

from hermes_memory.extract.classify import category_for, message_salience, salience
from hermes_memory.extract.types import CATEGORIES


@pytest.mark.parametrize(
    ("predicate", "category"),
    [("lives_in", "user"), ("works_at", "user"), ("likes", "preference"), ("married_to", "relationship"),
     ("has_pet", "relationship"), ("moved_to", "event"), ("plans", "event"), ("works_on", "project"),
     ("uses", "tool"), ("depends_on", "domain")],
)
def test_predicates_map_to_fixed_categories(predicate: str, category: str) -> None:
    assert category_for(predicate) == category
    assert category in CATEGORIES


def test_unstructured_statements_are_categorised_by_wording() -> None:
    assert category_for("states", "Caroline got married last year") == "event"
    assert category_for("states", "Caroline loves the beach") == "preference"
    assert category_for("states", "Caroline went on a road trip to Oregon") == "event"
    assert category_for("states", "Caroline feels fine", has_time=True) == "event"
    assert category_for("states", "Caroline is curious") == "general"


def test_life_events_and_plans_outrank_small_talk() -> None:
    wedding = salience("Caroline got married on 8 May 2023", "event", has_time=True)
    plan = salience("Caroline decided to move to Boston", "event")
    chat = salience("Caroline thinks the weather is nice", "general")
    assert wedding > chat and plan > chat
    assert 0.0 <= chat < 0.3 < wedding <= 1.0


def test_hedges_and_low_confidence_lower_salience() -> None:
    sure = salience("Caroline likes hiking", "preference")
    assert salience("Caroline maybe likes hiking", "preference") < sure
    assert salience("Caroline likes hiking", "preference", confidence=0.2) < sure


def test_message_salience() -> None:
    assert message_salience([0.4, 0.8], is_noise=False, has_entities=True) == 0.8
    assert message_salience([], is_noise=False, has_entities=True) == 0.25
    assert message_salience([0.9], is_noise=True, has_entities=True) == 0.05
