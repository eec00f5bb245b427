"""Expansion around recall's first matches, and questions that ask for a guess.

In a conversation between people the evidence is often a turn *around* the one the question matches.
The neighbour pull of ``RecallEngine`` (``neighbour``) lends the turn before and after a candidate a
share of its score; most often, though, the evidence is the same person's next (or previous) turn, once
the other has answered: A "I went to a poetry reading", B "What was it about?", A "It was a transgender
poetry reading…". On LoCoMo dev, of the evidence turns missed by the top 10, 53 sat two turns from a top-5
hit in its session and 25 next to one. ``thread_pulls`` lends that turn ``thread_pull`` of the score.

A conversation's answer often spans several turns of one session (a story told over a few turns): the
other turns of the sessions the strongest matches come from rank up (``session_cohesion``), below the
first hits, so they win over equally scored turns of other sessions. Not for a question that gathers
what happened over time (``query.asks_across_time``), whose evidence spans sessions.

Inference questions ("Would Caroline likely have Dr. Seuss books on her bookshelf?", "What might John's
degree be in?") wrap what they ask in a frame of modal and likelihood words that no statement of the
evidence says; their vector is taken without it (``embedded_query``).

Pure functions over what recall has loaded already: no store read.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Mapping
from typing import Protocol

from hermes_memory.recall.settings import RecallSettings

# Questions that ask for a guess rather than a fact: a modal or a word of likelihood ("Would X…", "What
# might…", "Is it likely…", "… be considered …"). Generic English, nothing from a benchmark's questions.
_INFERENCE = re.compile(
    r"\b(?:would|could|might|likely|unlikely|probably|possibly|potential(?:ly)?|considered)\b", re.I
)
# A guess's frame: the modal and likelihood words, "is it … that", "be considered", and the auxiliary
# that opens a yes/no question.
_FRAME = re.compile(
    r"\b(?:is it|would|could|might|will|likely|unlikely|probably|possibly|potentially|be considered|"
    r"considered|that)\b|^\W*(?:does|do|is|are|did|was|were)\b",
    re.I,
)
_SPACES = re.compile(r"\s+")


class LoadedTurn(Protocol):
    """What the thread pull and session cohesion read from a loaded turn (``hits.Turn``)."""

    @property
    def session_id(self) -> str: ...

    @property
    def role(self) -> str: ...

    @property
    def speaker(self) -> str | None: ...


def thread_pulls(
    scores: Mapping[int, float],
    neighbours: Mapping[int, tuple[int | None, int | None]],
    turns: Mapping[int, LoadedTurn],
    weight: float,
) -> dict[int, float]:
    """The pull of each turn from the same speaker's turn two away in its session (their next or previous
    turn once the other person has answered), by row id: ``weight`` times the larger score of the two.

    ``scores``: the candidates' scores before any pull; ``neighbours``: (previous, next) row ids of each
    candidate, and of the turns between a candidate and the one two away (``TurnRanker.thread_rows``
    reads them for the strongest candidates); ``turns``: the loaded turns. Never another speaker's (or
    role's) turn."""
    if weight <= 0:
        return {}
    _, pulls = neighbour_pulls(scores, neighbours, turns, threads=True)
    return {row_id: weight * best for row_id, best in pulls.items()}


