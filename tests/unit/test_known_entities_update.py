"""The ingest's linking lookup kept current in place (issue 13: at 100k stored turns rebuilding it after
every new entity or alias took a third of the background worker's CPU per turn): ``KnownEntities.update``
gives exactly what a fresh build over the same list gives, or declines and changes nothing."""

from __future__ import annotations

import random

import pytest

from hermes_memory.errors import ValidationError
from hermes_memory.extract.types import KnownEntities, KnownEntity

NAMES = ["Ana", "Ben", "Caroline", "Dev", "Elif", "Farid", "Gus", "Hana"]
SURFACES = ["ana", "the user's sister", "my sister", "sis", "the dog", "Biscuit", "the old friend from school",
            "Ben's cat", "a", "the neighbour", "Ana B", "caroline c"]  # fmt: skip
TYPES = ["person", "pet", "other"]


def _state(known: KnownEntities) -> tuple[object, ...]:
    keys = {" ".join(s.casefold().split()) for s in [*SURFACES, *NAMES, *(e.name for e in known)]}
    found = {k: (e.name, e.entity_type, e.aliases) if (e := known.get(k)) else None for k in sorted(keys)}
    ambiguous = sorted(k for k in keys if known.is_ambiguous(k))
    return found, ambiguous, dict(known.first_words), known.max_tokens, list(known), len(known)


def test_updates_equal_a_fresh_build() -> None:
    rnd = random.Random(11)
    taken = declined = 0
    for _ in range(300):
        listed: dict[str, KnownEntity] = {}
        for name in rnd.sample(NAMES, 4):
            listed[name.casefold()] = KnownEntity(name, rnd.choice(TYPES), tuple(rnd.sample(SURFACES, 2)))
        known = KnownEntities(listed.values())
        for _ in range(6):
            name = rnd.choice(NAMES)
            old = listed.get(name.casefold())
            aliases = list(old.aliases) if old is not None else []
            if rnd.random() < 0.7:
                aliases.append(rnd.choice(SURFACES))
            if aliases and rnd.random() < 0.2:
                aliases.pop(rnd.randrange(len(aliases)))  # a surface dropped: declined unless kept
            entity = KnownEntity(name, rnd.choice(TYPES), tuple(aliases))
            before = _state(known)
            if known.update(entity):
                taken += 1
                listed[name.casefold()] = entity
                assert _state(known) == _state(KnownEntities(listed.values()))
            else:
                declined += 1
                assert _state(known) == before
                listed[name.casefold()] = entity
                known = KnownEntities(listed.values())
    assert taken > 500 and declined > 50  # both paths were exercised


def test_a_new_alias_claimed_by_an_entity_listed_later_is_taken_over_and_ambiguous() -> None:
    ana = KnownEntity("Ana", "person")
    ben = KnownEntity("Ben", "person", ("my sibling",))
    known = KnownEntities([ana, ben])
    assert known.get("my sibling") == ben and not known.is_ambiguous("my sibling")
    assert known.update(KnownEntity("Ana", "person", ("my sibling",)))
    got = known.get("My  Sibling")
    assert got is not None and got.name == "Ana" and known.is_ambiguous("my sibling")
    assert [e.name for e in known] == ["Ana", "Ben"]


def test_a_dropped_surface_or_a_repeated_name_is_declined() -> None:
    known = KnownEntities([KnownEntity("Ana", "person", ("sis",))])
    assert not known.update(KnownEntity("Ana", "person"))
    assert known.get("sis") is not None
    twice = KnownEntities([KnownEntity("Ana", "person"), KnownEntity("ana", "pet")])
    assert not twice.update(KnownEntity("Ana", "person", ("sis",)))
    with pytest.raises(ValidationError):
        known.update("Ana")  # type: ignore[arg-type]
