"""``tests/unit/test_leases.py`` on PostgreSQL: one process at a time, across hosts, per lease."""

from test_leases import *  # noqa: F403
