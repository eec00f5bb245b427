"""``tests/unit/test_hermes_session_search.py`` on PostgreSQL: the provider's session search."""

from test_hermes_session_search import *  # noqa: F403
