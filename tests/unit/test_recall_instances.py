"""Category -> instance matching at phrase level (recall/instances.py) and its place in a recall: the
hashing embedder given a small table of context-free vectors in which "taekwondo" lies near "martial
arts" (behaviour, not MiniLM's quality)."""

from __future__ import annotations

import threading
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest

from hermes_memory import MemoryAPI
from hermes_memory.recall import instances
from hermes_memory.recall.settings import RecallSettings
from hermes_memory.tier3.embedder import StaticVectors
from hermes_memory.tier3.hashing_embedder import HashingEmbedder

T0 = 1_683_540_000.0  # 2023-05-08
DAY = 86400.0
_NEAR = {"martial": 1, "arts": 2, "taekwondo": 3, "kickboxing": 4}  # one direction, a little noise each
_OTHERS = 200


def _table() -> np.ndarray:
    rng = np.random.default_rng(7)
    table = rng.normal(size=(len(_NEAR) + 1 + _OTHERS, 32)).astype(np.float32)
    axis = rng.normal(size=32).astype(np.float32)
    for row in _NEAR.values():
        table[row] = 3.0 * axis + 0.3 * table[row]
    return table


TABLE = _table()


class _Static:
    """``StaticVectors`` for the test: one piece per word, the near words on one axis, the rest hashed
    to unrelated rows."""

    def word_pieces(self, words: Sequence[str]) -> list[list[int]]:
        return [[_NEAR.get(w.casefold()) or len(_NEAR) + 1 + zlib.crc32(w.casefold().encode()) % _OTHERS]
                for w in words]  # fmt: skip

    @property
    def piece_vectors(self) -> np.ndarray:
        return TABLE


@pytest.mark.parametrize(
    ("question", "names", "category"),
    [
        ("What martial arts has John done?", ["John"], "martial arts"),
        ("What indoor activities has Jon done with his girlfriend?", ["Jon"], "indoor activities"),
        ("Which cities has Jon visited?", ["Jon"], "cities"),
        ("What kinds of books does Tim like?", ["Tim"], "books"),
        ("What LGBTQ+ events has Caroline participated in?", ["Caroline"], "LGBTQ+ events"),
        ("What are Melanie's pets' names?", ["Melanie"], "pets' names"),
        ("Where has Melanie camped?", ["Melanie"], "places camped"),
        ("How many children does Melanie have?", ["Melanie"], "children"),
        ("What did Caroline research?", ["Caroline"], None),
        ("When did Melanie go on a hike?", ["Melanie"], None),
    ],
)
def test_the_category_a_question_asks_instances_of(
    question: str, names: list[str], category: str | None
) -> None:
    assert instances.category_of(question, names) == category


def test_a_turn_is_cut_into_clauses_and_three_word_windows() -> None:
    words, spans = instances.phrase_spans("Oh wow, I'm off to do some taekwondo tonight and it was fun!", 3)
    phrases = [" ".join(words[a:b]) for a, b in spans]
    # Opening fillers and pronouns go ("Oh wow", "I'm", "it"), windows of function words only too.
    assert phrases == ["do some taekwondo", "some taekwondo tonight", "was fun"]
    assert instances.phrase_spans("Yes, it is. And so?", 3) == ([], [])  # function words only: none


def test_the_best_phrase_matches_and_phrases_naming_the_category_are_left_out() -> None:
    static = _Static()
    assert isinstance(static, StaticVectors)
    qvec = instances.query_vector("martial arts", static)
    assert qvec is not None
    turns = [
        instances.phrases(text, static, 3)
        for text in ("I went to a martial arts place", "Tonight I'm off to do some taekwondo", "Dishes done")
    ]
    lexical = instances.stems("martial arts")
    named, instance, unrelated = instances.best_matches(turns, qvec, lexical)
    assert named is not None and instance is not None and unrelated is not None
    assert instance > 0.5 > unrelated
    assert named < instance  # its "martial arts" phrases are BM25's: only "went to a" and the like count
    assert instances.best_matches(turns, qvec, ())[0] == pytest.approx(1.0, abs=0.1)


class _Cancelling(_Static):
    """``_Static`` where "up" and "down" have opposite vectors: the phrase "up down" sums to zero."""

    def word_pieces(self, words: Sequence[str]) -> list[list[int]]:
        return [[{"up": 0, "down": 1}[w]] if w in ("up", "down") else p
                for w, p in zip(words, super().word_pieces(words), strict=True)]  # fmt: skip

    @property
    def piece_vectors(self) -> np.ndarray:
        table = TABLE.copy()
        table[1] = -table[0]
        return table


