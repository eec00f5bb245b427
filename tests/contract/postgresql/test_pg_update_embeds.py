"""``tests/unit/test_update_embeds.py`` on PostgreSQL: updates close the old fact and embed the new one."""

from test_update_embeds import *  # noqa: F403
