"""The ingestion worker: drains the turn queue, one turn per transaction, and keeps derived stores current.

Each queued turn becomes its episodes, their chunks (embedding enqueued), and the knowledge extracted
from them — all in ONE Tier 2 transaction that also removes the queue row. A crash or error at any step
rolls everything back to "still queued"; the retry uses the same deterministic episode ids and produces
the same final state, so nothing is lost or written twice. Vector writes and graph updates are derived
and follow after commit (the embed queue is itself durable; the graph is rebuildable from Tier 2).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from hermes_memory.errors import HermesMemoryError
from hermes_memory.extract.speech import chatter_kind
from hermes_memory.ingest.turns import episode_uuid
from hermes_memory.ingest.views import episode_line, sentence_texts, window_text
from hermes_memory.recall.query import CHATTER_KEY
from hermes_memory.records import Entity, Episode, Relation
from hermes_memory.tier2 import Tier2
from hermes_memory.tier2.ingest_queue import QueuedTurn
from hermes_memory.tier3.semantic import SemanticMemory

log = logging.getLogger(__name__)


@dataclass
class Changes:
    """What one processed turn touched, for derived stores to follow after commit."""

    episodes: list[Episode] = field(default_factory=list)
    entities: list[Entity] = field(default_factory=list)
    relations: list[Relation] = field(default_factory=list)


# (tier2, episodes of a turn, changes) -> None; runs inside the turn's transaction.
KnowledgeWriter = Callable[[Tier2, list[Episode], Changes], None]
AfterCommit = Callable[[Changes], None]


class Ingestor:
    """Processes queued turns. Thread-safe: one turn at a time per instance."""

    def __init__(
        self,
        tier2: Tier2,
        semantic: SemanticMemory | None,
        *,
        knowledge: KnowledgeWriter | None = None,
        after_commit: AfterCommit | None = None,
        max_attempts: int = 5,
    ):
        self._tier2 = tier2
        self._semantic = semantic
        self._knowledge = knowledge
        self._after_commit = after_commit
        self._max_attempts = max_attempts
        self._lock = threading.Lock()

    def process(self, item: QueuedTurn) -> Changes:
        """Write one turn completely, or not at all. Raises what a step raised (after rollback)."""
        payload = item.payload
        changes = Changes()
        tier2 = self._tier2
        with tier2.db.atomic() as conn:
            if _already_written(conn, item):
                # Re-sent after it was written (the caller never saw the first success): a turn is
                # written whole or not at all, so its first episode proves it; only the row goes.
                tier2.ingest_queue.done(conn, item)
                return changes
            previous: str | None = None
            for index, message in enumerate(payload["messages"]):
                text = message["text"]
                if not text.strip():
                    continue
                episode = tier2.episodes.add(
                    conn,
                    uuid=episode_uuid(item.turn_uuid, index),
                    session_id=payload["session_id"],
                    role=message["role"],
                    speaker=message.get("speaker"),
                    text=text,
                    timestamp=payload["time"],
                    metadata=episode_metadata(payload, item.turn_uuid, index, previous),
                )
                previous = text
                changes.episodes.append(episode)
                if self._semantic is not None:
                    before = tier2.episodes.previous(conn, episode)
                    self._index_episode(episode, episode_line(before) if before is not None else "")
            if self._knowledge is not None and changes.episodes:
                self._knowledge(tier2, changes.episodes, changes)
            tier2.ingest_queue.done(conn, item)
        if self._after_commit is not None:
            self._after_commit(changes)
        return changes

    def _index_episode(self, episode: Episode, previous_line: str) -> None:
        """Sentence vectors and a with-the-message-before window vector (see ``views``)."""
        assert self._semantic is not None
        texts = [("episode", text) for text in sentence_texts(episode)]
        # Every turn gets a window vector (just the turn when it opens a session), so no turn is
        # missing a signal the others have.
        texts.append(("episode_window", window_text(previous_line, episode)))
        for kind, text in texts:
            self._semantic.index_text(
                text, source_kind=kind, source_type="session", timestamp=episode.timestamp,
                source_uuid=episode.uuid, session_id=episode.session_id,
            )  # fmt: skip

    def drain(
        self,
        *,
        max_turns: int | None = None,
        deadline: float | None = None,
        stop: Callable[[], bool] | None = None,
    ) -> int:
        """Process queued turns in order until the queue is empty, ``max_turns``, ``deadline`` or
        ``stop()`` (checked between turns: a turn is always written whole).

        A turn whose processing fails is recorded (attempts, last error) and the drain stops there, so
        turns are always written in order; the next drain retries it. After ``max_attempts`` failures it
        is left in the queue with its error and skipped. Returns the number of turns written (0 when
        another drain held the queue until ``deadline``).
        """
        written = 0
        wait = -1.0 if deadline is None else min(threading.TIMEOUT_MAX, max(0.0, deadline - time.monotonic()))
        if not self._lock.acquire(timeout=wait):
            return 0  # another thread is draining: it writes these turns

        def done() -> bool:
            return (
                (max_turns is not None and written >= max_turns)
                or (deadline is not None and time.monotonic() >= deadline)
                or (stop is not None and stop())
            )

        try:
            while not done():
                batch = self._tier2.ingest_queue.pending(16, max_attempts=self._max_attempts)
                if not batch:
                    break
                progressed = False
                for item in batch:
                    try:
                        self.process(item)
                    except HermesMemoryError as exc:
                        log.warning(
                            "ingesting turn %s failed (attempt %d): %s",
                            item.turn_uuid,
                            item.attempts + 1,
                            exc,
                        )
                        self._tier2.ingest_queue.fail(item, f"{type(exc).__name__}: {exc}")
                        if item.attempts + 1 < self._max_attempts:
                            # Turns are written in order (later facts supersede earlier ones, a turn's
                            # window includes the turn before it): stop here and retry this one first.
                            return written
                        continue  # retired after max_attempts; it stays queued with its last error
                    written += 1
                    progressed = True
                    if done():
                        break
                if not progressed:
                    break
        finally:
            self._lock.release()
        return written


def episode_metadata(
    payload: dict[str, Any], turn_uuid: str, index: int, previous: str | None
) -> dict[str, Any]:
    """The stored metadata of message ``index``: the caller's, its place in the turn, and ``chatter``:
    the kind when the message only asks, greets, acknowledges or (the AI) echoes — kept as an episode,
    never recalled as knowledge on its own — else null. ``previous``: the turn's message before it."""
    message = payload["messages"][index]
    meta = {**payload.get("metadata", {}), "turn_uuid": turn_uuid, "index": index}
    # Only ingestion decides this (a caller's "chatter" key is overwritten); null: it tells something.
    meta[CHATTER_KEY] = chatter_kind(message["text"], role=message["role"], replying_to=previous)
    return meta


def _already_written(conn: sqlite3.Connection, item: QueuedTurn) -> bool:
    first = next((i for i, m in enumerate(item.payload["messages"]) if m["text"].strip()), None)
    if first is None:
        return False
    uuid = episode_uuid(item.turn_uuid, first)
    return conn.execute("SELECT 1 FROM episodes WHERE uuid = ?", (uuid,)).fetchone() is not None


def to_timestamp(value: float | datetime | str | None) -> float:
    """A turn time as Unix seconds: None is now; naive datetimes are UTC; ISO-8601 strings are parsed.

    Raises ValueError for an unparsable string (the API turns it into a ValidationError).
    """
    if value is None:
        return time.time()
    if isinstance(value, datetime):
        dt = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
        return dt.timestamp()
    if isinstance(value, str):
        dt = datetime.fromisoformat(value.strip())
        return (dt if dt.tzinfo is not None else dt.replace(tzinfo=UTC)).timestamp()
    return float(value)
