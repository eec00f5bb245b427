"""``tests/unit/test_queue_count.py`` on PostgreSQL: the queues' counts."""

from test_queue_count import *  # noqa: F403
