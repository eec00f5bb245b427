"""Expansion around recall's first matches: the exchange a matching turn belongs to.

In a conversation between people the evidence is often the turn *around* the one the question matches:
"What dance were you doing?" matches the question, the reply names the dance; "It was a transgender
poetry reading…" matches the question, the turn before it asked what it was about. The neighbour pull
of ``RecallEngine`` (``neighbour``) lends every turn a share of its best neighbour's score, both ways
alike; an exchange is not symmetric, so the reply to a question and the question a reply answers get a
pull of their own (``reply_pull``, ``asked_pull``) on top.

Pure functions over the turns recall has loaded already: no store read, bounded by the candidates.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from hermes_memory.records import Episode


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


__all__ = ["ExchangeTurn", "asks", "exchange_pulls"]
