"""``tests/unit/test_memory_api_tier2.py`` on PostgreSQL: every Tier 2 record kind through MemoryAPI."""

from test_memory_api_tier2 import *  # noqa: F403
