"""The subject, predicate and object of a fact stored by hand (``fact_store`` without them): read from
the text by the rule-based extractor, so ``history`` finds the fact under its subject."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from hermes_memory.core.mirror import first_person
from hermes_memory.extract import MessageInput, extract


@dataclass(frozen=True, slots=True)
class Triple:
    """What a fact is about: ``subject`` always, ``predicate``/``object`` when the text says them.
    ``exclusive``: the predicate holds one value at a time (a newer object supersedes the older)."""

    subject: str
    predicate: str | None = None
    object: str | None = None
    exclusive: bool = False


def derive_triple(content: str) -> Triple | None:
    """The triple of the one statement the text makes ("Alice works at Acme": Alice, works_at, Acme);
    with no statement, the entity the text starts with as its subject ("Project Atlas uses Postgres":
    Project Atlas); None when neither is found. Several statements about different subjects give the
    first one's subject only (the fact is about it first)."""
    result = extract(MessageInput(text=first_person(content), time=datetime.now(tz=UTC), role="user"))
    statements = [] if result.is_noise else [f for f in result.facts if f.subject]
    if len(statements) == 1:
        one = statements[0]
        return Triple(one.subject, one.predicate, one.object, one.exclusive and not one.negated)
    if statements:
        return Triple(statements[0].subject)
    head = content.strip().casefold().removeprefix("the ")
    for entity in result.entities:
        if head.startswith(entity.name.casefold()):
            return Triple(entity.name)
    return None


__all__ = ["Triple", "derive_triple"]
