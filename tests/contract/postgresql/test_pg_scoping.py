"""``tests/unit/test_scoping.py`` on PostgreSQL: scopes."""

from test_scoping import *  # noqa: F403
