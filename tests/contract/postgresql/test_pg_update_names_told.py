"""``tests/unit/test_update_names_told.py`` on PostgreSQL: the names a scope's facts are about."""

from test_update_names_told import *  # noqa: F403