def test_each_phrase_vector_is_the_sum_of_its_words_pieces_and_the_best_is_taken_per_turn() -> None:
    """Against a direct computation per phrase: the sum of its pieces' rows, unit length; a phrase
    summing to zero has no vector (left out); a turn without a phrase matches nothing."""
    static = _Cancelling()
    texts = ["Tonight I'm off to do some taekwondo, kickboxing too", "up down", "Yes, it is.", "martial arts"]
    turns = [instances.phrases(text, static, 3) for text in texts]
    qvec = instances.query_vector("martial arts", static)
    assert qvec is not None
    expected: list[float | None] = []
    for text, turn in zip(texts, turns, strict=True):
        words, spans = instances.phrase_spans(text, 3)
        sims = []
        for first, stop in spans:
            total = sum(static.piece_vectors[i] for p in static.word_pieces(words[first:stop]) for i in p)
            if float(np.linalg.norm(total)) > 0:
                sims.append(float(total @ qvec) / float(np.linalg.norm(total)))
        assert len(turn.spans) == len(sims)
        expected.append(max(sims) if sims else None)
    assert expected[1] is None and expected[2] is None  # "up down" sums to zero; "Yes, it is." has none
    got = instances.best_matches(turns, qvec, ())
    assert got[0] == pytest.approx(expected[0], abs=1e-5) and got[3] == pytest.approx(expected[3], abs=1e-5)
    assert got[1:3] == [None, None]
    # Left out by the lexical stems, the turn saying only "martial arts" has nothing left.
    assert instances.best_matches(turns, qvec, instances.stems("martial arts"))[3] is None


def test_a_long_text_is_matched_on_its_first_words_only() -> None:
    text = " ".join(f"word{i} taekwondo, dishes." for i in range(500))  # 1,500 words, 1,000 clauses
    words, spans = instances.phrase_spans(text, 3, max_words=96)
    assert len(words) <= 96 and words[0] == "word0" and max(stop for _, stop in spans) <= len(words)
    assert instances.phrase_spans(text, 3, max_words=96)[0] == instances.phrase_spans(text, 3)[0][:96]
    bounded = instances.phrases(text, _Static(), 3, 96)
    assert 0 < len(bounded.spans) <= 96 and len(bounded.words) <= 96


def test_the_phrase_cache_keeps_the_most_recently_used_within_its_bytes() -> None:
    static = _Static()
    one = instances.phrases("Tonight I'm off to do some taekwondo", static, 3, 96)
    cache = instances.PhraseCache(max_bytes=3 * one.nbytes + 10)
    texts = {f"u{k}": "Tonight I'm off to do some taekwondo" for k in range(6)}
    first = cache.get("u0", texts["u0"], static, 3, 96)
    assert cache.get("u0", "another text: not read again", static, 3, 96) is first  # by uuid, once
    for uuid in ("u1", "u2", "u3"):
        cache.get(uuid, texts[uuid], static, 3, 96)
    assert cache.nbytes <= 3 * one.nbytes + 10
    assert cache.get("u3", "", static, 3, 96).words  # kept: the text is not read again
    assert not cache.get("u0", "", static, 3, 96).words  # the least recently used went first
    assert cache.get("u3", "", static, 5, 96) is not cache.get("u3", "", static, 3, 96)  # per window


def test_turns_not_kept_have_their_phrases_worked_out_with_one_word_piece_read() -> None:
    class Counted(_Static):
        def __init__(self) -> None:
            self.reads: list[list[str]] = []

        def word_pieces(self, words: Sequence[str]) -> list[list[int]]:
            self.reads.append(list(words))
            return super().word_pieces(words)

    texts = [
        ("a", "Tonight I'm off to do some taekwondo"),
        ("b", "ok"),
        ("c", "We did kickboxing, and then ate"),
    ]
    static = Counted()
    cache = instances.PhraseCache(max_bytes=1 << 20)
    kept = cache.get("c", texts[2][1], static, 3, 96)
    static.reads.clear()
    got = cache.get_many(texts, static, 3, 96)
    assert len(static.reads) == 1  # one read for the two turns not kept
    assert got[2] is kept
    for (_, text), phrases in zip(texts, got, strict=True):
        alone = instances.phrases(text, static, 3, 96)
        assert np.array_equal(phrases.vectors, alone.vectors) and np.array_equal(phrases.spans, alone.spans)
        assert phrases.words == alone.words and phrases.joined == alone.joined
    static.reads.clear()
    assert cache.get_many(texts[:1], static, 3, 96)[0] is got[0] and not static.reads  # kept now


