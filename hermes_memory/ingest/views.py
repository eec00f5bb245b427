"""The texts an episode is indexed under. Measured on LoCoMo (bench/locomo_research.py): a turn scored
by its best sentence vector plus a vector of the turn with the message before it retrieves far better
than one vector of the turn alone — a chatty turn's one informative sentence is not averaged away, and
a reply's meaning often lives in the message it answers."""

from __future__ import annotations

import re

from hermes_memory.records import Episode

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
MIN_SENTENCE_WORDS = 4
# At most this many sentence texts per message: a long reply's sentences are joined into this many runs,
# so one turn queues a bounded number of embeddings (every word stays indexed).
MAX_SENTENCE_VIEWS = 6
# A sentence text is embedded as one chunk (its head: a run-on "sentence" such as a JSON dump is not
# split into many), a window as at most this many.
WINDOW_CHUNKS = 2


def episode_line(episode: Episode) -> str:
    """The episode as recall shows and indexes it: 'Speaker: text'."""
    return f"{episode.speaker}: {episode.text}" if episode.speaker else episode.text


def sentence_texts(episode: Episode) -> list[str]:
    """One text per informative sentence (>= 4 words), each prefixed with the speaker."""
    prefix = f"{episode.speaker}: " if episode.speaker else ""
    parts = [p for p in _SENTENCE_END.split(episode.text.strip()) if len(p.split()) >= MIN_SENTENCE_WORDS]
    if not parts:
        parts = [episode.text.strip()]
    if len(parts) > MAX_SENTENCE_VIEWS:
        size = -(-len(parts) // MAX_SENTENCE_VIEWS)  # sentences per run, rounded up
        parts = [" ".join(parts[i : i + size]) for i in range(0, len(parts), size)]
    return [prefix + p for p in parts]


def window_text(previous_line: str, episode: Episode) -> str:
    """The episode together with the message before it in the session."""
    return f"{previous_line}\n{episode_line(episode)}".strip()


__all__ = [
    "MAX_SENTENCE_VIEWS",
    "MIN_SENTENCE_WORDS",
    "WINDOW_CHUNKS",
    "episode_line",
    "sentence_texts",
    "window_text",
]
