"""``tests/unit/test_forget_what_is_said.py`` on PostgreSQL: forget what a turn says."""

from test_forget_what_is_said import *  # noqa: F403
