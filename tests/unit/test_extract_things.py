"""Entities that are things: no sentences, literals or tool echoes; named pets and relatives linked."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from hermes_memory.extract import KnownEntities, KnownEntity, MessageInput, extract
from hermes_memory.extract.entities import thing_name_problem

NOW = datetime(2026, 11, 24, 10, 0, tzinfo=UTC)


def said(text: str, known: KnownEntities | None = None, role: str = "user") -> list[tuple[str, str]]:
    message = MessageInput(text, NOW, role=role, addressee="Hermes" if role == "user" else None)
    return [(e.name, e.entity_type) for e in extract(message, known).entities]


@pytest.mark.parametrize(
    "name",
    [
        "The user is allergic to peanuts",
        "User prefers dark mode in every editor",
        "False",
        "true",
        "None",
        "null",
        "42",
        "3% - 40/1375",
        "Entry added",
        "OK",
        "Done",
        "Success",
        "OK (memory-context injected=True)",
        "injected=True",
        "a b c d e f",
        "",
    ],
)
def test_names_that_are_not_things(name: str) -> None:
    assert thing_name_problem(name) is not None


@pytest.mark.parametrize(
    "name",
    ["Biscuit", "Lisbon", "Habitat for Humanity", "The Lord of the Rings", "Is This It", "the user's dog",
     "Floor 3", "C++", "Node.js", "Maya Okafor"],
)  # fmt: skip
def test_names_that_are_things(name: str) -> None:
    assert thing_name_problem(name) is None


@pytest.mark.parametrize(
    "text",
    [
        'DONE. tool results: {"success": true, "target": "user", '
        '"entries": ["The user is allergic to peanuts"], "message": "Entry added", "usage": "3% - 40/1375"}',
        "PLAIN ANSWER (memory-context injected=False)",
        'The tool answered "OK (memory-context injected=True)" again',
        'She wrote "The user is allergic to peanuts" in the notes.',
        "{'success': False, 'message': 'Entry added'}",
    ],
)
def test_tool_echoes_and_quoted_sentences_are_no_entities(text: str) -> None:
    for role in ("user", "assistant"):
        names = {name for name, _ in said(text, role=role)}
        assert not names - {"the user", "Hermes"}, (role, names)


def test_a_quoted_title_is_still_one_name() -> None:
    assert ("Charlotte's Web", "other") in said('I read "Charlotte\'s Web" to my kids last night.')


@pytest.mark.parametrize(
    "text",
    [
        "My dog Biscuit loves the beach.",
        "My dog is called Biscuit.",
        "My dog is named Biscuit.",
        "My dog's name is Biscuit.",
        "Biscuit, my dog, hates the rain.",
        "Biscuit is my dog.",
        "The user's dog Biscuit is a beagle.",
    ],
)
def test_a_named_pet_is_linked_to_its_owner(text: str) -> None:
    result = extract(MessageInput(text, NOW, role="user", addressee="Hermes"))
    pets = [e for e in result.entities if e.name == "Biscuit"]
    assert len(pets) == 1 and pets[0].entity_type == "pet"
    assert "the user's dog" in pets[0].aliases
    assert ("the user", "has_pet", "Biscuit") in {
        (r.subject, r.predicate, r.object) for r in result.relations
    }
    assert not [e for e in result.entities if e.name == "the user's dog"]


@pytest.mark.parametrize(
    "text",
    ["Mrs Okafor is my son's form tutor.", "Dr Lee is my mum's GP.", "Tom is my brother's best friend."],
)
def test_someone_who_is_a_relatives_something_is_no_relative(text: str) -> None:
    """ "Tom is my brother's best friend": the brother owns what Tom is; Tom is not the user's brother."""
    result = extract(MessageInput(text, NOW, role="user", addressee="Hermes"))
    name = text.split(" is ")[0]
    assert not [r for r in result.relations if r.object == name], result.relations
    assert not [f.content for f in result.facts if "named" in f.content], result.facts


