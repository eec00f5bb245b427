"""``tests/unit/test_life_story.py`` on PostgreSQL: a life story told over many turns."""

from test_life_story import *  # noqa: F403
