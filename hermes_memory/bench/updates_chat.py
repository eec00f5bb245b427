"""Real conversation as the update mechanism meets it: statements that replace nothing.

The labelled corpus holds pairs written to be about one attribute; a chat is mostly something else:
feelings, compliments, plans, stories ("It's so peaceful", "Sounds great, Mel", "Art gives me joy"). Read
clause by clause, every statement a speaker makes meets everything they said before, and nearly none of
those meetings is an update. These meetings are the negatives the decision must also learn from, and the
number of statements a conversation's clauses close is the figure that says how the mechanism behaves in
real use (LoCoMo's conversations: two friends over months, with a handful of true changes at most).

``chat_statements`` reads a LoCoMo-format conversation (turns only, never its summaries) into each
speaker's statements in order; ``chat_combos`` pairs each statement with the earlier ones of the same
speaker the detector would weigh (``UpdateDetector.comparable``, at least ``floor`` close); ``closures``
counts what the detector closes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from hermes_memory.bench.locomo import parse_session_time
from hermes_memory.updates.detector import UpdateDetector
from hermes_memory.updates.holders import named_holders
from hermes_memory.updates.message import read_message
from hermes_memory.updates.statement import Statement
from hermes_memory.updates.writer import RECENT, StatementUpdates

#: The closest earlier statements each new one is paired with (the detector decides on the closest few).
NEAREST = 3


@dataclass(frozen=True)
class Conversation:
    """One conversation's statements, each speaker's in the order said (``earlier`` excludes small talk
    that would get no fact)."""

    name: str
    #: speaker -> (statement, the other clauses of its message, how many of ``kept`` were said before it)
    said: dict[str, list[tuple[Statement, tuple[Statement, ...], int]]]
    kept: dict[str, list[Statement]]  # speaker -> statements a later one could replace, in order


def load_conversations(path: Path) -> list[Conversation]:
    """The conversations of a LoCoMo-format file (``sample_id``, ``conversation`` with ``session_N``
    turns and ``session_N_date_time``)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return [chat_statements(sample["sample_id"], sample["conversation"]) for sample in data]


def chat_statements(name: str, conversation: dict[str, Any]) -> Conversation:
    speakers = [conversation["speaker_a"], conversation["speaker_b"]]
    holders = frozenset(s.casefold() for s in speakers)
    said: dict[str, list[tuple[Statement, tuple[Statement, ...], int]]] = {s: [] for s in speakers}
    kept: dict[str, list[Statement]] = {s: [] for s in speakers}
    subjects: set[str] = set()  # whom the store holds statements about
    sessions = sorted(
        (int(key.split("_")[1]), turns)
        for key, turns in conversation.items()
        if key.startswith("session_") and isinstance(turns, list)
    )
    for number, turns in sessions:
        stamp = conversation.get(f"session_{number}_date_time")
        when = parse_session_time(stamp) if stamp else None
        for turn in turns:
            speaker, text = turn.get("speaker"), (turn.get("text") or "").replace("’", "'")
            if speaker not in said or not text.strip():
                continue
            message = read_message(text, speaker=speaker, when=when, holders=holders, subjects=subjects)
            for clause, statement in message:
                others = tuple(s for c, s in message if c != clause)
                said[speaker].append((statement, others, len(kept[speaker])))
                stored = statement.asserts and not statement.presupposed and statement.holder
                if stored and StatementUpdates.stated(statement, clause):
                    kept[speaker].append(statement)
                    subjects.update(named_holders([statement]))
    return Conversation(name, said, kept)


def embed(conversations: Sequence[Conversation], detector: UpdateDetector) -> None:
    """Every statement's two texts into the detector's cache (one batch)."""
    detector.vectors(
        [t for conv in conversations for group in conv.said.values() for s, _, _ in group
         for t in (s.normal, s.masked)]
    )  # fmt: skip


def chat_combos(
    conv: Conversation, detector: UpdateDetector, floor: float
) -> list[tuple[Statement, Statement, float, tuple[Statement, ...]]]:
    """(old, new, cos_full, context) for each asserting statement and the ``NEAREST`` earlier statements
    of its speaker the detector would weigh it against."""
    out: list[tuple[Statement, Statement, float, tuple[Statement, ...]]] = []
    for speaker, group in conv.said.items():
        earlier = conv.kept[speaker]
        if not earlier:
            continue
        vec = detector.vectors([s.normal for s in earlier])
        matrix = np.stack([vec[s.normal] for s in earlier])
        for new, context, before in group:
            if before == 0 or not new.asserts:
                continue
            new_vec = detector.vectors([new.normal])[new.normal]
            cos = matrix[:before] @ new_vec
            order = [int(i) for i in np.argsort(-cos) if cos[i] >= floor]
            comparable = set(detector.comparable(new, [earlier[i] for i in order[: NEAREST * 4]]))
            chosen = [order[k] for k in sorted(comparable)][:NEAREST]
            for i in chosen:
                out.append((earlier[i], new, float(cos[i]), context))
    return out


def closures(conv: Conversation, detector: UpdateDetector) -> int:
    """How many statements of the conversation close an earlier one of their speaker's."""
    closed = 0
    for speaker, group in conv.said.items():
        earlier = conv.kept[speaker]
        for new, context, before in group:
            if before and detector.replaced(new, earlier[max(0, before - RECENT) : before], context):
                closed += 1
    return closed


__all__ = [
    "NEAREST",
    "Conversation",
    "chat_combos",
    "chat_statements",
    "closures",
    "embed",
    "load_conversations",
]