def test_the_user_in_a_note_is_the_person_the_ai_talks_to() -> None:
    message = MessageInput(
        "Saved: the user's dog Biscuit is a beagle.",
        NOW,
        speaker="Hermes",
        role="assistant",
        addressee="Maya",
    )
    # The AI's note is no evidence (it only repeats what it was told), so nothing comes of it ...
    assert extract(message).relations == ()
    # ... while a person who writes about "the user" means the one the memory is about.
    result = extract(MessageInput("The user's dog Biscuit is a beagle.", NOW, speaker="Maya"))
    assert ("Maya", "has_pet", "Biscuit") in {(r.subject, r.predicate, r.object) for r in result.relations}


def test_a_later_my_dog_resolves_to_the_named_pet() -> None:
    known = KnownEntities([KnownEntity("Biscuit", "pet", ("the user's dog",))])
    result = extract(MessageInput("My dog is sick since Monday.", NOW, addressee="Hermes"), known)
    assert [(e.name, e.entity_type) for e in result.entities if e.name != "the user"] == [("Biscuit", "pet")]
    assert ("the user", "has_pet", "Biscuit") in {
        (r.subject, r.predicate, r.object) for r in result.relations
    }


def test_an_alias_two_entities_share_resolves_to_neither() -> None:
    known = KnownEntities(
        [
            KnownEntity("Anna", "person", ("the user's sister",)),
            KnownEntity("Eva", "person", ("the user's sister",)),
        ]
    )
    names = {e.name for e in extract(MessageInput("My sister is visiting.", NOW), known).entities}
    assert "the user's sister" in names and not names & {"Anna", "Eva"}


def test_two_people_still_name_their_relatives() -> None:
    # LoCoMo: a named relative of a human speaker, unchanged.
    message = MessageInput("My sister Anna and I went hiking.", NOW, speaker="Caroline", addressee="Melanie")
    result = extract(message)
    anna = next(e for e in result.entities if e.name == "Anna")
    assert anna.entity_type == "person" and "Caroline's sister" in anna.aliases


@pytest.mark.parametrize(
    ("text", "name", "alias"),
    [
        ("Oskar Lindqvist is my supervisor.", "Oskar Lindqvist", "the user's supervisor"),
        ("We had lunch with my aunt Maria Jose Ortega.", "Maria Jose Ortega", "the user's aunt"),
        ("My boss Chidi Okafor signed it off.", "Chidi Okafor", "the user's boss"),
        ("On Friday Ruth Adler, my neighbour, fed the cat.", "Ruth Adler", "the user's neighbour"),
    ],
)
def test_a_relative_or_role_keeps_the_whole_name(text: str, name: str, alias: str) -> None:
    """A name of several words is one person: "the user has a supervisor named Oskar Lindqvist", not a
    person called "Lindqvist" beside another called "Oskar"."""
    found = extract(MessageInput(text, NOW), KnownEntities([]))
    person = next(e for e in found.entities if e.name == name)
    assert alias in person.aliases, found.entities
    assert not [e for e in found.entities if e.name in name.split()], found.entities


@pytest.mark.parametrize(
    ("text", "name", "alias", "predicate"),
    [
        (
            "My supervisor is Henrike Baumgartner.",
            "Henrike Baumgartner",
            "the user's supervisor",
            "reports_to",
        ),
        ("My brother was Michael, he died young.", "Michael", "the user's brother", "sibling_of"),
        ("Our cat is Pickle and she hates the vet.", "Pickle", "the user's cat", "has_pet"),
    ],
)
def test_a_relative_or_role_named_after_is_is_that_person(
    text: str, name: str, alias: str, predicate: str
) -> None:
    """ "My supervisor is Henrike Baumgartner" names the supervisor as "Henrike Baumgartner is my
    supervisor" does: one person with the role, related to the user; not an unnamed "the user's
    supervisor" beside a stranger."""
    found = extract(MessageInput(text, NOW), KnownEntities([]))
    person = next(e for e in found.entities if e.name == name)
    assert alias in person.aliases, found.entities
    assert ("the user", predicate, name) in {(r.subject, r.predicate, r.object) for r in found.relations}
    assert not [e for e in found.entities if e.name == alias], found.entities


