"""A record named by the start of its uuid, as the CLI prints it (``history`` and ``fact query`` show
the first 8 characters): a unique prefix names the record, an ambiguous or unknown one is refused with
what to give instead."""

from __future__ import annotations

import re
from collections.abc import Sequence

from hermes_memory.errors import NotFoundError, ValidationError
from hermes_memory.tier2.db import Database

MIN_PREFIX = 4
_PREFIX = re.compile(r"[0-9a-f-]+")
UUID_CHARS = 36


def is_prefix(given: str) -> bool:
    """Whether ``given`` can only be the start of a uuid (hex digits and dashes, shorter than one)."""
    return len(given) < UUID_CHARS and _PREFIX.fullmatch(given) is not None


def complete(db: Database, table: str, scoped: str, params: Sequence[str], given: str, what: str) -> str:
    """The one uuid of ``table`` (alias ``t``, rows limited by ``scoped``) that starts with ``given``.

    Raises NotFoundError when none does (or ``given`` is shorter than ``MIN_PREFIX``), ValidationError
    when several do."""
    if len(given) < MIN_PREFIX:
        raise NotFoundError(
            f"no {what} with uuid {given!r}: give the full uuid or at least {MIN_PREFIX} of its first "
            "characters"
        )
    rows = db.query(
        f"SELECT t.uuid FROM {table} t WHERE t.uuid >= ? AND t.uuid < ? AND {scoped} LIMIT 2",
        (given, given + "\uffff", *params),
    )
    if not rows:
        raise NotFoundError(f"no {what} with a uuid starting {given!r}")
    if len(rows) > 1:
        raise ValidationError(
            f"several {what}s have a uuid starting {given!r}: give more of it (a full uuid has {UUID_CHARS} "
            "characters)"
        )
    return str(rows[0]["uuid"])


__all__ = ["MIN_PREFIX", "complete", "is_prefix"]
