"""The English the model reads: relation predicates, verb agreement and possessives in rewritten facts."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.extract import MessageInput, extract
from hermes_memory.extract.wording import render

NOW = datetime(2026, 11, 20, tzinfo=UTC)
FINITE = frozenset("is was has does did never bought went grew began".split())


def facts(text: str, speaker: str | None = None) -> list[str]:
    return [f.content for f in extract(MessageInput(text, NOW, speaker=speaker, role="user")).facts]


def produced_predicates() -> set[str]:
    """Every relation predicate the extractor and the graph can produce."""
    from hermes_memory.extract.kin import KIN_PREDICATES
    from hermes_memory.extract.relations import PAST_FORMS, PREDICATES
    from hermes_memory.graph.builder import SYMMETRIC_RELATION_TYPES

    return set(PREDICATES) | set(KIN_PREDICATES) | set(PAST_FORMS.values()) | set(SYMMETRIC_RELATION_TYPES)


def test_every_predicate_the_code_produces_has_its_english() -> None:
    from hermes_memory.extract.phrasing import PREDICATE_PHRASES

    predicates = produced_predicates()
    assert {"colleague_of", "parent_of", "sibling_of", "child_of", "relative_of", "knows"} <= predicates
    assert predicates <= set(PREDICATE_PHRASES), sorted(predicates - set(PREDICATE_PHRASES))
    for predicate in sorted(predicates):
        for negated in (False, True):
            text = render("Alice", predicate, "Bob", negated, "person")
            assert text.startswith("Alice ") and " Bob" in text, (predicate, text)
            verb = text.split()[1]  # a finite verb follows the subject: never "Alice colleague of Bob"
            assert verb in FINITE or verb.endswith(("s", "ed")), text
            assert ("not" in text.split() or "never" in text.split()) == negated, text


def test_relation_predicates_read_as_english() -> None:
    expected = {
        "colleague_of": "the user is a colleague of Tom",
        "parent_of": "the user is a parent of Tom",
        "child_of": "the user is a child of Tom",
        "sibling_of": "the user is a sibling of Tom",
        "relative_of": "the user is a relative of Tom",
        "knows": "the user knows Tom",
        "works_with": "the user works with Tom",
        "similar_to": "the user is similar to Tom",
        "same_as": "the user is the same as Tom",
    }
    assert {p: render("the user", p, "Tom", False, "person") for p in expected} == expected


def test_an_unknown_predicate_still_reads_as_english() -> None:
    # A relation named by the LLM or by a caller is worded by its shape, not printed as it is.
    expected = {
        "manager_of": "Linda is a manager of Tom",
        "mentor": "Linda is a mentor of Tom",
        "part_of": "Linda is part of Tom",
        "is_part_of": "Linda is part of Tom",
        "reports_to": "Linda reports to Tom",
        "report_to": "Linda reports to Tom",
        "born_in": "Linda was born in Tom",
        "located_in": "Linda is located in Tom",
        "employed_by": "Linda is employed by Tom",
        "close_to": "Linda is close to Tom",
        "founded": "Linda founded Tom",
        "manage": "Linda manages Tom",
        "has_visited": "Linda has visited Tom",
        "grew_up_in": "Linda grew up in Tom",
    }
    assert {p: render("Linda", p, "Tom", False, "person") for p in expected} == expected


def test_a_plural_subject_takes_a_plural_verb_and_an_owned_object_reads_naturally() -> None:
    assert (
        render("the user's parents", "lives_in", "Ohio", False, "place") == "the user's parents live in Ohio"
    )
    assert render("Tom and Amy", "likes", "soccer", False, "concept") == "Tom and Amy like soccer"
    assert render("James", "lives_in", "Ohio", False, "place") == "James lives in Ohio"  # a name, singular
    assert render("the user", "has_pet", "the user's dog", False, "pet") == "the user has a dog"
    assert render("the user", "sibling_of", "the user's sister", False, "person") == "the user has a sister"
    assert render("the user", "likes", "the user's job", False, "concept") == "the user likes their job"


def test_an_entity_card_words_its_relations_as_english(open_api: Callable[..., MemoryAPI]) -> None:
    api = open_api()
    turns = ["My manager Tom is great.", "My son Leo started school.", "My mom Maria is visiting soon."]
    for i, text in enumerate(turns):
        assert api.remember_turn(text, "Noted.", "s1", turn_id=f"t{i}")["success"]
    api.flush()
    cards: dict[str, str] = {}
    for name in ("Tom", "Leo", "Maria"):
        hits = api.recall(name, limit=12)["data"]["hits"]
        cards[name] = next(h["text"] for h in hits if h["kind"] == "entity" and h["text"].startswith(name))
    assert "the user reports to Tom" in cards["Tom"], cards
    assert "the user is a parent of Leo" in cards["Leo"], cards
    assert "the user is a child of Maria" in cards["Maria"], cards
    for card in cards.values():
        assert not re.search(r"the user (?:colleague|parent|child|reports_to) ", card), card


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        (
            "I switched jobs last year and now work at Bosch.",
            "The user switched jobs in 2025 and now works at Bosch",
        ),
        ("I work at Google and live in Zurich.", "The user works at Google and lives in Zurich"),
        ("I'm a nurse and love my job.", "The user is a nurse and loves their job"),
        ("I play guitar and sing in a band.", "The user plays guitar and sings in a band"),
        (
            "I wake up at 6, go for a run and eat breakfast.",
            "The user wakes up at 6, goes for a run and eats breakfast",
        ),
        (
            "I work from home and rarely leave my apartment.",
            "The user works from home and rarely leaves their apartment",
        ),
        ("I have two kids and live in Ohio.", "The user has two kids and lives in Ohio"),
        # after a bare comma, a word that is a verb and an adjective describes when a preposition follows
        ("I rent a flat in Porto, close to the sea.", "The user rents a flat in Porto, close to the sea"),
        ("I rent a flat, open to the garden.", "The user rents a flat, open to the garden"),
        ("I don't eat meat and avoid dairy too.", "The user doesn't eat meat and avoids dairy too"),
        (
            "I've lived here for years and know everyone.",
            "The user has lived here for years and knows everyone",
        ),
        # a verb ending in "-eed" is no past form ("need", "succeed"); "agreed" and "freed" are
        ("I breed Bengal cats in Leeds.", "The user breeds Bengal cats in Leeds"),
        ("I feed next door's chickens at weekends.", "The user feeds next door's chickens at weekends"),
        ("I agreed to coach the under-tens.", "The user agreed to coach the under-tens"),
    ],
)
def test_every_verb_after_a_third_person_subject_agrees(said: str, expected: str) -> None:
    assert expected in facts(said)


@pytest.mark.parametrize(
    ("said", "expected"),
    [  # an adverb in -ly is read by its ending, whichever it is; a verb in -ly is still the verb
        ("I genuinely adore pottery.", "The user genuinely adores pottery"),
        ("I gradually stopped cycling to work.", "The user gradually stopped cycling to work"),
        ("I occasionally teach yoga at the lido.", "The user occasionally teaches yoga at the lido"),
        ("I rely on my bike to get around.", "The user relies on their bike to get around"),
        ("I apply for two jobs every week.", "The user applies for two jobs every week"),
        ("I wanna learn Portuguese.", "The user wants to learn Portuguese"),
    ],
)
def test_the_verb_after_an_adverb_agrees_and_the_adverb_keeps_its_form(said: str, expected: str) -> None:
    assert expected in facts(said)


@pytest.mark.parametrize(
    ("said", "expected"),
    [  # verbs under "to" or a modal, and nouns after "and", keep their form
        ("I like to cook and bake on weekends.", "The user likes to cook and bake on weekends"),
        ("I can swim and dance.", "The user can swim and dance"),
        ("I want to travel and see the world.", "The user wants to travel and see the world"),
        ("I drink tea and coffee every morning.", "The user drinks tea and coffee every morning"),
        # "like" after a bare comma compares: no verb of the subject's
        ("I collect maps, like the one from Lisbon.", "The user collects maps, like the one from Lisbon"),
    ],
)
def test_verbs_outside_the_subject_s_reach_are_left_alone(said: str, expected: str) -> None:
    assert expected in facts(said)
    # while a verb after a time adverb starts a predicate of its own, and agrees
    assert "The user quit and now works at Bosch" in facts(said + " I quit and now work at Bosch.")


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        ("I cook for all my friends on Sundays.", "The user cooks for all their friends on Sundays"),
        ("I made up my mind to learn Rust.", "The user made up their mind to learn Rust"),
        ("I spend most of my free time painting.", "The user spends most of their free time painting"),
        (
            "I met a friend of mine for coffee yesterday.",
            "The user met a friend of theirs for coffee on 19 November 2026",
        ),
        ("We sold our house and moved to Spain.", "The user sold their house and moved to Spain"),
        (
            "I asked my sister to help me with my move.",
            "The user asked their sister to help them with their move",
        ),
        ("Me and my husband went to Paris.", "The user and their husband went to Paris"),
        ("My boss told me to take my time.", "The user's boss told the user to take their time"),
    ],
)
def test_possessives_after_the_speaker_is_named_read_as_english(said: str, expected: str) -> None:
    assert expected in facts(said)


def test_a_possessive_before_the_speaker_is_named_keeps_the_name() -> None:
    # Until the speaker is named as a person in the clause, "their" would point at someone else.
    assert "Caroline's boss Linda approved Caroline's vacation" in facts(
        "My boss Linda approved my vacation.", speaker="Caroline"
    )
    assert "Caroline's dad taught Caroline how to fish" in facts(
        "My dad taught me how to fish.", speaker="Caroline"
    )
    # nor when someone else was named since: "their" would be Anna's
    assert "Caroline told Anna about Caroline's trip to Rome" in facts(
        "I told Anna about my trip to Rome.", speaker="Caroline"
    )
    assert "Caroline cooks for all their friends" in facts("I cook for all my friends.", speaker="Caroline")


def test_a_named_relative_is_worded_with_the_right_article_and_number() -> None:
    assert "The user has a boss named Linda" in facts("My boss Linda is strict.")
    assert "The user has an older sister named Emma" in facts("My older sister Emma lives in Rome.")
    assert "The user has an uncle named Bob" in facts("My uncle Bob visited.")
    assert "The user's kids include Tom" in facts("My kids Tom and Amy love soccer.")


def test_every_fact_reads_as_a_sentence() -> None:
    """A fact opens with a capital letter, as the model reads it: the relatives, pets and roles a message
    names included ("The user has a manager named Tobias", not "the user has ..."); a name in mixed case
    keeps its spelling."""
    said = [
        "Tobias is my manager now.", "I have two cats, Pixel and Nova.", "My partner, Alex, says hi.",
        "My wife Julia works at SAP.", "Rex is my dog.", "My sister Ana lives in Porto.", "I sell on eBay.",
    ]  # fmt: skip
    found = [f for text in said for f in facts(text)]
    assert len(found) >= len(said)
    assert [f for f in found if not f[:1].isupper()] == []
    assert "The user has a manager named Tobias" in found
    assert "The user sells on eBay" in found


def test_the_addressee_is_worded_like_the_speaker() -> None:
    def said_to_jon(text: str) -> list[str]:
        return [f.content for f in extract(MessageInput(text, NOW, speaker="Sam", addressee="Jon")).facts]

    assert "Jon moved to Berlin by themself in 2025" in said_to_jon(
        "You moved to Berlin by yourself last year."
    )
    assert "Jon works at Acme and loves their job" in said_to_jon("You work at Acme and love your job.")
    assert "Jon visited Paris with their sister" in said_to_jon("You visited Paris with your sister.")


def test_a_clause_in_the_third_person_agrees_with_its_new_subject() -> None:
    from hermes_memory.extract.wording import in_third_person

    assert in_third_person("I've been vegan for years and still love it", "the user") == (
        "The user has been vegan for years and still loves it"
    )
    assert in_third_person("Swapped my Kobo for a Kindle", "Bob") == "Bob swapped their Kobo for a Kindle"
    assert in_third_person("I need a quieter flat", "Bob") == "Bob needs a quieter flat"  # no past form
    assert in_third_person("Could you remind me on Friday", "the user") is None  # spoken to someone


def test_the_speaker_as_a_subject_agrees_and_every_other_word_stays() -> None:
    from hermes_memory.extract.wording import first_person_as

    assert first_person_as("I am sending you the photos", "Bob") == "Bob is sending you the photos"
    assert first_person_as("I really owe you one", "Bob") == "Bob really owes you one"
    assert first_person_as("I have told you I do yoga", "Bob") == "Bob has told you Bob does yoga"
    assert first_person_as("We've got tickets for you", "Ana") == "Ana and others have got tickets for you"
    assert first_person_as("I miss you, so I call often", "Bob") == "Bob misses you, so Bob calls often"
    # A stored fact read back in the first person keeps its verb: "the user reports" -> "I reports".
    assert first_person_as("I reports to Tobias", "the user") == "the user reports to Tobias"


def test_us_in_capitals_is_the_country(open_api: Callable[..., MemoryAPI]) -> None:
    from hermes_memory.updates.person import as_the_user, in_words_of_the_user

    assert in_words_of_the_user("My sister lives in the US now") == "the user's sister lives in the US now"
    assert as_the_user("standup moved since the US folks joined") == "standup moved since the US folks joined"
    assert as_the_user("Tom had dinner with us") == "Tom had dinner with the user"
    assert as_the_user("TELL US MORE") == "TELL the user MORE"  # among words in capitals: the pronoun
    assert as_the_user("please TELL US more") == "please TELL the user more"
    api = open_api()
    assert api.remember_turn("My sister Ana lives in the US now.", "Noted.", "s1", turn_id="t1")["success"]
    api.flush()
    facts = [h["text"] for h in api.recall("where does my sister live?", limit=12)["data"]["hits"]]
    assert any("Ana lives in the US" in f for f in facts), facts
    assert not any("the the user" in f or "the user and others" in f for f in facts), facts
