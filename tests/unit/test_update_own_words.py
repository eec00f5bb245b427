"""Readings that let a change said in one's own words reach the decision: a clause that names the old
value among words of its own, a remark with a mood of its own closing a clause, a state not gone on
with, an activity in progress given up, what one does or belongs to given up, and a role held to one
person at a time said again by its verb.

The sentences here are written for these tests; none is taken from the labelled corpus.
"""

from __future__ import annotations

import pytest

from hermes_memory.extract.kin import ONE_AT_A_TIME
from hermes_memory.updates.detector import UpdateDetector
from hermes_memory.updates.endings import abandons, completes, retains, sets_aside
from hermes_memory.updates.events import setting_only
from hermes_memory.updates.model import Cues, evidence, packaged
from hermes_memory.updates.readings import negates_itself
from hermes_memory.updates.shape import another_by_role, fills_slot
from hermes_memory.updates.statement import read


def test_a_clause_of_its_holder_naming_the_old_value_in_words_of_its_own_is_no_restatement() -> None:
    """ "I let my Curzon membership lapse" names the cinema the user was a member of, in words the old
    statement did not say: it tells something new of it, and the decision weighs it. Said again in its
    own words ("I'm a member at Curzon"), or with the old value as the subject ("Curzon is still where
    I see films"), it restates; so does a clause that adds only words the old one had."""
    old = read("I'm a member at Curzon")
    assert not UpdateDetector.repeats(read("I let my Curzon membership lapse"), old)
    assert not UpdateDetector.repeats(read("I've moved my film nights to the Everyman, Curzon got dear"), old)
    assert UpdateDetector.repeats(read("I'm a member at Curzon"), old)
    assert UpdateDetector.repeats(read("Curzon is still where I see films"), old)
    course = read("my course is geology at Bristol")
    assert not UpdateDetector.repeats(read("I'm in the archaeology programme at Bristol"), course)
    assert UpdateDetector.repeats(read("Bristol is where I study geology"), course)


@pytest.mark.parametrize(
    ("text", "asserts"),
    [
        ("I'm pretty much done with Duolingo, not gonna lie", True),
        ("I sold the kayak, might buy a paddleboard one day", True),
        ("I'm moving to Leeds, probably", False),  # an adverb alone: the mood of the clause it closes
        ("I might sell the kayak, not sure yet", False),
        ("kind of, not gonna lie", False),  # nothing before it with a verb of its own
        ("I'll switch to Emacs, should be fun", False),
        # someone's words after a whole clause told in the past: a remark on it, whatever their mood
        ("Kofi sold the van in June, he says he won't miss it", True),
        ("Marta quit the choir, she says it clashed with work", True),
        ("Kofi, my uncle, says he sold the van", False),  # no verb before the comma: the report is the clause
    ],
)
def test_a_closing_remark_with_its_own_mood_leaves_its_clause_asserting(text: str, asserts: bool) -> None:
    """ "..., not gonna lie" closes a clause with a remark of its own, a modal verb and the verb it
    governs with no subject before them: the clause before it still asserts; so does a report of
    someone's words after a clause with a verb of its own, in the past too. A modal adverb alone
    qualifies the clause it closes, and a modal in the clause itself makes it a possibility or a plan."""
    assert read(text).asserts is asserts


@pytest.mark.parametrize(
    "text",
    [
        "Didn't renew with the climbing wall this year",
        "I never went back to the choir after the summer",
        "didn't stay on at the allotment society",
    ],
)
def test_a_state_not_gone_on_with_is_asserted_and_negated(text: str) -> None:
    """A negated event of an aspectual verb of going on (renewing, going back, staying on) tells that a
    state ended: it asserts, negated, as "not ... anymore" does. Any other negated event tells that a
    change did not happen, and asserts nothing."""
    said = read(text)
    assert said.asserts and said.negated
    assert read("I didn't leave the choir").why_not == "negated"
    assert read("Didn't renew my passport in time, so no trip").asserts  # a state not gone on with


def test_an_activity_in_progress_given_up_is_over() -> None:
    """ "I pulled out of the Leeds half" ends "I'm training for the Leeds half" as finishing it would;
    stopping it may be a pause, and a habit is not ended by one session given up."""
    old = read("I'm training for the Leeds half")
    assert completes(old, read("I pulled out of the Leeds half with a bad knee"))
    assert completes(old, read("Gave up on the Leeds half in the end"))
    assert completes(old, read("Finished the Leeds half in 1:52"))
    assert not completes(old, read("Stopped the Leeds half training run halfway, too hot"))
    habit = read("I run with the Leeds harriers")
    assert not completes(habit, read("I pulled out of the Leeds harriers race"))


@pytest.mark.parametrize(
    "text",
    [
        "I left the choir in the spring",
        "Quit the choir, too much travel",
        "I finally gave up the choir after ten years",
        "Dropped out of the gospel choir",
        "quit the choir for good, the new director is awful",  # "for" and no span of time
        "I left the choir for a jazz group",  # for something else
    ],
)
def test_giving_up_what_one_does_or_belongs_to_ends_it(text: str) -> None:
    """A verb of abandoning whose object is what the old statement says the holder does or belongs to,
    ending the clause (or followed by a pause, a conjunction or a time), ends it whatever the attribute:
    the choir one left is no longer the choir one sings in."""
    assert abandons(read("I sing alto in a gospel choir on Sundays"), read(text))


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("I sing alto in a gospel choir", "I left the choir rehearsal at nine"),  # a place and a time
        ("I sing alto in a gospel choir", "I left the choir to fetch the car"),  # a purpose
        ("I sing alto in a gospel choir", "I didn't leave the choir"),  # negated
        ("I sing alto in a gospel choir", "I might quit the choir"),  # a possibility
        ("I sing alto in a gospel choir", "I left the orchestra"),  # something else
        ("I used to sing in a choir", "I left the choir"),  # a habit of the past, over already
        ("Sam sings alto in a gospel choir", "I left the choir"),  # someone else's
    ],
)
def test_giving_up_ends_nothing_but_what_the_holder_does_now(old: str, new: str) -> None:
    assert not abandons(read(old), read(new))


