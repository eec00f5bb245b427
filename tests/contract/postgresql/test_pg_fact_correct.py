"""``tests/unit/test_fact_correct.py`` on PostgreSQL: correcting a fact and its history."""

from test_fact_correct import *  # noqa: F403
