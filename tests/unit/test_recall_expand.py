"""recall.expand: the exchange pulls, inference routing and vector feedback (hashing embedder)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from hermes_memory import MemoryAPI
from hermes_memory.errors import ConfigError
from hermes_memory.recall import expand
from hermes_memory.recall.settings import settings_for
from hermes_memory.records import Episode

T0 = 1_683_540_000.0


@dataclass
class _T:
    episode: Episode
    question: bool = False
    chatter: str | None = None


def _turn(speaker: str, text: str, *, question: bool = False, role: str = "user") -> _T:
    episode = Episode(uuid=speaker + text[:8], session_id="s", role=role, text=text, timestamp=T0,
                      speaker=speaker)  # fmt: skip
    return _T(episode, question=question)


def test_a_question_lends_its_reply_and_a_reply_its_question() -> None:
    turns = {
        1: _turn("Jon", "What dance were you doing?", question=True),
        2: _turn("Gina", "A contemporary piece called Finding Freedom."),
        3: _turn("Gina", "It was so emotional."),
    }
    neighbours = {1: (None, 2), 3: (2, None)}
    pulls = expand.exchange_pulls({1: 0.8, 3: 0.5}, neighbours, turns, reply=0.5, asked=0.0)
    assert pulls == {2: pytest.approx(0.4)}
    # The reply a candidate answers: its question gets the asked pull (row 2 does not ask: nothing).
    answer = {2: (1, 3)}
    assert expand.exchange_pulls({2: 0.6}, answer, turns, reply=0.0, asked=0.5) == {1: pytest.approx(0.3)}
    assert expand.exchange_pulls({3: 0.6}, {3: (2, None)}, turns, reply=0.5, asked=0.5) == {}


def test_no_exchange_pull_within_one_speaker_or_with_the_assistant() -> None:
    turns = {
        1: _turn("Jon", "What should I do?", question=True),
        2: _turn("Jon", "Maybe dance."),
        3: _turn("assistant", "You could dance.", role="assistant"),
    }
    assert expand.exchange_pulls({1: 1.0}, {1: (None, 2)}, turns, reply=1.0, asked=1.0) == {}
    assert expand.exchange_pulls({1: 1.0}, {1: (None, 3)}, turns, reply=1.0, asked=1.0) == {}


def test_only_strong_turns_lend_the_exchange_pull() -> None:
    turns = {i: _turn("A" if i % 2 else "B", f"turn {i}?", question=bool(i % 2)) for i in range(1, 5)}
    neighbours = {1: (None, 2), 3: (2, 4)}
    pulls = expand.exchange_pulls({1: 1.0, 3: 0.2}, neighbours, turns, reply=1.0, asked=0.0, strong=0.5)
    assert pulls == {2: pytest.approx(1.0)}


def test_the_same_speaker_two_turns_away_is_pulled() -> None:
    turns = {
        1: _turn("Caroline", "I went to a poetry reading last Friday."),
        2: _turn("Melanie", "What was it about?", question=True),
        3: _turn("Caroline", "It was a transgender poetry reading."),
        4: _turn("Melanie", "Sounds amazing."),
        5: _turn("Melanie", "I baked a pie."),
    }
    # Row 1 is the candidate; row 2's pair was read for it (``RecallEngine._thread_rows``).
    neighbours = {1: (None, 2), 2: (1, 3)}
    assert expand.thread_pulls({1: 0.9}, neighbours, turns, 0.5) == {3: pytest.approx(0.45)}
    # Backwards too, and never to another speaker's turn two away.
    back = {3: (2, 4), 2: (1, 3), 4: (3, 5)}
    assert expand.thread_pulls({3: 0.6}, back, turns, 0.5) == {1: pytest.approx(0.3)}
    assert expand.thread_pulls({3: 0.6}, back, turns, 0.0) == {}
    # Without the middle turn's pair nothing two away is known.
    assert expand.thread_pulls({1: 0.9}, {1: (None, 2)}, turns, 0.5) == {}


def test_inference_questions_are_routed_to_feedback() -> None:
    assert expand.is_inference("Would Melanie prefer a national park or a theme park?")
    assert expand.is_inference("What job might Maria pursue in the future?")
    assert expand.is_inference("Is it likely that Nate has friends besides Joanna?")
    assert not expand.is_inference("What is the name of Caroline's puppy?")
    assert expand.wants_feedback("What is the name of the puppy?", expand.ROUTE_ALL)
    assert not expand.wants_feedback("What is the name of the puppy?", expand.ROUTE_INFERENCE)
    with pytest.raises(ValueError, match="feedback_route"):
        expand.wants_feedback("Would it?", 7)
    with pytest.raises(ConfigError, match="feedback_route"):
        settings_for("default", {"feedback_route": 3})


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


def test_feedback_vector_moves_the_query_toward_the_seeds() -> None:
    query = np.array([1.0, 0.0, 0.0], dtype=np.float32)
    seeds = [np.array([0.0, 2.0, 0.0]), np.array([0.0, 0.0, 2.0])]
    moved = expand.feedback_vector(query, seeds, 1.0)
    assert moved.dtype == np.float32
    assert np.linalg.norm(moved) == pytest.approx(1.0)
    centroid = np.array([0.0, 1.0, 1.0]) / np.sqrt(2.0)
    assert float(moved @ centroid) > float(query @ centroid)
    assert float(moved @ query) > 0.5  # still near the query
    assert expand.feedback_vector(query, [], 1.0) is None
    assert expand.feedback_vector(query, seeds, 0.0) is None
    assert expand.feedback_vector(np.zeros(3), seeds, 1.0) is None


@pytest.fixture
def api(tmp_path: Path) -> Iterator[MemoryAPI]:
    mem = MemoryAPI(hermes_home=tmp_path, **{"tier3.embedding_model": "hashing", "tier3.backend": "memory"})
    yield mem
    mem.close()


def test_source_vectors_are_the_stored_vectors_of_the_turns_asked(api: MemoryAPI) -> None:
    api.remember_message("We went camping by the forest lake.", "s1", T0, speaker="Mel")
    api.remember_message("Work was busy all week long.", "s1", T0 + 60, speaker="Mel")
    assert api.flush(60)["data"]["drained"]
    semantic = api._core.tiers.semantic()
    hits = api.recall("camping forest lake busy week", limit=5, tiers=["tier2"])["data"]["hits"]
    turns = {h["text"]: h["source_ids"][0] for h in hits}
    camping = turns["We went camping by the forest lake."]
    found = semantic.source_vectors("episode_window", [camping, "no-such-turn"])
    assert set(found) == {camping}
    query = semantic.query_vector("camping forest lake")
    assert found[camping].shape == query.shape
    assert float(found[camping] @ query) > 0.0


def _rank(api: MemoryAPI, query: str, text: str) -> int | None:
    hits = api.recall(query, limit=30, tiers=["tier2", "tier3"])["data"]["hits"]
    return next((i for i, h in enumerate(hits) if h["text"] == text), None)


def test_feedback_brings_in_a_turn_near_the_first_hits(tmp_path: Path) -> None:
    target = "The pine trails at dawn were calm and misty."
    turns = [
        "We went camping near the pine trails and loved every minute.",
        "Camping trips with the kids are the best part of summer.",
        target,
        *(f"Office chatter number {i} about spreadsheets and meetings." for i in range(25)),
    ]
    ranks = []
    for weight in (0.0, 2.0):
        opts = {
            "tier3.embedding_model": "hashing",
            "tier3.backend": "memory",
            "recall": {
                "preset": "default",
                "overrides": {"feedback_weight": weight, "feedback_beta": 2.0, "inference_statement": 1},
            },
        }
        with MemoryAPI(hermes_home=tmp_path / str(weight), **opts) as mem:  # type: ignore[arg-type]
            for i, text in enumerate(turns):
                mem.remember_message(text, f"s{i}", T0 + i * 3600, speaker="Mel" if i % 2 else "Ann")
            assert mem.flush(60)["data"]["drained"]
            ranks.append(_rank(mem, "Would Ann enjoy a camping weekend?", target))
    without, with_feedback = ranks
    assert with_feedback is not None
    assert without is None or with_feedback < without, ranks


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
