"""``tests/unit/test_hermes_prompt_context.py`` on PostgreSQL: the provider's prompt context."""

from test_hermes_prompt_context import *  # noqa: F403
