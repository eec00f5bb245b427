"""``tests/unit/test_recall_generation.py`` on PostgreSQL: the change log recall's caches follow."""

from test_recall_generation import *  # noqa: F403
