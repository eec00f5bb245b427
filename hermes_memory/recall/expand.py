"""Expansion around recall's first matches: the exchange a matching turn belongs to, and feedback from
the first hits.

In a conversation between people the evidence is often the turn *around* the one the question matches:
"What dance were you doing?" matches the question, the reply names the dance; "It was a transgender
poetry reading…" matches the question, the turn before it asked what it was about. The neighbour pull
of ``RecallEngine`` (``neighbour``) lends every turn a share of its best neighbour's score, both ways
alike; an exchange is not symmetric, so the reply to a question and the question a reply answers get a
pull of their own (``reply_pull``, ``asked_pull``) on top.

Inference questions ("Would Melanie prefer a national park or a theme park?", "What might John's
financial status be?") rarely share words with their evidence (a camping trip, "my kids have so much").
Pseudo-relevance feedback searches the turn vectors again near the query moved toward the first hits'
stored vectors (Rocchio: ``q + beta * centroid``), no re-embedding (``feedback_vector``); which
questions get it is a setting (``feedback_route``: every question, or only those ``is_inference``).

Pure functions over what recall has loaded already: no store read, bounded by the candidates.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np

from hermes_memory.recall.settings import RecallSettings
from hermes_memory.records import Episode

# Questions that ask for a guess rather than a fact: a modal or a word of likelihood ("Would X…", "What
# might…", "Is it likely…", "… be considered …"). Generic English, nothing from a benchmark's questions.
_INFERENCE = re.compile(
    r"\b(?:would|could|might|likely|unlikely|probably|possibly|potential(?:ly)?|considered)\b", re.I
)
# ``feedback_route`` values: feedback for every question, or for inference questions only.
ROUTE_INFERENCE = 1
ROUTE_ALL = 2


class ExchangeTurn(Protocol):
    """What the exchange pull reads from a loaded turn (``engine._Turn``)."""

    @property
    def episode(self) -> Episode: ...

    @property
    def question(self) -> bool: ...

    @property
    def chatter(self) -> str | None: ...


def asks(turn: ExchangeTurn) -> bool:
    """Whether the turn asks (mostly questions, or only a question): its reply is likely the answer."""
    return turn.question or turn.chatter == "question"


def _between_people(first: ExchangeTurn, second: ExchangeTurn) -> bool:
    """Two turns of an exchange: said by two different people (not the AI agent)."""
    a, b = first.episode, second.episode
    return (
        a.role != "assistant"
        and b.role != "assistant"
        and a.speaker is not None
        and b.speaker is not None
        and a.speaker != b.speaker
    )


def exchange_pulls(
    scores: Mapping[int, float],
    neighbours: Mapping[int, tuple[int | None, int | None]],
    turns: Mapping[int, ExchangeTurn],
    reply: float,
    asked: float,
    strong: float = 0.0,
) -> dict[int, float]:
    """The extra pull of each turn from its exchange, by row id (add it to the turn's score).

    ``scores``: the candidates' scores before any pull; ``neighbours``: each candidate's previous and
    next turn in its session (row ids); ``turns``: the loaded turns. A candidate that asks lends the
    next turn, when another person says it, ``reply`` times its score; a candidate right after another
    person's question lends that question ``asked`` times its score. Each turn keeps its largest pull of
    each kind (as the neighbour pull does)."""
    replies: dict[int, float] = {}
    questions: dict[int, float] = {}
    if reply <= 0 and asked <= 0:
        return {}
    floor = strong * max(scores.values(), default=0.0)
    for row_id, (prev_id, next_id) in neighbours.items():
        score = scores.get(row_id, 0.0)
        turn = turns.get(row_id)
        if score <= 0 or score < floor or turn is None:
            continue
        if reply > 0 and next_id is not None:
            after = turns.get(next_id)
            if after is not None and asks(turn) and _between_people(turn, after):
                replies[next_id] = max(replies.get(next_id, 0.0), score)
        if asked > 0 and prev_id is not None:
            before = turns.get(prev_id)
            if before is not None and asks(before) and _between_people(before, turn):
                questions[prev_id] = max(questions.get(prev_id, 0.0), score)
    out = {row_id: reply * best for row_id, best in replies.items()}
    for row_id, best in questions.items():
        out[row_id] = out.get(row_id, 0.0) + asked * best
    return out


def thread_pulls(
    scores: Mapping[int, float],
    neighbours: Mapping[int, tuple[int | None, int | None]],
    turns: Mapping[int, ExchangeTurn],
    weight: float,
) -> dict[int, float]:
    """The pull of each turn from the same speaker's turn two away in its session (their next or previous
    turn once the other person has answered), by row id: ``weight`` times the larger score of the two.

    A person goes on about what they said after the other's reply (A: "I went to a poetry reading", B:
    "What was it about?", A: "It was a transgender poetry reading…"). ``neighbours`` must hold the
    middle turn's pair too (``RecallEngine._thread_rows`` reads it for the strongest candidates)."""
    pulls: dict[int, float] = {}
    if weight <= 0:
        return pulls
    for row_id, (prev_id, next_id) in neighbours.items():
        score = scores.get(row_id, 0.0)
        turn = turns.get(row_id)
        if score <= 0 or turn is None:
            continue
        for side, middle in ((0, prev_id), (1, next_id)):
            pair = neighbours.get(middle) if middle is not None else None
            far = pair[side] if pair is not None else None
            if far is None:
                continue
            other = turns.get(far)
            if other is not None and other.episode.speaker == turn.episode.speaker:
                pulls[far] = max(pulls.get(far, 0.0), score)
    return {row_id: weight * best for row_id, best in pulls.items()}


