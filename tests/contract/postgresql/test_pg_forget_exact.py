"""``tests/unit/test_forget_exact.py`` on PostgreSQL: forget by exact text."""

from test_forget_exact import *  # noqa: F403
