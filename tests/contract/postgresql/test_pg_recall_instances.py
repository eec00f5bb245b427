"""``tests/unit/test_recall_instances.py`` on PostgreSQL: recall of instances of a category."""

from test_recall_instances import *  # noqa: F403
