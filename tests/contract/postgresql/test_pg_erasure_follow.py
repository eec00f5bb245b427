"""``tests/unit/test_erasure_follow.py`` on PostgreSQL: every home of a shared store follows every forget."""

from test_erasure_follow import *  # noqa: F403
