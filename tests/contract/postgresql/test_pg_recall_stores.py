"""``tests/unit/test_recall_stores.py`` on PostgreSQL: chunks, events and entities found by recall."""

from test_recall_stores import *  # noqa: F403
