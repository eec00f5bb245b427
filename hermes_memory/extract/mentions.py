"""An entity mention, the context a sentence is read in (who "I", "you" and "the user" are), and the
bookkeeping of the sentence's spans already claimed by a mention."""

from __future__ import annotations

from dataclasses import dataclass, field

from hermes_memory.extract.types import KnownEntities


@dataclass(slots=True)
class Mention:
    """One mention inside a message (absolute offsets)."""

    name: str
    entity_type: str
    start: int
    end: int
    confidence: float
    known: bool = False
    owner: str | None = None
    role: str | None = None
    kin_predicate: str | None = None
    aliases: list[str] = field(default_factory=list)
    #: Named by "<owner>'s <role> is <name>" ("my manager is Priya"): the role as a slot it fills.
    identity: bool = False


@dataclass(frozen=True, slots=True)
class EntityContext:
    """Who "I", "you" and "the user" are, and what is already known."""

    speaker: str
    addressee: str | None
    known: KnownEntities
    user: str | None = None


def claim(taken: bytearray, start: int, end: int) -> None:
    taken[start:end] = b"\x01" * (end - start)


def is_free(taken: bytearray, start: int, end: int) -> bool:
    return taken.find(1, start, end) < 0


__all__ = [
    "EntityContext",
    "Mention",
    "claim",
    "is_free",
]