@pytest.mark.parametrize(
    "text",
    [
        "My grandma was Irish and proud of it.",
        "My wife is Japanese.",
        "My son is Dyslexic, which took a while to spot.",
        "My daughter is Year 5 since September.",
        "My aunt is Head of Maths at a grammar school.",
        "My dad is Deputy Head of Chemistry at Hollins.",  # two name words, then "of": a title
        "My cat is Siamese and very loud.",
    ],
)
def test_a_word_after_is_that_says_what_a_relative_is_is_no_name(text: str) -> None:
    """After "is", one capitalised word names a relative only when it is known as a name; a people, a
    tongue, a condition, a grade, a title or a breed says what the relative is."""
    found = extract(MessageInput(text, NOW), KnownEntities([]))
    roles = {f"the user's {w}" for w in ("wife", "grandma", "son", "daughter", "aunt", "dad", "cat")}
    assert not [e for e in found.entities if roles & set(e.aliases)], found.entities


@pytest.mark.parametrize(
    ("text", "pets", "role"),
    [
        ("I adopted a beagle named Biscuit two weeks ago.", ["Biscuit"], "dog"),
        ("I'm kind of attached to a husky called Juno.", [], "dog"),  # not said to be the speaker's
        ("I have two cats, Pixel and Nova.", ["Pixel", "Nova"], "cat"),
        ("I have a cat named Pepper and a rabbit named Clover.", ["Pepper", "Clover"], None),
        ("We rescued a kitten called Miso.", ["Miso"], "kitten"),
    ],
)
def test_a_pet_the_speaker_has_is_theirs_and_known_by_its_role(
    text: str, pets: list[str], role: str | None
) -> None:
    result = extract(MessageInput(text, NOW, speaker="Sam", addressee="Hermes"))
    relations = {(r.subject, r.predicate, r.object) for r in result.relations}
    assert {("Sam", "has_pet", pet) for pet in pets} <= relations
    types = {e.name: e.entity_type for e in result.entities}
    assert all(types[pet] == "pet" for pet in pets)
    assert not [name for name in types if name.startswith("Sam's")]  # no unnamed "Sam's cats" beside them
    if role is not None and pets:
        assert f"Sam's {role}" in next(e for e in result.entities if e.name == pets[0]).aliases
    if not pets:
        assert ("Juno", "pet") in {(e.name, e.entity_type) for e in result.entities}
        assert not [r for r in relations if r[2] == "Juno"]


def test_a_question_names_no_new_things_and_implies_no_relations() -> None:
    for text in ("What's my sister's name?", "Do I still work at Google?", "What are my pets' names?"):
        result = extract(MessageInput(text, NOW, addressee="Hermes"))
        assert result.relations == () and {e.name for e in result.entities} <= {"the user", "Hermes"}, text
    known = KnownEntities([KnownEntity("Google", "org")])
    linked = extract(MessageInput("Do I still work at Google?", NOW, addressee="Hermes"), known)
    assert ("Google", "org") in {(e.name, e.entity_type) for e in linked.entities}


@pytest.mark.parametrize(
    ("text", "name", "entity_type"),
    [
        ("Probably Ischgl, but I haven't booked yet.", "Probably Ischgl", None),
        ("Morning Priscilla! Ready for the demo?", "Morning Priscilla", None),
        ("I'm building a CLI called Tidepool in Rust.", "Tidepool", "project"),
        ("I'm flying home to Warsaw on January 3rd.", "Warsaw", "place"),
        ("This summer I sailed around Sardinia.", "Sardinia", "place"),
        ("I just joined a rowing club on the Spree.", "Spree", "place"),
        ("Eli ran the Boston Marathon in April.", "Boston Marathon", "event"),
        ("We drove the Blue Ridge Parkway.", "Blue Ridge Parkway", "place"),
    ],
)
def test_sentence_openers_are_not_names_and_cues_type_unknown_names(
    text: str, name: str, entity_type: str | None
) -> None:
    found = dict(said(text))
    if entity_type is None:
        assert name not in found
    else:
        assert found.get(name) == entity_type