def test_leaving_a_thing_somewhere_or_for_a_while_is_an_episode_with_it() -> None:
    """The same verbs with a place, a company or a span after their object set the thing aside: the
    cello left with the teacher is still played, Figma quit for a bit is still used. A time after it,
    or nothing, gives it up; a purpose may do either, and is left to the decision."""
    cello = read("I play the cello in a youth orchestra")
    assert sets_aside(cello, read("Left my cello with my teacher over the holidays"))
    figma = read("I design everything in Figma")
    assert sets_aside(figma, read("Quit Figma for a bit, my laptop was overheating"))
    assert sets_aside(figma, read("Quit Figma for a couple of days while the update installed"))
    assert not sets_aside(figma, read("Quit Figma for good, the subscription went up again"))
    assert not sets_aside(cello, read("I left the orchestra in March"))
    assert not sets_aside(cello, read("I left the orchestra to focus on my exams"))


@pytest.mark.parametrize(
    "text",
    [
        "Got a new laptop, but I kept Proton as my mail provider",
        "We're sticking with Proton for email",
        "Stayed with Proton when the price went up",
        "looked at Fastmail but staying on proton for now",  # "on", "at" as well as "with"
        "Tried Fastmail for a week, Proton stays though",  # what is kept as the subject
        "I still pay for Proton, it's worth it",  # "still" in the present, naming it
    ],
)
def test_what_one_kept_still_holds(text: str) -> None:
    """A verb of keeping whose object (or subject) names the old value, or "still" with it, says it still
    holds, whatever else the message changes."""
    assert retains(read("My email provider is Proton Mail"), read(text))


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("My email provider is Proton Mail", "I didn't keep Proton after the trial"),  # negated
        ("My email provider is Proton Mail", "I kept the old laptop as a backup"),  # something else kept
        ("Sam's email provider is Proton Mail", "I kept Proton"),  # someone else's
        ("My email provider is Proton Mail", "I still can't decide about Fastmail"),  # "still", not naming it
        ("My email provider is Proton Mail", "Proton stayed free for a year, then I left"),  # told as over
    ],
)
def test_keeping_says_nothing_of_what_it_does_not_name(old: str, new: str) -> None:
    """Keeping something else, not keeping it, or someone else's value, says nothing of it."""
    assert not retains(read(old), read(new))


def test_a_role_of_one_person_at_a_time_said_by_its_verb_takes_another() -> None:
    """The relations one holds to one person at a time are read off the kin lexicon (no role word of
    theirs has a plural beside it): a manager, a spouse, a partner; not a friend or a sister. Both
    statements saying such a role by its verb with different people fill one slot, and that is evidence
    of a change; a friend by the verb, or the same person again, is not."""
    assert {"reports_to", "married_to", "partner_of"} <= ONE_AT_A_TIME
    assert not {"friend_of", "sibling_of", "colleague_of", "child_of"} & ONE_AT_A_TIME
    old = read("I report to Henrike Maas")
    new = read("I report to Osman Tekin, he runs the data team")
    assert another_by_role(old, new) and fills_slot(old, new)
    assert evidence(old, new, (), Cues(), 0.5)
    assert not another_by_role(old, read("I report to Henrike Maas and Osman Tekin"))
    assert not another_by_role(old, read("I reported to Osman Tekin for a year"))  # told in the past
    assert not another_by_role(read("I'm friends with Juno"), read("I'm friends with Pia"))


def test_a_negation_in_a_part_about_someone_else_is_not_the_holders() -> None:
    """A negation only in a part of the clause that a pronoun for someone else opens ("they wouldn't
    hold the table") is theirs: the holder's event stays an episode. One in a part about the holder,
    or about no one in particular, may be the holder's."""
    said = read("paid the £20 deposit for Baan Thai, they wouldn't hold the table without one")
    assert said.negated and not negates_itself(said)
    # and "they" goes on about the restaurant, not about the user whose booking it is
    assert setting_only(read("Table at Baan Thai for my birthday on the 28th, 8pm"), said)
    assert negates_itself(read("Booked the Thai place, we never go anywhere else"))
    assert negates_itself(read("Cancelled the Thai place, wasn't in the mood"))
    assert not negates_itself(read("Booked the Thai place for Friday"))


def test_a_past_event_with_an_additive_particle_ends_only_what_it_names() -> None:
    """ "also got tickets for the cup game" adds one more event beside the league game; "also sold the
    Golf" acts on the car it names and may end it."""
    cues = packaged().cues
    league = read("United game on Saturday, 3pm kick off, me and my brother")
    assert not evidence(league, read("also got tickets for the cup game the week after"), (), cues, 0.5)
    golf = read("I drive a VW Golf")
    assert evidence(golf, read("also sold the Golf last week"), (), cues, 0.5)
