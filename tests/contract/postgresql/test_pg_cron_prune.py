"""``tests/unit/test_cron_prune.py`` on PostgreSQL: the prune job."""

from test_cron_prune import *  # noqa: F403
