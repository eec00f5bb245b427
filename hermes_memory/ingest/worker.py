"""The ingestion worker: drains the turn queue in batches, and keeps derived stores current.

Each queued turn becomes its episodes, their chunks (embedding enqueued), and the knowledge extracted
from them — written in the same Tier 2 transaction that removes its queue row. A burst of turns (an
import, a long pasted session, a benchmark) is written a batch at a time: the turns' knowledge is
extracted first, outside any transaction, then one short write transaction stores the whole batch and
removes its rows. A crash or error at any step rolls the batch back to "still queued"; the retry uses
the same deterministic episode ids and produces the same final state, so nothing is lost or written
twice. A batch that fails is written again turn by turn, so a bad turn is found, retried and retired
alone. Vector writes and graph updates are derived and follow after commit (the embed queue is itself
durable; the graph is rebuildable from Tier 2).

Extraction before the write sees the entities known before the batch; a turn whose write would change
them (a new entity, alias or type: ``settled``) ends the batch, so the next turn is extracted after it,
exactly as turn-by-turn processing would.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from hermes_memory.errors import HermesMemoryError, StorageError, StorageFullError
from hermes_memory.extract.speech import chatter_kind
from hermes_memory.ingest.turns import episode_uuid, to_timestamp
from hermes_memory.ingest.views import WINDOW_CHUNKS, episode_line, sentence_texts, window_text
from hermes_memory.recall.query import CHATTER_KEY
from hermes_memory.records import Entity, Episode, Relation, TurnPayload
from hermes_memory.tier2 import Tier2
from hermes_memory.tier2.ingest_queue import QueuedTurn
from hermes_memory.tier2.leases import TURNS
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

# Turns per write transaction (measured with the hashing embedder: ~2-3 ms of writing per turn, so
# the write lock is held for well under 0.1 s at a time).
BATCH_TURNS = 32


@runtime_checkable
class StagedKnowledge(Protocol):
    """A ``KnowledgeWriter`` that can extract before the write transaction (see ``RuleBasedKnowledge``)."""

    def __call__(self, tier2: Tier2, episodes: list[Episode], changes: Changes) -> None: ...

    def prepare(self, tier2: Tier2, episodes: list[Episode]) -> Any: ...

    def settled(self, episodes: list[Episode], prepared: Any) -> bool: ...

    def write(self, tier2: Tier2, episodes: list[Episode], prepared: Any, changes: Changes) -> None: ...

    def forget(self) -> None: ...


@dataclass
class _Staged:
    """A turn ready to be written: its draft episodes and what was extracted from them."""

    item: QueuedTurn
    drafts: list[Episode]
    prepared: Any = None
    settled: bool = True


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
        redact: Callable[[str], str] | None = None,
    ):
        self._tier2 = tier2
        self._semantic = semantic
        self._knowledge = knowledge
        # The staged form, when the writer has it (checked once: a Protocol check is slow per turn).
        self._staged = knowledge if isinstance(knowledge, StagedKnowledge) else None
        self._after_commit = after_commit
        self._max_attempts = max_attempts
        # Credentials in a turn queued before redaction was on (or by an older release) are redacted
        # here, before they reach episodes, facts, chunks and vectors (config security.redact_secrets).
        self._redact = redact
        self._lock = threading.Lock()

    def process(self, item: QueuedTurn) -> Changes:
        """Write one turn completely, or not at all. Raises what a step raised (after rollback)."""
        return self.process_batch([item])[0]

    def process_batch(self, items: list[QueuedTurn]) -> list[Changes]:
        """Write the turns in one transaction, all or none (extraction first, outside it). Raises what a
        step raised (after rollback); the after-commit hooks run for every turn even when one raises
        (the first error is raised after them: the turns are stored)."""
        out, failure = self._write_batch([self._stage(item) for item in items])
        if failure is not None:
            raise failure
        return out

    def _stage(self, item: QueuedTurn) -> _Staged:
        """Draft the turn's episodes and extract its knowledge, outside any transaction."""
        payload = item.payload
        drafts: list[Episode] = []
        previous: str | None = None
        for index, message in enumerate(payload.messages):
            text = message.text
            if not text.strip():
                continue
            if self._redact is not None:
                text = self._redact(text)
            drafts.append(
                Episode(
                    uuid=episode_uuid(item.turn_uuid, index), session_id=payload.session_id,
                    role=message.role, speaker=message.speaker, text=text, timestamp=payload.time,
                    metadata=episode_metadata(payload, item.turn_uuid, index, previous),
                )
            )  # fmt: skip
            previous = text
        staged = _Staged(item, drafts)
        knowledge = self._staged
        if knowledge is not None and drafts:
            staged.prepared = knowledge.prepare(self._tier2, drafts)
            staged.settled = knowledge.settled(drafts, staged.prepared)
        return staged

    def _write_batch(self, batch: list[_Staged]) -> tuple[list[Changes], HermesMemoryError | None]:
        """Store the batch in one transaction (raises what a step raised, after rollback), then run the
        after-commit hooks; returns the changes and the first error a hook raised."""
        tier2 = self._tier2
        out: list[Changes] = []
        try:
            with tier2.db.atomic() as conn:
                for staged in batch:
                    out.append(self._write_turn(conn, staged))
        except BaseException:
            if self._staged is not None:
                self._staged.forget()  # its cache may name entities the rollback removed
            raise
        failure: HermesMemoryError | None = None
        for staged, changes in zip(batch, out, strict=True):
            try:
                self._follow(staged.item, changes)
            except HermesMemoryError as exc:
                log.warning("following turn %s after commit failed: %s", staged.item.turn_uuid, exc)
                failure = failure or exc
        return out, failure

    def _write_turn(self, conn: sqlite3.Connection, staged: _Staged) -> Changes:
        """Store one staged turn and remove its queue row, inside the batch's transaction."""
        item, tier2, changes = staged.item, self._tier2, Changes()
        if _already_written(tier2, conn, item):
            # Re-sent after it was written (the caller never saw the first success): a turn is
            # written whole or not at all, so its first episode proves it; only the row goes.
            tier2.ingest_queue.done(conn, item)
            return changes
        for draft in staged.drafts:
            episode = tier2.episodes.add(
                conn, uuid=draft.uuid, session_id=draft.session_id, role=draft.role,
                speaker=draft.speaker, text=draft.text, timestamp=draft.timestamp, metadata=draft.metadata,
            )  # fmt: skip
            changes.episodes.append(episode)
            if self._semantic is not None:
                before = tier2.episodes.previous(conn, episode)
                self._index_episode(episode, episode_line(before) if before is not None else "")
        if self._staged is not None and changes.episodes:
            self._staged.write(tier2, changes.episodes, staged.prepared, changes)
        elif self._knowledge is not None and changes.episodes:
            self._knowledge(tier2, changes.episodes, changes)
        tier2.ingest_queue.done(conn, item)
        return changes

    def _follow(self, item: QueuedTurn, changes: Changes) -> None:
        """Derived stores follow one committed turn."""
        del item  # named for tracing and tests: which turn the hook follows
        if self._after_commit is not None:
            self._after_commit(changes)

    def _index_episode(self, episode: Episode, previous_line: str) -> None:
        """Sentence vectors and a with-the-message-before window vector (see ``views``); one message
        queues at most ``MAX_SENTENCE_VIEWS`` + ``WINDOW_CHUNKS`` texts, however long it is (its words
        all stay in the keyword index). An assistant message that only acknowledges or echoes (a tool's
        output read out) is never recalled on its own: it gets its window vector only."""
        assert self._semantic is not None
        quiet = episode.role == "assistant" and episode.metadata.get(CHATTER_KEY) in ("ack", "echo")
        texts = [] if quiet else [("episode", text, 1) for text in sentence_texts(episode)]
        # Every turn gets a window vector (just the turn when it opens a session), so no turn is
        # missing a signal the others have.
        texts.append(("episode_window", window_text(previous_line, episode), WINDOW_CHUNKS))
        for kind, text, chunks in texts:
            self._semantic.index_text(
                text, source_kind=kind, source_type="session", timestamp=episode.timestamp,
                source_uuid=episode.uuid, session_id=episode.session_id, max_chunks=chunks,
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
        is left in the queue with its error and skipped. When the store has no room to write (disk full,
        file size limit) no attempt is counted and StorageFullError is raised: every turn stays queued.
        Returns the number of turns written (0 when another drain held the queue until ``deadline``, or
        another process holds the store's turn lease, ``tier2.leases``: it writes them, in order).
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
            if not self._tier2.ingest_queue.pending(1, max_attempts=self._max_attempts):
                return 0  # nothing queued (the idle worker's usual case): no lease to take
            with self._tier2.db.lease(TURNS) as held:
                if not held:
                    return 0  # another process drains the queue (in order): it writes these turns
                while not done():
                    room = BATCH_TURNS if max_turns is None else min(BATCH_TURNS, max_turns - written)
                    items = self._tier2.ingest_queue.pending(room, max_attempts=self._max_attempts)
                    if not items:
                        break
                    batch = self._take(items, stop=done)
                    if not batch:
                        break
                    try:
                        _, failure = self._write_batch(batch)
                    except HermesMemoryError:
                        # Find the turn that fails: the batch again, turn by turn, as before batching.
                        wrote, stopped = self._one_by_one([s.item for s in batch], done)
                        written += wrote
                        if stopped:
                            return written
                        continue
                    written += len(batch)
                    if failure is not None:
                        return written  # stored; a derived store did not follow (logged): stop here
        finally:
            self._lock.release()
        return written

    def _take(self, items: list[QueuedTurn], *, stop: Callable[[], bool]) -> list[_Staged]:
        """Stage the turns of the next batch, in order: up to a turn whose write changes what the next
        one's extraction sees (it closes the batch), or until ``stop()``."""
        batch: list[_Staged] = []
        for item in items:
            if batch and stop():
                break
            staged = self._stage(item)
            batch.append(staged)
            if not staged.settled:
                break
        return batch

    def _one_by_one(self, items: list[QueuedTurn], done: Callable[[], bool]) -> tuple[int, bool]:
        """Write each turn in its own transaction; a turn that fails is recorded (attempts, last error).
        Returns (turns written, True when the drain must stop: a failed turn will be retried first)."""
        written = 0
        for item in items:
            if written and done():
                return written, True
            try:
                self.process(item)
            except StorageFullError as exc:
                # The store has no room: not this turn's fault, so no attempt is counted (it is never
                # retired for it). It stays queued, with the error for status; the drain stops here.
                log.warning("ingesting turn %s failed, it stays queued: %s", item.turn_uuid, exc)
                try:
                    self._tier2.ingest_queue.note_error(item, f"{type(exc).__name__}: {exc}")
                except StorageError as note:
                    log.warning("could not record the error of turn %s: %s", item.turn_uuid, note)
                raise
            except HermesMemoryError as exc:
                log.warning(
                    "ingesting turn %s failed (attempt %d): %s", item.turn_uuid, item.attempts + 1, exc
                )
                self._tier2.ingest_queue.fail(item, f"{type(exc).__name__}: {exc}")
                if item.attempts + 1 < self._max_attempts:
                    # Turns are written in order (later facts supersede earlier ones, a turn's
                    # window includes the turn before it): stop here and retry this one first.
                    return written, True
                continue  # retired after max_attempts; it stays queued with its last error
            written += 1
        return written, False


def episode_metadata(
    payload: TurnPayload, turn_uuid: str, index: int, previous: str | None
) -> dict[str, Any]:
    """The stored metadata of message ``index``: the caller's, its place in the turn, and ``chatter``:
    the kind when the message only asks, greets, acknowledges or (the AI) echoes — kept as an episode,
    never recalled as knowledge on its own — else null. ``previous``: the turn's message before it."""
    message = payload.messages[index]
    meta = {**payload.metadata, "turn_uuid": turn_uuid, "index": index}
    # Only ingestion decides this (a caller's "chatter" key is overwritten); null: it tells something.
    meta[CHATTER_KEY] = chatter_kind(message.text, role=message.role, replying_to=previous)
    return meta


def _already_written(tier2: Tier2, conn: sqlite3.Connection, item: QueuedTurn) -> bool:
    first = next((i for i, m in enumerate(item.payload.messages) if m.text.strip()), None)
    if first is None:
        return False
    return tier2.episodes.stored(conn, episode_uuid(item.turn_uuid, first))


__all__ = [
    "BATCH_TURNS",
    "AfterCommit",
    "Changes",
    "Ingestor",
    "KnowledgeWriter",
    "StagedKnowledge",
    "episode_metadata",
    "to_timestamp",
]
