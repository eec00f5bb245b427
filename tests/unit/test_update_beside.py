"""What a new statement says beside the old one rather than in its place: the old value named again as
the subject of a clause about the user's, an additive particle, and an episode of the old value that
names another one; and an activity said to have ceased.

The sentences here are written for these tests; none is taken from the labelled corpus.
"""

from __future__ import annotations

from hermes_memory.updates.detector import UpdateDetector
from hermes_memory.updates.endings import affirms, ceases
from hermes_memory.updates.events import names_another
from hermes_memory.updates.model import Cues, episode_of, evidence
from hermes_memory.updates.readings import additive, values
from hermes_memory.updates.statement import read


def test_the_old_value_opening_a_relative_clause_about_the_user_restates_it() -> None:
    """ "Tamsin Okoye is the person I see for my knee" after "My physio is Tamsin Okoye" names the old
    value as the subject of what the user does: it says the same thing again, whatever its cue words,
    and whether or not the memory knows the person. Another name, a role placed in the past or a
    relative clause not in the present simple may end it."""
    old = read("My physio is Tamsin Okoye")
    again = read("Tamsin Okoye is the person I see for my knee")
    assert values(again) == {"tamsin", "okoye"}
    assert values(read("Pax is the app that I trust with my keys")) == {"pax"}
    assert UpdateDetector.repeats(again, old, cued=True)
    known = read("Tamsin Okoye is the person I see for my knee", holders={"tamsin okoye"})
    assert UpdateDetector.repeats(known, old, cued=True)
    assert not UpdateDetector.repeats(read("Bruno Lacey is the person I see for my knee"), old, cued=True)
    assert not UpdateDetector.repeats(read("Tamsin Okoye is my former physio"), old, cued=True)
    assert not UpdateDetector.repeats(read("Tamsin Okoye is the physio I have dropped"), old, cued=True)


def test_an_additive_particle_says_a_state_holds_beside_the_old_one() -> None:
    """ "also", and "too" or "as well" closing a clause, add to what holds; "too" before an adjective is
    a degree, and "Also," opening a clause is a discourse marker. A present clause with the particle is
    no evidence of a change, whatever its cues; the same clause without it may be, and so may one in the
    shape of a one-valued attribute, which holds one value at a time."""
    assert additive(read("I'm also on call two Sundays a month"))
    assert additive(read("My cousin lives with us too"))
    assert additive(read("I keep a paper diary as well, for appointments"))
    assert not additive(read("The rent got too high"))
    assert not additive(read("Also, I've moved to Leith"))
    old = read("I work Monday to Friday")
    strong = Cues({"month": 3.0})
    also = read("I'm also on call two Sundays a month")
    assert not evidence(old, also, (), strong, 0.5, reads_as_change=True, confident=True)
    assert evidence(old, read("I'm on call two Sundays a month"), (), strong, 0.5)
    gp = read("My GP is Dr. Aziz")  # a one-valued slot: "too" adds to someone else's, not to the old value
    assert evidence(gp, read("Dr. Brandt is my GP now too"), (), strong, 0.5, confident=True)


def test_a_sure_decision_reads_an_episode_naming_another_value_as_a_change() -> None:
    """An event with the old value that reads as an episode ends nothing, unless the decision is sure of
    an update and the message names another value the old one could have given way to."""
    known = {"rufus"}
    old = read("Rufus's vet is Parkside Vets", holders=known)
    moved = read("Moved Rufus's records from Parkside over to Brookfield Clinic", holders=known)
    assert names_another(old, moved)
    assert not evidence(old, moved, (), Cues(), 0.5, episode=True)
    assert evidence(old, moved, (), Cues(), 0.5, episode=True, confident=True)
    visit = read("Dropped Rufus at Parkside for his jab", holders=known)
    assert not names_another(old, visit)
    assert not evidence(old, visit, (), Cues(), 0.5, episode=True, confident=True)