def neighbour_pulls(
    scores: Mapping[int, float],
    neighbours: Mapping[int, tuple[int | None, int | None]],
    turns: Mapping[int, LoadedTurn],
    *,
    threads: bool,
) -> tuple[dict[int, float], dict[int, float]]:
    """In one pass over the candidates, unweighted, by row id: the best score among each loaded turn's
    neighbours that are candidates (0.0 for a turn next only to candidates scoring nothing), and with
    ``threads`` the best score of the same speaker's candidates two away (``thread_pulls``), each in
    the order the candidates first reach it. Recall's hot loop: the lookups are written out."""
    beside: dict[int, float] = {}
    pulls: dict[int, float] = {}
    score_of, lent_to, pulled, turn_of, pair_of = scores.get, beside.get, pulls.get, turns.get, neighbours.get
    for row_id, (prev_id, next_id) in neighbours.items():
        score = score_of(row_id, 0.0)
        lent = score if score > 0.0 else 0.0
        # The previous turn, then the next (written out: one is the other when both are the same).
        if prev_id is not None and prev_id in turns:
            best = lent_to(prev_id)
            if best is None:
                beside[prev_id] = lent
            elif score > best:
                beside[prev_id] = score
        if next_id is not None and next_id in turns:
            best = lent_to(next_id)
            if best is None:
                beside[next_id] = lent
            elif score > best:
                beside[next_id] = score
        if not threads or score <= 0:
            continue
        # The turn before the previous one, then the one after the next (each only through a neighbour that
        # is a candidate), said by the same person: the same speaker and role (compared inline). The
        # candidate's own turn is looked up only when there is one of them.
        before = pair_of(prev_id) if prev_id is not None else None
        after = pair_of(next_id) if next_id is not None else None
        far_before = before[0] if before is not None else None
        far_after = after[1] if after is not None else None
        if far_before is None and far_after is None:
            continue
        turn = turn_of(row_id)
        if turn is None:
            continue
        speaker, role = turn.speaker, turn.role
        if far_before is not None and score > pulled(far_before, 0.0):
            other = turn_of(far_before)
            if other is not None and other.speaker == speaker and other.role == role:
                pulls[far_before] = score
        if far_after is not None and score > pulled(far_after, 0.0):
            other = turn_of(far_after)
            if other is not None and other.speaker == speaker and other.role == role:
                pulls[far_after] = score
    return beside, pulls


def session_cohesion(
    scores: Mapping[int, float], turns: Mapping[int, LoadedTurn], seeds: int, keep: int, weight: float
) -> dict[int, float]:
    """``scores`` with the other turns of the sessions of the ``seeds`` best turns ranked up by
    ``weight``: a conversation's answer often spans several turns of one session, so a turn of the
    session the strongest matches come from is likelier evidence than one of another session that
    scores the same. The ``keep`` best turns keep their places: a raised turn is held just below the
    last of them (the cue reorders what follows the first hits, never the first hits)."""
    if weight <= 0 or not scores:
        return dict(scores)
    lead = heapq.nlargest(max(seeds, keep), scores, key=scores.__getitem__)
    sessions = {turns[r].session_id for r in lead[:seeds] if r in turns}
    cap = scores[lead[keep - 1]] * (1.0 - 1e-9) if 0 < keep <= len(lead) else float("inf")
    out = dict(scores)
    kept, raised = set(lead), 1.0 + weight
    for row_id, score in scores.items():
        if row_id in kept:
            continue
        turn = turns.get(row_id)
        if turn is not None and turn.session_id in sessions:
            out[row_id] = min(cap, score * raised)
    return out


def is_inference(question: str) -> bool:
    """Whether the question asks for a guess ("Would X…", "What might…", "Is it likely…")."""
    return bool(_INFERENCE.search(question))


def plain_statement(question: str) -> str:
    """The question without its frame of a guess ("Would likely have Dr. Seuss books on her bookshelf?"
    -> "have Dr. Seuss books on her bookshelf"): nearer, as a vector, to the statements that answer it.
    The question itself when nothing is left."""
    text = _SPACES.sub(" ", _FRAME.sub(" ", question)).strip(" ?")
    return text or question


def embedded_query(stripped: str, inference: bool, st: RecallSettings) -> str:
    """The text whose vector the stores are searched with: a guess without its frame when
    ``inference_statement`` is 2 (``plain_statement``), any other question as asked (``stripped``: the
    question without the participants' names)."""
    return plain_statement(stripped) if inference and st.inference_statement == 2 else stripped


__all__ = [
    "LoadedTurn",
    "embedded_query",
    "is_inference",
    "neighbour_pulls",
    "plain_statement",
    "session_cohesion",
    "thread_pulls",
]
