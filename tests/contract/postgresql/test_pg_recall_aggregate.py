"""``tests/unit/test_recall_aggregate.py`` on PostgreSQL: recall over many records of one kind."""

from test_recall_aggregate import *  # noqa: F403
