"""``tests/unit/test_secrets.py`` on PostgreSQL: secrets redacted on the way in and forgotten."""

from test_secrets import *  # noqa: F403
