"""``tests/unit/test_assistant_knowledge_retired.py`` on PostgreSQL: what the assistant says is not
knowledge."""

from test_assistant_knowledge_retired import *  # noqa: F403
