"""The ingest's linking lookup kept current in place (issue 13: at 100k stored turns rebuilding it after
every new entity, alias or placeholder taken over took a third of the background worker's CPU per turn):
``KnownEntities.update``/``remove`` give exactly what a fresh build over the same list gives, or decline
and change nothing."""

from __future__ import annotations

import random

import pytest

from hermes_memory.errors import ValidationError
from hermes_memory.extract.types import KnownEntities, KnownEntity

NAMES = ["Ana", "Ben", "Caroline", "Dev", "Elif", "Farid", "Gus", "Hana"]
SURFACES = ["ana", "the user's sister", "my sister", "sis", "the dog", "Biscuit",
            "the old friend from school", "Ben's cat", "a", "the neighbour", "Ana B", "caroline c"]
TYPES = ["person", "pet", "other"]


def _state(known: KnownEntities) -> tuple[object, ...]:
    keys = {" ".join(s.casefold().split()) for s in [*SURFACES, *NAMES, *(e.name for e in known)]}
    found = {k: (e.name, e.entity_type, e.aliases) if (e := known.get(k)) else None for k in sorted(keys)}
    ambiguous = sorted(k for k in keys if known.is_ambiguous(k))
    return found, ambiguous, dict(known.first_words), known.max_tokens, list(known), len(known)


def test_updates_and_removals_equal_a_fresh_build() -> None:
    """As the ingest's cache changes: a placeholder taken over goes (``remove``), an entity is put in
    its place or last (``update``); after each step the lookup equals one built over the same list."""
    rnd = random.Random(11)
    steps = 0
    for _ in range(300):
        listed: dict[str, KnownEntity] = {}  # as RuleBasedKnowledge._known: in list order
        for name in rnd.sample(NAMES + SURFACES, 5):
            listed[name.casefold()] = KnownEntity(name, rnd.choice(TYPES), tuple(rnd.sample(SURFACES, 2)))
        known = KnownEntities(listed.values())
        for _ in range(6):
            if listed and rnd.random() < 0.25:
                gone = listed.pop(rnd.choice(list(listed)))
                assert known.remove(gone.name.upper())
            else:
                name = rnd.choice(NAMES + SURFACES[:3])
                old = listed.get(name.casefold())
                aliases = list(old.aliases) if old is not None else []
                if rnd.random() < 0.7:
                    aliases.append(rnd.choice(SURFACES))
                if aliases and rnd.random() < 0.3:
                    aliases.pop(rnd.randrange(len(aliases)))
                listed[name.casefold()] = KnownEntity(name, rnd.choice(TYPES), tuple(aliases))
                assert known.update(listed[name.casefold()])
            steps += 1
            assert _state(known) == _state(KnownEntities(listed.values()))
    assert steps == 1800


def test_a_new_alias_claimed_by_an_entity_listed_later_is_taken_over_and_ambiguous() -> None:
    ana = KnownEntity("Ana", "person")
    ben = KnownEntity("Ben", "person", ("my sibling",))
    known = KnownEntities([ana, ben])
    assert known.get("my sibling") == ben and not known.is_ambiguous("my sibling")
    assert known.update(KnownEntity("Ana", "person", ("my sibling",)))
    got = known.get("My  Sibling")
    assert got is not None and got.name == "Ana" and known.is_ambiguous("my sibling")
    assert [e.name for e in known] == ["Ana", "Ben"]


def test_a_name_listed_twice_is_declined_and_a_bad_item_refused() -> None:
    twice = KnownEntities([KnownEntity("Ana", "person"), KnownEntity("ana", "pet", ("sis",))])
    before = _state(twice)
    assert not twice.update(KnownEntity("Ana", "person", ("sister",)))
    assert not twice.remove("ANA")
    assert _state(twice) == before
    assert KnownEntities([KnownEntity("Ana", "person")]).remove("nobody")
    with pytest.raises(ValidationError):
        twice.update("Ana")  # type: ignore[arg-type]
