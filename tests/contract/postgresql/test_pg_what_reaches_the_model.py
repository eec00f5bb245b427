"""``tests/unit/test_what_reaches_the_model.py`` on PostgreSQL: what the model receives."""

from test_what_reaches_the_model import *  # noqa: F403
