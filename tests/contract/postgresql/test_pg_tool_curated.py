"""``tests/unit/test_tool_curated.py`` on PostgreSQL: the curated-memory tool."""

from test_tool_curated import *  # noqa: F403
