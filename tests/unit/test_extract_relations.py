"""Relation patterns, negation and modality, through the public ``extract``."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from hermes_memory.extract import ExtractionResult, KnownEntities, KnownEntity, MessageInput, extract
from hermes_memory.extract.relations import _verb_pattern, verb_matches
from hermes_memory.extract.wording import render, third_person

NOW = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def run(text: str, speaker: str = "Caroline", addressee: str | None = "Melanie") -> ExtractionResult:
    return extract(MessageInput(text=text, time=NOW, speaker=speaker, addressee=addressee))


def triples(result: ExtractionResult) -> set[tuple[str, str, str, bool]]:
    return {(r.subject, r.predicate, r.object, r.negated) for r in result.relations}


def fact_keys(result: ExtractionResult) -> set[tuple[str, str, str | None]]:
    return {(f.subject, f.predicate, f.object) for f in result.facts}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I work at Google.", ("Caroline", "works_at", "Google")),
        ("I've been working for Acme Corp since March.", ("Caroline", "works_at", "Acme Corp")),
        ("I live in Boston.", ("Caroline", "lives_in", "Boston")),
        ("I moved to Denver last year.", ("Caroline", "moved_to", "Denver")),
        ("I moved here from Sweden.", ("Caroline", "moved_from", "Sweden")),
        ("I'm originally from Sweden.", ("Caroline", "is_from", "Sweden")),
        ("I love hiking.", ("Caroline", "likes", "hiking")),
        ("I really enjoy pottery!", ("Caroline", "likes", "pottery")),
        ("I hate spiders.", ("Caroline", "dislikes", "spiders")),
        ("I'm married to John.", ("Caroline", "married_to", "John")),
        ("I joined the Sierra Club.", ("Caroline", "member_of", "Sierra Club")),
        ("I use Python every day.", ("Caroline", "uses", "Python")),
        ("I study at Stanford.", ("Caroline", "studies_at", "Stanford")),
        ("I visited Paris in 2019.", ("Caroline", "visited", "Paris")),
        ("I play guitar.", ("Caroline", "plays", "guitar")),
        ("I have a dog.", ("Caroline", "has_pet", "Caroline's dog")),
        ("I adopted a puppy named Max.", ("Caroline", "adopted", "Max")),
        ("My sister Anna lives in Denver.", ("Anna", "lives_in", "Denver")),
        ("I'm a nurse at Mercy Hospital.", ("Caroline", "works_at", "Mercy Hospital")),
        # the relation "Ruth is my manager" gives, said with the verb
        ("I report directly to Ruth Adeyemi.", ("Caroline", "reports_to", "Ruth Adeyemi")),
    ],
)
def test_pattern_families(text: str, expected: tuple[str, str, str]) -> None:
    assert (*expected, False) in triples(run(text))


@pytest.mark.parametrize(
    ("text", "predicate", "obj"),
    [
        ("I went to a LGBTQ support group yesterday.", "attended", "LGBTQ support group"),
        ("I started learning the piano.", "started", "learning the piano"),
        ("I want to become a counselor.", "wants", "become a counselor"),
        ("I'm planning to move to Boston.", "plans", "move to Boston"),
        ("I'm a transgender woman.", "is_a", "transgender woman"),
        ("I'm working on a new novel.", "works_on", "new novel"),
    ],
)
def test_facts_without_named_objects_keep_predicate_and_object(text: str, predicate: str, obj: str) -> None:
    assert ("Caroline", predicate, obj) in fact_keys(run(text))


def test_negation() -> None:
    result = run("I don't like spiders. I no longer live in Sweden. I never use Excel.")
    assert ("Caroline", "likes", "spiders", True) in triples(result)
    assert ("Caroline", "lives_in", "Sweden", True) in triples(result)
    assert ("Caroline", "uses", "Excel", True) in triples(result)
    contents = {f.content for f in result.facts}
    assert "Caroline doesn't like spiders" in contents
    assert "Caroline no longer lives in Sweden" in contents
    assert all(not f.exclusive for f in result.facts if f.negated)


def test_used_to_makes_a_past_state_and_will_makes_a_plan() -> None:
    past = run("I used to live in Sweden.")
    assert ("Caroline", "lived_in", "Sweden", False) in triples(past)
    plan = run("I will move to Boston.")
    assert not plan.relations  # a plan is no edge in the graph
    assert ("Caroline", "plans", "move to Boston") in fact_keys(plan)


def test_questions_hypotheticals_and_relative_clauses_state_nothing() -> None:
    assert not run("Do you live in Boston?").facts
    assert not run("Did you move to Denver").relations
    assert not run("I would move to Denver if I could.").relations
    assert not run("The things I love make writing fun.").relations


def test_things_depend_on_things() -> None:
    known = KnownEntities([KnownEntity("Hermes", "project")])
    result = extract(MessageInput(text="Hermes depends on SQLite.", time=NOW, speaker="Caroline"), known)
    assert ("Hermes", "depends_on", "SQLite", False) in triples(result)
    [fact] = result.facts
    assert (fact.category, fact.content) == ("domain", "Hermes depends on SQLite")
    relying = run("I depend on my family.")
    assert "depends_on" not in {r.predicate for r in relying.relations}  # people rely, things depend


def test_you_resolves_to_the_addressee() -> None:
    result = run("You work at Google, right.")
    assert ("Melanie", "works_at", "Google", False) in triples(result)
    assert [f.content for f in result.facts] == ["Melanie works at Google"]


def test_coordinated_objects_each_get_a_relation_and_fact() -> None:
    result = run("I use Python and Docker.")
    assert {("Caroline", "uses", "Python", False), ("Caroline", "uses", "Docker", False)} <= triples(result)
    assert {"Python", "Docker"} <= {f.object for f in result.facts}


def test_exclusive_predicates_are_marked_for_supersession() -> None:
    [fact] = [f for f in run("I live in Boston.").facts if f.predicate == "lives_in"]
    assert fact.exclusive
    [like] = [f for f in run("I love hiking.").facts if f.predicate == "likes"]
    assert not like.exclusive


def test_verb_prefix_scan_equals_a_full_scan() -> None:
    sentences = [
        "I'm keen on counseling and I'd love to help.", "We've got two dogs and I adopted a cat.",
        "Gonna start painting; I can't stand waiting.", "She's been living in Rome, I moved to Oslo.",
        "I was using Docker and relying on Redis.", "I'm a fan of jazz, I graduated from MIT.",
    ]
    for sentence in sentences:
        full = [(m.start(), m.end()) for m in _verb_pattern().finditer(sentence)]
        fast = [(m.start(), m.end()) for m in verb_matches(sentence)]
        assert fast == full, sentence


def test_render_and_third_person() -> None:
    assert render("Caroline", "moved_to", "Boston", False, "place") == "Caroline moved to Boston"
    assert render("Caroline", "likes", "spiders", True, "concept") == "Caroline does not like spiders"
    assert render("Caroline", "adopted", "dog", False, "thing") == "Caroline adopted a dog"
    assert [third_person(v) for v in ("love", "go", "try", "am", "went", "watch", "don't")] == [
        "loves", "goes", "tries", "is", "went", "watches", "doesn't"]


def test_relation_names_match_entity_names() -> None:
    result = run("My husband and I moved to Denver. I love hiking with my dog Rex.")
    names = {e.name for e in result.entities}
    for relation in result.relations:
        assert relation.subject in names and relation.object in names
    assert re.fullmatch(r"[a-z_]+", "".join(r.predicate for r in result.relations))


def test_only_pastimes_become_concept_nodes() -> None:
    result = run("I love hiking in the mountains. I love sinking into magical worlds. I play guitar nonstop.")
    assert {r.object for r in result.relations} == {"hiking", "guitar"}
    objects = {f.object for f in result.facts}
    assert "sinking into magical worlds" in objects  # still a fact, just no graph node


@pytest.mark.parametrize(
    "text",
    [
        "I'm moving to Utrecht next month.",
        "My sister Clara is moving to Berlin in June.",
        "I'm joining Figma!",
    ],
)
def test_a_change_said_in_the_progressive_is_still_ahead(text: str) -> None:
    result = run(text)
    assert not {k for k in fact_keys(result) if k[1] in ("moved_to", "lives_in", "member_of")}
    assert "plans" in {f.predicate for f in result.facts}
    assert not [r for r in result.relations if r.predicate in ("moved_to", "lives_in", "member_of")]


def test_studying_a_subject_at_a_school_names_the_school() -> None:
    result = run("I study computer science at TU Delft.")
    assert ("Caroline", "studies_at", "TU Delft") in fact_keys(result)
    assert ("Caroline", "studies_at", "TU Delft", False) in triples(result)
