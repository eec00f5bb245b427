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

from hermes_memory.records import Episode

# Questions that ask for a guess rather than a fact: "would / could / might …", "is it likely …",
# "… probably …", "what … might …". Generic English, nothing from a benchmark's questions.
_INFERENCE = re.compile(
    r"^\W*(?:would|could|might|will)\b|\b(?:likely|probably|might|possibly|potential(?:ly)?|"
    r"would\s+\w+\s+(?:be|want|enjoy|prefer|like|consider)|considered?)\b",
    re.I,
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


def is_inference(question: str) -> bool:
    """Whether the question asks for a guess ("Would X…", "What might…", "Is it likely…")."""
    return bool(_INFERENCE.search(question))


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


__all__ = ["ROUTE_ALL", "ROUTE_INFERENCE", "ExchangeTurn", "asks", "exchange_pulls", "feedback_vector",
           "is_inference", "wants_feedback"]
