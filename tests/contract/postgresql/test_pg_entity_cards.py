"""``tests/unit/test_entity_cards.py`` on PostgreSQL: entity cards from the best relations of each entity."""

from test_entity_cards import *  # noqa: F403
