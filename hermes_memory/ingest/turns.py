"""What a remembered turn is, and the deterministic ids that make its processing idempotent."""

from __future__ import annotations

import uuid

from hermes_memory.records import TurnMessage, TurnPayload

_NAMESPACE = uuid.UUID("6f1c2a4e-0b7d-4f5e-9a3c-2d8e1b4c7a90")


def episode_uuid(turn_uuid: str, index: int) -> str:
    """The id of message ``index`` of a turn: the same on every retry, so a replay cannot duplicate it."""
    return str(uuid.uuid5(_NAMESPACE, f"{turn_uuid}:{index}"))


def new_turn_uuid() -> str:
    return str(uuid.uuid4())


__all__ = [
    "TurnMessage",
    "TurnPayload",
    "episode_uuid",
    "new_turn_uuid",
]
