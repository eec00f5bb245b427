"""``tests/unit/test_forget_mentions.py`` on PostgreSQL: forget with related names."""

from test_forget_mentions import *  # noqa: F403