def is_inference(question: str) -> bool:
    """Whether the question asks for a guess ("Would X…", "What might…", "Is it likely…")."""
    return bool(_INFERENCE.search(question))


# A guess's frame: the modal and likelihood words, the auxiliaries that open it, "be considered", "is it
# likely that": what a statement of the evidence never says.
_FRAME = re.compile(
    r"\b(?:is it|would|could|might|will|likely|unlikely|probably|possibly|potentially|be considered|"
    r"considered|that)\b|^\W*(?:does|do|is|are|did|was|were)\b",
    re.I,
)


def plain_statement(question: str) -> str:
    """The question without its frame of a guess ("Would likely have Dr. Seuss books on her bookshelf?"
    -> "have Dr. Seuss books on her bookshelf"): nearer, as a vector, to the statements that answer it.
    The question itself when nothing is left."""
    text = re.sub(r"\s+", " ", _FRAME.sub(" ", question)).strip(" ?")
    return text or question


def embedded_query(stripped: str, inference: bool, st: RecallSettings) -> str:
    """The text whose vector the turns are searched with: a guess without its frame when
    ``inference_statement`` is 2 (``plain_statement``), any other question as asked.

    Raises ValueError for an unknown ``inference_statement``."""
    if st.inference_statement not in (1, 2):
        raise ValueError(f"inference_statement must be 1 or 2, got {st.inference_statement!r}")
    return plain_statement(stripped) if inference and st.inference_statement == 2 else stripped


def neighbour_weight(listing: bool, inference: bool, st: RecallSettings) -> float:
    """The neighbour pull for this kind of question: a list question's instances are spread over
    sessions (``list_neighbour``), a guess leans on what the person says (``inference_neighbour``), any
    other question's answer is often the turn around the matching one (``neighbour``)."""
    if listing:
        return st.list_neighbour
    if inference:
        return st.inference_neighbour
    return st.neighbour


def same_session(listing: bool, inference: bool, st: RecallSettings) -> float:
    """How much more alike two hits of one session count in the diversity pass for this kind of
    question (``list_sessions``, ``inference_sessions``; 0 for any other question)."""
    if listing:
        return st.list_sessions
    if inference:
        return st.inference_sessions
    return 0.0


def wants_feedback(question: str, route: int) -> bool:
    """Whether ``feedback_route`` gives this question the feedback search.

    Raises ValueError for an unknown route."""
    if route == ROUTE_ALL:
        return True
    if route == ROUTE_INFERENCE:
        return is_inference(question)
    raise ValueError(f"feedback_route must be {ROUTE_ALL} (every question) or {ROUTE_INFERENCE} "
                     f"(inference questions), got {route!r}")  # fmt: skip


def feedback_vector(query: Any, seeds: Sequence[Any], beta: float) -> Any:
    """The query moved toward its first hits: ``unit(unit(query) + beta * unit(mean(seeds)))`` as float32
    (Rocchio feedback); None without seeds, with ``beta`` 0, or when a vector is all zeros."""
    if not seeds or beta <= 0:
        return None
    q = np.asarray(query, dtype=np.float64)
    centroid = np.mean(np.asarray(seeds, dtype=np.float64), axis=0)
    qn, cn = float(np.linalg.norm(q)), float(np.linalg.norm(centroid))
    if qn == 0.0 or cn == 0.0:
        return None
    moved = q / qn + beta * centroid / cn
    return (moved / np.linalg.norm(moved)).astype(np.float32)


__all__ = [
    "ROUTE_ALL",
    "ROUTE_INFERENCE",
    "ExchangeTurn",
    "asks",
    "embedded_query",
    "exchange_pulls",
    "feedback_vector",
    "is_inference",
    "neighbour_weight",
    "plain_statement",
    "same_session",
    "thread_pulls",
    "wants_feedback",
]