def test_an_aspectual_verb_of_ceasing_before_a_gerund_ends_an_activity() -> None:
    """ "stopped", "quit", "gave up" before a gerund say an activity ceased: no episode of the old value,
    however the learned ending direction reads the clause, and evidence of a change by itself. Before a
    noun phrase they may only pause something; negated or after a modal they end nothing."""
    assert ceases(read("I stopped seeing Dr Vance in the spring"))
    assert ceases(read("Mum gave up baking after her wrist op"))
    assert not ceases(read("Stopped the film halfway through"))
    assert not ceases(read("I can't stop thinking about the trip"))
    assert not ceases(read("I didn't stop swimming, I was just ill"))
    # a negation after a comma is another clause's, not the ceasing's
    assert ceases(read("I've quit running the parkrun, my ankle isn't up to it"))
    assert not ceases(read("Never once stopped rowing, whatever the weather"))
    old = read("I see a physio called Vance every Friday")
    new = read("I stopped seeing Vance in the spring")
    as_an_episode = Cues(ending=[-1.0] + [0.0] * 383)
    assert not episode_of(old, new, as_an_episode, [1.0] + [0.0] * 383)
    mum = read("Mum bakes bread every Sunday")
    assert evidence(mum, read("Mum gave up baking after her wrist op"), (), Cues(), 0.5)


def test_an_earlier_statement_with_an_additive_particle_is_one_of_several() -> None:
    """ "Tim has also taken up the cello" says it is one of several things Tim does: a new one ("Tim is
    learning Dutch now") ends none of them, however sure the decision is; a ceasing ends it. Without the
    particle the new one may."""
    known = {"tim"}
    one_of = read("Tim has also taken up the cello", holders=known)
    alone = read("Tim has taken up the cello", holders=known)
    dutch = read("Tim is learning Dutch now", holders=known)
    now = Cues({"now": 2.0})
    assert not evidence(one_of, dutch, (), now, 0.5, confident=True)
    assert evidence(alone, dutch, (), now, 0.5, confident=True)
    assert evidence(one_of, read("Tim gave up playing the cello", holders=known), (), Cues(), 0.5)


def test_a_clause_that_says_the_old_predicate_whole_affirms_it() -> None:
    """The old statement's predicate said again, whole, by the same holder in the present and unnegated
    ("since I'm lactose intolerant", "I still live in Leeds", its verb in either person) says it holds;
    more of its object ("a Pixel 8"), the past, a negation, "used to" or another holder do not."""
    lactose, leeds, pixel = read("I'm lactose intolerant"), read("I live in Leeds"), read("I have a Pixel")
    assert affirms(lactose, read("Since I'm lactose intolerant, I've swapped to oat milk instead"))
    assert affirms(leeds, read("I still live in Leeds"))
    assert affirms(read("Marta lives in Leeds"), read("Marta lives in Leeds and works in York now"))
    assert not affirms(pixel, read("I have a Pixel 8 now"))
    assert not affirms(leeds, read("I used to live in Leeds"))
    assert not affirms(leeds, read("I don't live in Leeds anymore"))
    assert not affirms(leeds, read("I lived in Leeds for years"))
    assert not affirms(leeds, read("Marta lives in Leeds"))
    assert affirms(read("I'm vegan"), read("I'm vegan, so it's oat milk for me now"))


def test_someone_named_by_their_relation_gives_way_only_to_someone_or_to_their_end() -> None:
    """ "I have a wife named Odile" holds a person's place: a first mention of a car, however the decision
    reads it, ends nothing of it. Another person in the role or an event that befalls her does; a
    statement naming no relation ("We use Travis CI") is no one's place."""
    known = frozenset({"odile", "margaux"})
    wife = read("I have a wife named Odile", holders=known)
    car = read("I drive a rusty Citroën Berlingo", holders=known)
    assert not evidence(wife, car, [], Cues(), 0.5, reads_as_change=True, confident=True)
    assert evidence(wife, read("Odile and I separated in April", holders=known), [], Cues(), 0.5)
    assert evidence(wife, read("My wife is Margaux now", holders=known), [], Cues({"now": 2.0}), 0.5)
    ci = read("We use Travis CI", holders=frozenset({"ci", "travis ci"}))
    assert evidence(
        ci, read("We moved to CircleCI", holders=frozenset({"ci"})), [], Cues(), 0.5, confident=True
    )
