"""The question cues recall's priors use, and their effect on the ranking."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_memory import MemoryAPI
from hermes_memory.recall import query as cues

T0 = 1_683_540_000.0  # 2023-05-08


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("Which cities has John been to?", "named"),
        ("What movies have both Joanna and Nate seen?", "named"),
        ("What video games does Nate play?", "named"),
        ("What books has Melanie read?", "named"),
        ("What are Nate's favorite movies?", "named"),  # a possessive between "what" and the noun
        ("What activities does Melanie partake in?", None),
        ("Where does Maya live?", None),
        ("What is the name of Maya's dog?", "named"),
        ("Which book did Tim finish last week?", "named"),
        ("What did Maya eat?", None),
    ],
)
def test_answer_type(question: str, kind: str | None) -> None:
    assert cues.answer_type(question) == kind


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("I usually play CS:GO, and last week the local Street Fighter tournament.", True),
        ('I just watched "Little Women" and loved it.', True),
        ("We drove up to Portland for the weekend.", True),
        ("Thanks, Gina! Your words keep me going.", False),  # a participant and a greeting
        ("Yes, it was great. We loved it.", False),  # capitals that only start sentences
        ("See you on Monday in May!", False),  # days and months are not answers
    ],
)
def test_a_turn_that_names_something(text: str, named: bool) -> None:
    assert cues.can_answer(text, "named", ["Gina", "Nate"]) is named


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        ("Seen any good movies lately?", True),
        ("Wow! What did you think of it?", True),
        ("I saw Little Women. Have you seen it?", True),
        ("I saw Little Women. It was great. Have you seen it?", False),
        ("I saw Little Women last night.", False),
        ("no punctuation at all", False),
        ("", False),
        ("Ok?", False),  # too short to count as a sentence
        ("Really??", True),
    ],
)
def test_question_turns(text: str, asks: bool) -> None:
    assert cues.is_question_turn(text) is asks


def test_past_questions() -> None:
    assert cues.asks_about_past("Where did Maya live before?")
    assert cues.asks_about_past("Which job did she have previously?")
    assert not cues.asks_about_past("Where does Maya live?")


@pytest.mark.parametrize(
    ("question", "present"),
    [
        ("Who fixes my bike?", True),  # a verb in its -s form: how things are
        ("Which bakery sells my favourite rye?", True),
        ("Where does Maya live?", True),
        ("Who fixed my bike?", False),  # the past
        ("Which bakeries did I try?", False),  # a plural noun is no verb
        ("Who was my first coach?", False),
        ("Which towns has Maya lived in?", False),  # over time, not now
    ],
)
def test_present_questions(question: str, present: bool) -> None:
    assert cues.asks_about_present(question) is present


@pytest.fixture
def api(tmp_path: Path) -> MemoryAPI:
    mem = MemoryAPI(hermes_home=tmp_path, **{"tier3.enabled": False})
    yield mem
    mem.close()


def _turn_order(api: MemoryAPI, query: str) -> list[str]:
    hits = api.recall(query, limit=5, tiers=["tier2"])["data"]["hits"]
    return [h["text"] for h in hits if h["kind"] == "episode"]


def test_the_answer_ranks_above_the_question_that_prompted_it(api: MemoryAPI) -> None:
    # The question is the better BM25 match (shorter, same word); the answer must still come first.
    api.remember_message("Been to any concerts?", "s1", T0, speaker="Ann")
    api.remember_message("Yes, two concerts last month, both great fun.", "s1", T0 + 60, speaker="Bob")
    assert api.flush(60)["data"]["drained"]
    order = _turn_order(api, "Which concerts did they go to?")
    assert order[0].startswith("Yes, two concerts") and len(order) == 2, order


def test_a_name_question_prefers_turns_that_name_something(api: MemoryAPI) -> None:
    api.remember_message("I love visiting new cities, it is my favourite thing.", "s1", T0, speaker="Ann")
    api.remember_message("Last spring I finally went to Lisbon with my cousin, a lovely city.", "s2",
                         T0 + 86400, speaker="Ann")  # fmt: skip
    assert api.flush(60)["data"]["drained"]
    assert "Lisbon" in _turn_order(api, "Which cities has Ann been to?")[0]
    # Without a name-type question the better lexical match keeps its place.
    assert "favourite" in _turn_order(api, "Does Ann love visiting new cities?")[0]


def test_a_loaded_turn_reads_its_answer_cues_on_first_use_as_the_text_gives_them() -> None:
    """``Turn.answers`` is worked out when first read (only a question asking for a name reads it), the
    same as ``answer_cues`` of the text, and kept."""
    from hermes_memory.recall.hits import Turn
    from hermes_memory.records import Episode

    text = 'We watched "Dune" with Priya at the Odeon in May.'
    episode = Episode(uuid="t1", session_id="s", role="user", speaker="Ana", text=text, timestamp=T0)
    turn = Turn.of_episode(episode, None)
    assert turn.answers == cues.answer_cues(text)
    assert turn.answers[0] and "Priya" in turn.answers[1]
    assert turn.answers is turn.answers
