"""``tests/unit/test_ops_forget.py`` on PostgreSQL: forget: erasures, what they remove and keep."""

from test_ops_forget import *  # noqa: F403
