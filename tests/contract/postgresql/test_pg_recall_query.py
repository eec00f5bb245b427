"""``tests/unit/test_recall_query.py`` on PostgreSQL: recall's ranking of questions and answers."""

from test_recall_query import *  # noqa: F403
