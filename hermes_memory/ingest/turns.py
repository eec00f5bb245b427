"""What a remembered turn is, and the deterministic ids that make its processing idempotent."""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime

from hermes_memory.records import TurnMessage, TurnPayload

_NAMESPACE = uuid.UUID("6f1c2a4e-0b7d-4f5e-9a3c-2d8e1b4c7a90")


def episode_uuid(turn_uuid: str, index: int) -> str:
    """The id of message ``index`` of a turn: the same on every retry, so a replay cannot duplicate it."""
    return str(uuid.uuid5(_NAMESPACE, f"{turn_uuid}:{index}"))


def new_turn_uuid() -> str:
    return str(uuid.uuid4())


def to_timestamp(value: float | datetime | str | None) -> float:
    """A turn time as Unix seconds: None is now; naive datetimes are UTC; ISO-8601 strings are parsed.

    Raises ValueError for an unparsable string (the API turns it into a ValidationError).
    """
    if value is None:
        return time.time()
    if isinstance(value, datetime):
        dt = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
        return dt.timestamp()
    if isinstance(value, str):
        dt = datetime.fromisoformat(value.strip())
        return (dt if dt.tzinfo is not None else dt.replace(tzinfo=UTC)).timestamp()
    return float(value)


__all__ = [
    "TurnMessage",
    "TurnPayload",
    "episode_uuid",
    "new_turn_uuid",
    "to_timestamp",
]
