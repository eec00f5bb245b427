"""recall.expand: the thread pull and questions asking for a guess (hashing embedder)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from hermes_memory import MemoryAPI
from hermes_memory.errors import ConfigError
from hermes_memory.recall import expand
from hermes_memory.recall.settings import settings_for

T0 = 1_683_540_000.0


@dataclass
class _T:
    """What the pulls read from a loaded turn (``expand.LoadedTurn``)."""

    speaker: str | None
    role: str
    text: str
    session_id: str = "s"


def _turn(speaker: str | None, text: str, role: str = "user") -> _T:
    return _T(speaker, role, text)


def test_the_same_speaker_two_turns_away_is_pulled() -> None:
    turns = {
        1: _turn("Caroline", "I went to a poetry reading last Friday."),
        2: _turn("Melanie", "What was it about?"),
        3: _turn("Caroline", "It was a transgender poetry reading."),
        4: _turn("Melanie", "Sounds amazing."),
        5: _turn("Melanie", "I baked a pie."),
    }
    # Row 1 is the candidate; row 2's pair was read for it (``TurnRanker.thread_rows``).
    neighbours = {1: (None, 2), 2: (1, 3)}
    assert expand.thread_pulls({1: 0.9}, neighbours, turns, 0.5) == {3: pytest.approx(0.45)}
    # Backwards too, and never to another speaker's turn two away.
    back = {3: (2, 4), 2: (1, 3), 4: (3, 5)}
    assert expand.thread_pulls({3: 0.6}, back, turns, 0.5) == {1: pytest.approx(0.3)}
    assert expand.thread_pulls({3: 0.6}, back, turns, 0.0) == {}
    # Turns without a speaker (a chat with the AI agent): the same role is the same voice.
    chat = {1: _turn(None, "I moved to Lisbon."), 2: _turn(None, "Noted.", "assistant"),
            3: _turn(None, "It is sunny here."), 4: _turn(None, "Nice.", "assistant")}  # fmt: skip
    assert expand.thread_pulls({1: 1.0}, {1: (None, 2), 2: (1, 3)}, chat, 0.5) == {3: pytest.approx(0.5)}
    assert expand.thread_pulls({2: 1.0}, {2: (1, 3), 3: (2, 4)}, chat, 0.5) == {4: pytest.approx(0.5)}
    chat[3] = _turn(None, "Anything else?", "assistant")  # the agent twice in a row: not the user's voice
    assert expand.thread_pulls({1: 1.0}, {1: (None, 2), 2: (1, 3)}, chat, 0.5) == {}
    # Without the middle turn's pair nothing two away is known.
    assert expand.thread_pulls({1: 0.9}, {1: (None, 2)}, turns, 0.5) == {}


def test_each_loaded_turn_takes_the_best_score_beside_it() -> None:
    turns = {i: _turn("Caroline" if i % 2 else "Melanie", f"turn {i}") for i in range(1, 6)}
    # Rows 2 and 4 are candidates; 3 sits between them, 1 and 5 beside one each; 6 is not loaded.
    neighbours = {2: (1, 3), 4: (3, 6)}
    beside, _ = expand.neighbour_pulls({2: 0.4, 4: 0.7}, neighbours, turns, threads=False)
    assert beside == {1: 0.4, 3: 0.7}
    # A turn next only to candidates that score nothing is still reached, with 0.0.
    beside, pulls = expand.neighbour_pulls({4: 0.7}, neighbours, turns, threads=True)
    assert beside == {1: 0.0, 3: 0.7}
    assert pulls == {} and expand.thread_pulls({4: 0.7}, neighbours, turns, 0.5) == {}


def test_questions_asking_for_a_guess() -> None:
    assert expand.is_inference("Would Melanie prefer a national park or a theme park?")
    assert expand.is_inference("What job might Maria pursue in the future?")
    assert expand.is_inference("Is it likely that Nate has friends besides Joanna?")
    assert not expand.is_inference("What is the name of Caroline's puppy?")
    assert not expand.is_inference("What pets wouldn't cause any discomfort?")


def test_a_guess_is_embedded_without_its_frame() -> None:
    assert expand.plain_statement("Would likely have Dr. Seuss books on her bookshelf?") == (
        "have Dr. Seuss books on her bookshelf"
    )
    assert expand.plain_statement("Is it likely that Nate has friends?") == "Nate has friends"
    assert expand.plain_statement("Would it?") == "it"
    assert expand.plain_statement("Would?") == "Would?"  # nothing left: the question as asked
    plain, asked = settings_for("default", {}), settings_for("default", {"inference_statement": 1})
    assert expand.embedded_query("Would be considered religious?", True, plain) == "religious"
    assert (
        expand.embedded_query("Would be considered religious?", True, asked)
        == "Would be considered religious?"
    )
    assert (
        expand.embedded_query("Would be considered religious?", False, plain)
        == "Would be considered religious?"
    )
    with pytest.raises(ConfigError, match="inference_statement"):
        settings_for("default", {"inference_statement": 3})


def test_recall_reaches_the_speakers_next_turn_with_the_thread_pull(tmp_path: Path) -> None:
    texts = []
    for weight in (0.0, 0.5):
        opts = {
            "tier3.embedding_model": "hashing",
            "tier3.backend": "memory",
            "recall": {"preset": "default", "overrides": {"thread_pull": weight}},
        }
        with MemoryAPI(hermes_home=tmp_path / str(weight), **opts) as mem:  # type: ignore[arg-type]
            mem.remember_message("I went to a poetry reading last Friday.", "s1", T0, speaker="Caroline")
            mem.remember_message("Nope, never been. What made it special?", "s1", T0 + 60, speaker="Melanie")
            mem.remember_message(
                "Everyone shared stories of courage and hope.", "s1", T0 + 120, speaker="Caroline"
            )
            for i in range(10):
                mem.remember_message(
                    f"Filler talk {i} about gardening tools.", "s2", T0 + 900 + i, speaker="Melanie"
                )
            assert mem.flush(60)["data"]["drained"]
            hits = mem.recall("poetry reading", limit=10, tiers=["tier2"])["data"]["hits"]
            texts.append([h["text"] for h in hits])
    without, with_thread = texts
    assert "I went to a poetry reading last Friday." in without[0]
    assert "Everyone shared stories of courage and hope." not in without
    assert "Everyone shared stories of courage and hope." in with_thread


def _in(session: str, text: str = "a turn") -> _T:
    return _T(None, "user", text, session)


def test_session_cohesion_ranks_up_the_sessions_of_the_best_turns() -> None:
    turns = {1: _in("s1"), 2: _in("s2"), 3: _in("s1", "later"), 4: _in("s3"), 5: _in("s2", "later")}
    scores = {1: 1.0, 2: 0.9, 3: 0.5, 4: 0.55, 5: 0.3}
    # The best turn's session: its other turn rises past a turn of another session; the rest stay.
    out = expand.session_cohesion(scores, turns, 1, 2, 0.2)
    assert out == {1: 1.0, 2: 0.9, 3: pytest.approx(0.6), 4: 0.55, 5: 0.3}
    # The first ``keep`` turns keep their places: a raised turn stays below the last of them.
    held = expand.session_cohesion(scores, turns, 1, 2, 1.0)
    assert 0.9 > held[3] > 0.89
    assert held[1] == 1.0 and held[2] == 0.9
    # Two seeds: both sessions rise; weight 0: nothing changes.
    both = expand.session_cohesion(scores, turns, 2, 2, 0.2)
    assert both[3] == pytest.approx(0.6) and both[5] == pytest.approx(0.36) and both[4] == 0.55
    assert expand.session_cohesion(scores, turns, 2, 2, 0.0) == scores


def test_recall_ranks_up_a_turn_of_the_best_turns_session(tmp_path: Path) -> None:
    orders = []
    for weight in (0.0, 1.0):
        opts = {
            "tier3.embedding_model": "hashing",
            "tier3.backend": "memory",
            "recall": {"preset": "default", "overrides": {
                "session_cohesion": weight, "cohesion_seeds": 1, "cohesion_keep": 1, "diversity": 0.0,
            }},
        }  # fmt: skip
        with MemoryAPI(hermes_home=tmp_path / str(weight), **opts) as mem:  # type: ignore[arg-type]
            t = T0
            for session, text in [
                ("s1", "Roses, roses, more roses: my garden of roses is full of roses."),
                *[("s1", f"Filler talk {i} about the weather and trains.") for i in range(4)],
                ("s1", "My roses bloom slowly this year because the spring has been so very cold."),
                ("s2", "Roses bloom early."),
                *[("s2", f"More filler {i} about a football match on television.") for i in range(4)],
            ]:
                t += 60
                mem.remember_message(text, session, t, speaker="Ann")
            assert mem.flush(60)["data"]["drained"]
            hits = mem.recall("roses", limit=3, tiers=["tier2"])["data"]["hits"]
            orders.append([h["text"] for h in hits])
    without, with_cohesion = orders
    assert "garden of roses" in without[0] and "bloom early" in without[1] and "bloom slowly" in without[2]
    assert "garden of roses" in with_cohesion[0] and "bloom slowly" in with_cohesion[1]


def test_questions_gathered_over_time() -> None:
    from hermes_memory.recall.query import asks_across_time

    assert asks_across_time("How many children does Melanie have?")
    assert asks_across_time("What movies have both Joanna and Nate seen?")
    assert asks_across_time("What do Jon and Gina have in common?")
    assert asks_across_time("Where has Melanie camped?")
    assert asks_across_time("Which places has Tim been to?")
    assert not asks_across_time("What did Nate do while Joanna was on her road trip?")
    assert not asks_across_time("What genre is the novel that Tim is writing?")
    assert not asks_across_time("What does Melanie have in her garden?")
