"""How a message is read for updates beyond its clauses: what an apposition in it sets.

The sentences here are written for these tests; none is taken from the labelled corpus.
"""

from __future__ import annotations

import pytest

from hermes_memory.updates.message import apposed, read_message
from hermes_memory.updates.shape import fills_slot
from hermes_memory.updates.statement import USER, read


@pytest.mark.parametrize(
    ("clause", "said"),
    [
        ("My landlady, Mrs Okonkwo, fixed the boiler", ["my landlady is Mrs Okonkwo"]),
        ("Prof. Varga, my thesis supervisor, wants a draft by May", ["my thesis supervisor is Prof. Varga"]),
        ("our new vet, Hannah Berg, was lovely with the cat", ["our new vet is Hannah Berg"]),
        ("Thanks, my friend, that was kind", []),  # a word of address, no name beside it
        ("Lovely, my dear, see you soon", []),
        ("my team is great, Jonas says so", []),  # no role set off by commas beside the name
        ("I told my manager about it", []),
        ("Yesterday Ilse Kramer, my physio, moved clinics", ["my physio is Ilse Kramer"]),
    ],
)
def test_an_apposition_says_who_holds_a_role(clause: str, said: list[str]) -> None:
    assert [s.replace("our ", "my ") for s in apposed(clause)] == [s.replace("our ", "my ") for s in said]


def test_the_reading_of_an_apposition_is_stated_by_its_clause() -> None:
    message = read_message("Hi! Dr. Ferreira, my physio, reckons my knee is fine. Back to running soon.")
    readings = [(clause, statement.normal, statement.holder) for clause, statement in message]
    clause = "Dr. Ferreira, my physio, reckons my knee is fine"
    assert (clause, "the user's physio is Dr. Ferreira", USER) in readings
    assert [c for c, _, _ in readings].count(clause) == 2  # the clause as said, and what it sets


def test_a_role_named_by_an_apposition_fills_the_slot_its_earlier_holder_had() -> None:
    earlier = read("My physio is Dr. Lindgren")
    (_, as_said), (_, said) = read_message("Dr. Ferreira, my physio, says hi")
    assert not as_said.asserts  # what the physio says is reported speech
    assert fills_slot(earlier, said)
    assert not fills_slot(read("My dentist is Dr. Lindgren"), said)  # another role


@pytest.mark.parametrize(
    ("message", "holders"),
    [
        # "he" / "she" after a clause about someone else is that someone
        ("My brother Idris moved to Leeds. He's a paramedic there now.", ["Idris", "Idris"]),
        ("Mum retired in May - she teaches pottery now", ["user's mum", "user's mum"]),
        # but not after a clause about the speaker: whoever "she" is, the message does not say
        ("I met up with the team. She's a paramedic now.", [USER, None]),
        # a clause with its own subject keeps its own holder
        ("My brother Idris moved to Leeds. I stayed in York.", ["Idris", USER]),
    ],
)
def test_a_clause_goes_on_from_the_one_before_it(message: str, holders: list[str | None]) -> None:
    assert [s.holder for _, s in read_message(message)] == holders


def test_a_fragment_answering_a_question_with_no_verb_says_what_it_names() -> None:
    """ "Go-to pizza place? Franco's, no contest." says the speaker's go-to pizza place is Franco's; a
    question with a verb of its own, or an answer with one, is read as said."""
    read = [s.normal for _, s in read_message("Go-to pizza place? Franco's, no contest.")]
    assert read[-1] == "the user's go-to pizza place is Franco's, no contest", read
    for message in ("Where do I get pizza? Franco's, no contest.", "Go-to pizza place? I love Franco's."):
        assert not any(" is " in s.normal for _, s in read_message(message)), message


@pytest.mark.parametrize(
    ("message", "said"),
    [
        ("Netflix? Cancelled. Nobody watched it.", "I cancelled Netflix"),  # a name the memory knows
        ("Cigarettes? Quit in March, finally.", "Quit in March, finally"),  # an answer with words of its own
        ("Karate? Binned it after the grading.", "I binned karate after the grading"),
        ("The allotment? Gave it up in May.", "I gave the allotment up in May"),
        ("Yoga? We dropped it in May.", "We dropped yoga in May"),  # a subject of its own
    ],
)
def test_a_verb_answering_a_question_with_no_verb_says_what_befell_it(message: str, said: str) -> None:
    """A verb alone, or with "it" or "them" as its object, answering a question about a thing says what
    befell that thing: "Netflix? Cancelled." is "I cancelled Netflix" (the "I" chat drops said); the clause
    as said stays read too."""
    read = [s.text for _, s in read_message(message, things=["netflix"])]
    assert said in read, read


@pytest.mark.parametrize(
    ("message", "said"),
    [
        ("Why? Cancelled, they said.", ["Cancelled, they said"]),  # a question word asks about nothing
        ("Seriously? Quit!", []),  # nor does an adverb; a word alone is no clause
        ("Did you go? Cancelled.", ["Did you go?"]),  # a question with a verb of its own names no topic
        ("Netflix. Cancelled.", []),  # no question
        ("Netflix? We love it.", ["We love it"]),  # "it" is the object of no verb form
        ("Your car? Sold it.", ["Your car?", "Sold it"]),  # the listener's car is none of the speaker's
    ],
)
def test_only_a_question_naming_a_thing_lends_it_to_the_answer(message: str, said: list[str]) -> None:
    assert [s.text for _, s in read_message(message)] == said


@pytest.mark.parametrize(
    ("message", "holder", "normal"),
    [
        ("The band rehearses at Blackbird Studios on Tuesdays", USER,
         "the user's band rehearses at Blackbird Studios on Tuesdays"),
        ("the office runs everything through Asana", USER, "the user's office runs everything through Asana"),
        ("The kids take the 8:10 bus", "user's kids", "the user's kids take the 8:10 bus"),
        # no name or number: what it goes by is not said; and a past event sets nothing now
        ("The weather is miserable again", None, "The weather is miserable again"),
        ("The band played Glastonbury in 2019", None, "The band played Glastonbury in 2019"),
    ],
)  # fmt: skip
def test_a_thing_of_the_speakers_world_named_with_the_is_theirs(message: str, holder: str | None,
                                                                 normal: str) -> None:  # fmt: skip
    ((_, statement),) = read_message(message)
    assert (statement.holder, statement.normal) == (holder, normal)


@pytest.mark.parametrize(
    ("clause", "stated"),
    [
        ("I see a physio called Ben", True),  # whom one consults: a fact of its own
        ("I see Dr. Amadi every month", True),
        ("I see what you mean", False),  # small talk
        ("I see, that makes sense", False),
    ],
)
def test_seeing_someone_is_no_small_talk(clause: str, stated: bool) -> None:
    from hermes_memory.updates.writer import StatementUpdates

    known = frozenset({"ben", "amadi"})  # the people the memory knows are no values of their own
    assert StatementUpdates.stated(read(clause, holders=known), clause) is stated
