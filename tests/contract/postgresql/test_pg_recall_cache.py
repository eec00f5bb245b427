"""``tests/unit/test_recall_cache.py`` on PostgreSQL: recall's caches and their invalidation."""

from test_recall_cache import *  # noqa: F403