def test_the_prior_raises_matches_above_the_median_behind_the_first_hits() -> None:
    scores = [1.0, 0.9, 0.8, 0.5, 0.4, 0.3]
    matches = {0: 0.1, 1: 0.9, 3: 0.2, 4: 0.3, 5: 0.8}
    out = instances.instance_order(scores, matches, keep=2, weight=1.0)
    assert out[:2] == scores[:2]  # the first two keep their places whatever they match
    assert out[3] == 0.5 and out[4] == 0.4  # at or below the median (0.3): nothing
    assert out[5] == pytest.approx(0.3 * (1.0 + 1.0 * (0.8 - 0.3) / (0.9 - 0.3)))
    held = instances.instance_order(scores, {3: 0.1, 4: 0.2, 5: 0.9}, keep=2, weight=9.0)
    assert held[5] < scores[1]  # raised, but held below the last of the first hits
    assert instances.instance_order(scores, matches, keep=2, weight=0.0) == scores


# -- in a recall --------------------------------------------------------------------------------------


def _api(home: Path, **overrides: float) -> MemoryAPI:
    return MemoryAPI(
        hermes_home=home,
        recall={"preset": "default", "overrides": overrides},
        **{"tier3.embedding_model": "hashing", "tier3.backend": "memory"},
    )


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setattr(HashingEmbedder, "word_pieces", _Static.word_pieces, raising=False)
    monkeypatch.setattr(HashingEmbedder, "piece_vectors", _Static.piece_vectors, raising=False)
    with _api(tmp_path) as api:
        for i in range(6):
            api.remember_message(f"The arts fair number {i} was done and dusted.", f"a{i}", T0 + i * DAY,
                                 speaker="John")  # fmt: skip
        for i in range(4):
            api.remember_message(f"Report {i}: the dishes are done.", f"d{i}", T0 + (10 + i) * DAY,
                                 speaker="John")  # fmt: skip
        api.remember_message(
            "After a long week at the office I finally had done some taekwondo with the club tonight.",
            "k", T0 + 20 * DAY, speaker="John",
        )  # fmt: skip
        assert api.flush(60)["data"]["drained"]
    yield tmp_path


def _texts(home: Path, question: str, **overrides: float) -> list[str]:
    with _api(home, **overrides) as api:
        env = api.recall(question, limit=12)
        assert env["success"], env["error"]
        return [h["text"] for h in env["data"]["hits"] if h["kind"] == "episode"]


def _rank(texts: list[str], fragment: str) -> int:
    return next(i for i, text in enumerate(texts) if fragment in text)


def test_a_turn_naming_an_instance_of_the_category_ranks_up(home: Path) -> None:
    question = "What martial arts has John done?"
    plain = _texts(home, question, instance_prior=0.0)
    assert _rank(plain, "taekwondo") > _rank(plain, "dishes")  # the short "done" turns rank above it...
    raised = _texts(home, question, instance_prior=2.0)
    assert _rank(raised, "taekwondo") < _rank(raised, "dishes")  # ...until it is matched as an instance
    keep = RecallSettings().instance_keep
    assert raised[:keep] == plain[:keep]  # the first hits keep their places
    # A question naming no category is left as it was.
    other = "Did John do anything tonight?"
    assert _texts(home, other, instance_prior=2.0) == _texts(home, other, instance_prior=0.0)


def test_the_keyword_sides_best_turns_have_their_phrases_worked_out_on_its_thread(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While the question is embedded, the keyword side works out the phrases of its best turns (the
    prior reads them from the cache afterwards); the hits are the same as without."""
    made: list[tuple[str, str]] = []  # (thread, text) of each turn whose phrases are worked out
    spans = instances.phrase_spans

    def recorded(text: str, *args: object, **kwargs: object) -> tuple[list[str], list[tuple[int, int]]]:
        made.append((threading.current_thread().name, text))
        return spans(text, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(instances, "phrase_spans", recorded)
    question = "What martial arts has John done?"
    early = _texts(home, question, instance_prior=2.0, instance_early=2)
    on_side = [text for thread, text in made if thread == "hermes-memory-recall"]
    assert len(on_side) == 2 and all("done" in text for text in on_side)  # its best: they say "done"
    made.clear()
    assert _texts(home, question, instance_prior=2.0, instance_early=1) == early
    assert len([text for thread, text in made if thread == "hermes-memory-recall"]) == 1
