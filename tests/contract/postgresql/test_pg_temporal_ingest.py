"""``tests/unit/test_temporal_ingest.py`` on PostgreSQL: dates of turns and facts."""

from test_temporal_ingest import *  # noqa: F403
