"""Speaker-centred priors of list and multi-hop questions (recall/aggregate.py) and their effect on a
recall (hashing embedder: behaviour, not semantic quality)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_memory import MemoryAPI
from hermes_memory.recall.aggregate import question_speaker, subject_of

T0 = 1_683_540_000.0  # 2023-05-08
DAY = 86400.0


@pytest.mark.parametrize(
    ("question", "subject"),
    [
        ("What did Jon say about Gina's progress with her store?", "Jon"),
        ("Which city did John recommend to Tim?", "John"),
        ("What advice does Gina give to Jon?", "Gina"),
        ("According to Gina, what makes Jon a good mentor?", "Gina"),
        ("What do Jon and Gina both have in common?", None),
        ("Who is Tim and John's favorite player?", None),
        ("What did Tim, John talk about?", None),
        ("What is the topic of discussion between John and Tim?", None),
        ("What animal do Nate and Joanna like?", None),
        ("What movies have Joanna and Nate seen together?", None),
    ],
)
def test_the_subject_of_a_question_naming_two_people(question: str, subject: str | None) -> None:
    names = [n for n in ("Jon", "Gina", "John", "Tim", "Nate", "Joanna") if n in question]
    assert subject_of(question, names) == subject


def test_the_speaker_of_a_question() -> None:
    assert question_speaker("What books has Tim read?", ["Tim"]) == ("tim", True)
    assert question_speaker("What did Tim recommend to John?", ["Tim", "John"]) == ("tim", False)
    assert question_speaker("What do Tim and John like?", ["Tim", "John"]) == (None, False)
    assert question_speaker("What do I like?", []) == (None, False)
    assert subject_of("What did Tim tell them?", ["Tim"]) is None  # one name: the speaker prior's case


def _api(home: Path, **overrides: float) -> MemoryAPI:
    return MemoryAPI(
        hermes_home=home,
        recall={"preset": "default", "overrides": overrides},
        **{"tier3.embedding_model": "hashing", "tier3.backend": "memory"},
    )


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Path]:
    with _api(tmp_path) as api:
        api.remember_message("I recommend a novel I read on the train last month.", "s1", T0, speaker="Tim")
        api.remember_message("Nice, what else is on your list?", "s1", T0 + 60, speaker="John")
        for i in range(12):
            api.remember_message(f"Training report {i}: drills and sprints today.", "s2", T0 + DAY + i * 60,
                                 speaker="John" if i % 2 else "Tim")  # fmt: skip
        api.remember_message(
            "Books, books, books: I read books about books and recommend books to everyone.",
            "s3", T0 + 2 * DAY, speaker="John",
        )  # fmt: skip
        assert api.flush(60)["data"]["drained"]
    yield tmp_path


def _texts(home: Path, question: str, **overrides: float) -> list[str]:
    with _api(home, **overrides) as api:
        env = api.recall(question, limit=5, tiers=["tier2"])
        assert env["success"], env["error"]
        return [h["text"] for h in env["data"]["hits"] if h["kind"] == "episode"]


def _rank(texts: list[str], fragment: str) -> int:
    return next(i for i, text in enumerate(texts) if fragment in text)


def test_a_list_question_ranks_the_other_participants_turns_down(home: Path) -> None:
    question = "What books has Tim read?"
    fixed = {"speaker_boost": 0.0}
    plain = _texts(home, question, list_other_speaker_penalty=0.0, **fixed)
    assert _rank(plain, "books about books") < _rank(plain, "a novel")  # John's talk of books wins...
    penalised = _texts(home, question, list_other_speaker_penalty=0.9, **fixed)
    assert _rank(penalised, "a novel") < _rank(penalised, "books about books")  # ...unless ranked down
    # A question asking for one thing is left as it was.
    single = "Did Tim say he read a book?"
    same = _texts(home, single, list_other_speaker_penalty=0.0)
    assert _texts(home, single, list_other_speaker_penalty=0.9) == same


def test_the_subject_of_a_two_name_question_ranks_up(home: Path) -> None:
    question = "What books did Tim recommend to John?"
    fixed = {"list_other_speaker_penalty": 0.0}
    plain = _texts(home, question, subject_boost=0.0, **fixed)
    assert _rank(plain, "books about books") < _rank(plain, "a novel")
    boosted = _texts(home, question, subject_boost=4.0, **fixed)
    assert _rank(boosted, "a novel") < _rank(boosted, "books about books")
