"""Durable ingestion in the core: a remembered turn is one small queued insert; the queues (turns, then
embeddings) are drained by the background worker's step, by ``flush`` (with its hand-off to the process
that holds the vector store) or by ``ingest_pending``."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hermes_memory.core.tiers import Tiers
from hermes_memory.core.working import WorkingMemory
from hermes_memory.errors import StorageError, ValidationError
from hermes_memory.extract.speech import strip_memory_context
from hermes_memory.ingest.turns import new_turn_uuid
from hermes_memory.records import Episode, TurnMessage, TurnPayload

if TYPE_CHECKING:
    from hermes_memory.ingest.background import BackgroundWorker
    from hermes_memory.ingest.worker import Ingestor

# While another process holds the vector store, it writes our embeddings; flush waits for them only
# while it sees the queue shrink, and gives up after this long without progress.
_HANDOFF_WAIT_S = 3.0
# Embedding goes in pieces sized to take about this long each, so a short process (one `hermes -z`)
# commits its progress piece by piece: a big batch cut off by the process's exit is lost and the next
# process starts over with the same rows. A piece starts small and grows (at most doubling) while the
# embedder keeps the pace; ``tier3.embed_batch_size`` caps it.
PIECE_TARGET_S = 0.5
_FIRST_PIECE = 4
# At exit (``Memory.close`` without a drain) the worker goes on embedding until the queue is shorter
# than when this process opened the store, for at most this long, and while it makes progress.
EXIT_EMBED_S = 3.0
_EXIT_STALL_S = 1.0


@dataclass(frozen=True, slots=True)
class Queued:
    """A remembered turn, durably queued: ``queued`` is False when this turn id was already queued."""

    turn_id: str
    queued: bool
    time: float

    def to_dict(self) -> dict[str, Any]:
        return {"turn_id": self.turn_id, "queued": self.queued, "time": self.time}


@dataclass(frozen=True, slots=True)
class Pending:
    """Work queued but not yet written: turns, and vector writes (0 without Tier 3)."""

    turns: int
    embeddings: int

    def to_dict(self) -> dict[str, int]:
        return {"turns": self.turns, "embeddings": self.embeddings}


@dataclass(frozen=True, slots=True)
class Flushed:
    """What ``flush`` left: ``pending`` work, and ``degraded``: why vectors may still be pending (another
    process holds the vector store and writes them)."""

    pending: Pending
    degraded: tuple[str, ...] = ()

    @property
    def drained(self) -> bool:
        return self.pending.turns == 0 and self.pending.embeddings == 0

    def to_dict(self) -> dict[str, Any]:
        return {"drained": self.drained, "pending": self.pending.to_dict()}


@dataclass(frozen=True, slots=True)
class Ingested:
    """``written`` turns, and what is still ``pending``."""

    written: int
    pending: Pending

    def to_dict(self) -> dict[str, Any]:
        return {"written": self.written, "pending": self.pending.to_dict()}


class Ingest:
    """Remembering turns and draining the durable queues, for one ``Tiers``.

    ``ingestor()`` gives the Memory's (None without Tier 2), built when a write first needs it so a
    read never imports the write path; ``worker()`` gives the background worker while one runs.
    Arguments are checked by the caller (``MemoryAPI`` validates its input); this service applies the
    store's policy: recalled memory is never stored again, credentials are redacted."""

    def __init__(
        self,
        tiers: Tiers,
        ingestor: Callable[[], Ingestor | None],
        worker: Callable[[], BackgroundWorker | None],
        working: WorkingMemory | None = None,
    ) -> None:
        self._tiers = tiers
        self._ingestor_of = ingestor
        self._worker = worker
        # Every remembered message is also put in its session's working-memory buffer (``core.working``).
        self.working = working if working is not None else WorkingMemory(0)
        # What the background worker does, in order, once the queues are empty (e.g. the scheduled
        # maintenance): each is given ``stopping`` and returns True while it made progress.
        self.idle_tasks: list[Callable[[Callable[[], bool]], bool]] = []
        self._piece = _FIRST_PIECE  # queue rows per embedding piece (see PIECE_TARGET_S)

    @property
    def _ingestor(self) -> Ingestor | None:
        return self._ingestor_of()

    # -- remembering ------------------------------------------------------------------------------
    def remember_turn(
        self,
        messages: Sequence[TurnMessage],
        session_id: str,
        time_: float,
        *,
        metadata: Mapping[str, Any] | None = None,
        turn_id: str | None = None,
    ) -> Queued:
        """Durably queue one exchange. Recalled memory (Hermes' ``<memory-context>`` fence) is removed
        from each message, credentials are redacted. Raises ValidationError when nothing is left to
        remember, StorageError."""
        kept = [self._clean(m) for m in messages]
        if not any(m.text.strip() for m in kept):
            raise ValidationError("a turn needs a non-empty user or assistant message")
        return self._enqueue(kept, session_id, time_, metadata, turn_id)

    def remember_message(
        self,
        message: TurnMessage,
        session_id: str,
        time_: float,
        *,
        metadata: Mapping[str, Any] | None = None,
        turn_id: str | None = None,
    ) -> Queued:
        """Durably queue a single message (the one-sided form of ``remember_turn``)."""
        kept = self._clean(message)
        if not kept.text.strip():
            raise ValidationError(
                "text holds only recalled memory context (<memory-context>); nothing to remember"
            )
        return self._enqueue([kept], session_id, time_, metadata, turn_id)

    def remember_many(self, turns: Sequence[Mapping[str, Any]]) -> list[Queued]:
        """Durably queue several turns, all or nothing: each is ``remember_turn``'s keyword arguments
        (``messages``, ``session_id``, ``time_``, ``metadata``, ``turn_id``); every one is cleaned and
        checked before anything is written, then all are committed in ONE transaction. Raises
        ValidationError naming the first turn with nothing left to remember (nothing queued),
        StorageError (nothing queued)."""
        t = self._tiers
        staged: list[tuple[str, TurnPayload]] = []
        for index, turn in enumerate(turns):
            kept = [self._clean(m) for m in turn["messages"]]
            if not any(m.text.strip() for m in kept):
                raise ValidationError(f"items[{index}]: nothing to remember (empty, or only recalled memory)")
            payload = TurnPayload(
                session_id=turn["session_id"], time=turn["time_"], messages=tuple(kept),
                metadata=t.secret_free_data(dict(turn.get("metadata") or {})), scope=t.scope,
            )  # fmt: skip
            uuid = turn.get("turn_id") or new_turn_uuid()
            staged.append((uuid, payload))
        queued = t.tier2().ingest_queue.enqueue_many(staged)
        out = []
        for (uuid, payload), fresh in zip(staged, queued, strict=True):
            if fresh:
                self.working.add(payload.session_id, payload.messages, payload.time, uuid)
            out.append(Queued(uuid, fresh, payload.time))
        worker = self._worker()
        if worker is not None:
            worker.wake()
        return out

    def _clean(self, message: TurnMessage) -> TurnMessage:
        body = self._tiers.secret_free(strip_memory_context(message.text))
        return TurnMessage(message.role, body, message.speaker)

    def _enqueue(
        self,
        messages: list[TurnMessage],
        session_id: str,
        time_: float,
        metadata: Mapping[str, Any] | None,
        turn_id: str | None,
    ) -> Queued:
        t = self._tiers
        payload = TurnPayload(
            session_id=session_id,
            time=time_,
            messages=tuple(messages),
            metadata=t.secret_free_data(dict(metadata or {})),
            scope=t.scope,
        )
        uuid = turn_id if turn_id is not None else new_turn_uuid()
        queued = t.tier2().ingest_queue.enqueue(uuid, payload)
        if queued:
            self.working.add(session_id, payload.messages, time_, uuid)
        worker = self._worker()
        if worker is not None:
            worker.wake()
        return Queued(uuid, queued, time_)

    # -- draining ---------------------------------------------------------------------------------
    def flush(self, timeout: float | None = 30.0) -> Flushed:
        """Wait until every queued turn and embedding is written (or ``timeout`` seconds pass).

        While another process holds the vector store, that process writes the embeddings: flush waits
        for them while the queue shrinks. Raises StorageError when queued turns could not be written
        (they stay queued)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        tier2, sem = self._tiers.tier2(), self._tiers.sem
        degraded: list[str] = []
        last_embeds, progress_at = -1, time.monotonic()
        while True:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                break
            worker, wrote = self._worker(), True
            if worker is not None and worker.alive:
                worker.wait_idle(1.0 if left is None else min(left, 1.0))
            else:
                wrote = self.drain_once(deadline)
            counts = self.pending()
            if counts.turns == 0 and counts.embeddings == 0:
                break
            reason = sem.busy_reason() if sem is not None and counts.turns == 0 else None
            if reason is None:
                if not wrote:
                    time.sleep(0.05)  # another process drains the queues now (it holds their leases)
                continue
            degraded[:] = [reason]
            if counts.embeddings != last_embeds:
                last_embeds, progress_at = counts.embeddings, time.monotonic()
            elif time.monotonic() - progress_at >= _HANDOFF_WAIT_S:
                break  # the holder is not draining now; the rows stay queued for it
            time.sleep(0.05)
        pending = Pending(tier2.ingest_queue.count(), tier2.embed_queue.count())
        failing, last = tier2.ingest_queue.failing() if pending.turns else (0, None)
        if failing:
            # The worker could not write them (its error is logged there): say so instead of "not yet".
            raise StorageError(
                f"{failing} queued turn(s) could not be written and stay queued; last error: {last}"
            )
        if pending.embeddings == 0:
            degraded.clear()  # the vectors were written in the end (by the holder, or after a handover)
        return Flushed(pending, tuple(degraded))

    def ingest_pending(self, timeout: float | None = 2.0) -> Ingested:
        """Write the queued turns now, in the caller's thread (up to ``timeout`` s)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        ingestor = self._ingestor
        written = ingestor.drain(deadline=deadline) if ingestor is not None else 0
        return Ingested(written, self.pending())

    def catch_up(self, seconds: float) -> tuple[int, str | None]:
        """Write the queued turns (for up to ``seconds``), then say how many of them cannot be written
        (they carry an error and stay queued) and the newest such error. Raises StorageError."""
        ingestor = self._ingestor
        if ingestor is not None:
            ingestor.drain(deadline=time.monotonic() + seconds)
        return self._tiers.tier2().ingest_queue.failing()

    def pending(self) -> Pending:
        """Turns (in the turn inbox and queue) and embeddings (0 without Tier 3) not yet written."""
        tier2 = self._tiers.tier2()
        return Pending(
            tier2.ingest_queue.count(), tier2.embed_queue.count() if self._tiers.sem is not None else 0
        )

    def turns_behind(self) -> int:
        """Stored turns not yet searchable by meaning (a text of theirs waits for its vector); 0 without
        Tier 3. Raises StorageError."""
        if self._tiers.sem is None or self._tiers.t2 is None:
            return 0
        return self._tiers.tier2().embed_queue.turns_behind()

    def embed_before_exit(self, below: int, budget: float = EXIT_EMBED_S) -> int:
        """Let the background worker embed until fewer than ``below`` rows (or none) are queued, for at
        most ``budget`` s and while the queue keeps shrinking; returns the rows left. The caller then
        stops the worker: every piece written so far is committed. Counts on a connection of its own
        (``queued_embeddings``), so a worker stuck inside a transaction cannot hold it up."""
        worker = self._worker()
        if self._tiers.sem is None or worker is None or not worker.alive:
            return 0
        deadline = time.monotonic() + budget
        last, progress_at = self.queued_embeddings(), time.monotonic()
        while last > 0 and last >= below and time.monotonic() < deadline:
            if time.monotonic() - progress_at >= _EXIT_STALL_S:
                break  # nothing moves (the rows wait for the vector store's holder, a stuck step, or fail)
            worker.wake()
            time.sleep(0.05)
            now = self.queued_embeddings()
            if now < last:
                progress_at = time.monotonic()
            last = now
        return last

    def queued_embeddings(self) -> int:
        """Rows in the embed queue, store-wide, read on a connection of its own: never waits for the
        worker (which may be inside a transaction that will not end); 0 when it cannot be read."""
        from hermes_memory.tier2.peek import count_rows

        return count_rows(self._tiers.config.db_path, "embed_queue") or 0

    def latest(self, count: int, before: float | None = None) -> list[Episode]:
        """The newest ``count`` episodes (before ``before`` if given), oldest first."""
        return self._tiers.tier2().episodes.latest(count=count, before=before)

    def drain_once(
        self,
        deadline: float | None = None,
        stop: Callable[[], bool] | None = None,
        *,
        background: bool = False,
    ) -> bool:
        """One pass over both queues in the caller's thread (turns first, then embeddings, a batch at a
        time so ``stop()`` is seen between batches); True when anything was written. ``background`` (the
        worker): new turns settle for ``SETTLE_S`` first (Hermes calls ``queue_prefetch`` right after
        ``sync_turn``), and each batch waits, briefly, for the recalls running in this process
        (``recall.foreground``), so they do not share the cores with work nobody waits for.

        Back-pressure (config ``limits.max_embedding_queue`` = N): new turns normally pre-empt the
        embeddings (they go first at the next pass); while more than N texts wait to be embedded, they
        pre-empt only after N more were embedded (or the backlog is back at N), so a steady stream of turns
        cannot grow the backlog without bound, and a turn waits at most for N embeddings. No turn is lost or
        refused: the turns queued meanwhile wait in their durable queue (``pending`` and ``status`` show
        both backlogs) and are written at the next pass."""
        from hermes_memory.recall.foreground import BACKGROUND_WAIT_S, QUIET_S, RECALLS, SETTLE_S

        def step_aside() -> None:
            if background:
                RECALLS.wait_until_clear(BACKGROUND_WAIT_S, QUIET_S)

        busy = False
        ingestor, sem = self._ingestor, self._tiers.sem
        if ingestor is not None:  # Tier 2 is open: recall records fact uses, the writer writes them
            self._tiers.tier2().flush_accesses()
            if background and self._tiers.tier2().ingest_queue.count():
                time.sleep(SETTLE_S)  # the next turn's prefetch goes first
            step_aside()
            busy = ingestor.drain(deadline=deadline, stop=stop) > 0
        if sem is None:
            return busy
        return self._embed(stop, deadline, step_aside) or busy

    def _embed(
        self,
        stop: Callable[[], bool] | None,
        deadline: float | None,
        step_aside: Callable[[], None],
    ) -> bool:
        """Embed queued texts a batch at a time until the queue runs dry, ``stop()`` or the deadline, or
        new turns come in (over ``limits.max_embedding_queue``, only once that many were embedded: see
        ``drain_once``). True when anything was written."""
        sem, busy = self._tiers.sem, False
        assert sem is not None  # the caller checks
        batch = max(1, sem.cfg.embed_batch_size)
        cap = self._tiers.config.limits.max_embedding_queue
        queue = self._tiers.tier2().embed_queue
        owed = cap if queue.longer_than(cap) else 0  # embeddings this pass owes before turns pre-empt
        while not (stop is not None and stop()):
            if owed > 0 and not queue.longer_than(cap):
                owed = 0
            if owed <= 0 and self._tiers.t2 is not None and self._tiers.t2.ingest_queue.count():
                return True  # new turns came in: they go first (the next step)
            step_aside()
            piece = min(batch, self._piece)
            started = time.monotonic()
            # no count of what is left (it visits every queued row: per batch, quadratic in a backlog)
            report = sem.drain(max_items=piece, count_remaining=False)
            self._piece = next_piece(piece, report.taken, time.monotonic() - started, batch)
            owed -= report.taken
            busy = busy or report.upserted > 0 or report.deleted > 0
            if report.deferred or report.taken < piece:
                break  # the queue ran dry (or holds only rows for the engine's holder)
            if deadline is not None and time.monotonic() >= deadline:
                break
        return busy

    def idle_upkeep(self) -> bool:
        """What the background worker does when the queues are empty: carry on a pending threat re-scan
        (text stored under an older detector: ``RESCAN_PER_IDLE`` rows a cycle, so a long-lived process
        finishes what the bounded re-scan at open began), and write the exact index's snapshot when this
        process's index changed enough since it was loaded or written (a cold process then maps it
        instead of reading every stored vector; ``SemanticMemory.save_exact_snapshot``). Two primary-key
        reads when there is nothing to do. Returns False (idle: the worker sleeps). Raises StorageError,
        OSError (the worker logs them)."""
        from hermes_memory.tier2 import verdicts

        verdicts.refresh(self._tiers.tier2().db, verdicts.RESCAN_PER_IDLE)
        if self._tiers.sem is not None:
            self._tiers.sem.save_exact_snapshot(wait=False)  # a search or load in progress: next time
        return False

    def background_step(self, stopping: Callable[[], bool]) -> bool:
        """The background worker's step: drain both queues (until ``stopping()``), else idle upkeep and
        the idle tasks; True while it made progress."""
        if self.drain_once(stop=stopping, background=True) or self.idle_upkeep():
            return True
        busy = False
        for task in list(self.idle_tasks):
            if stopping():
                break
            busy = task(stopping) or busy
        return busy


def next_piece(piece: int, taken: int, seconds: float, cap: int) -> int:
    """The size of the next embedding piece: what fits in ``PIECE_TARGET_S`` at the pace just seen (a
    piece at most doubles; at least 1, at most ``cap``)."""
    if taken <= 0:
        return piece
    fits = int(PIECE_TARGET_S * taken / seconds) if seconds > 0 else cap
    return max(1, min(cap, 2 * piece, fits))


__all__ = [
    "EXIT_EMBED_S", "PIECE_TARGET_S", "Flushed", "Ingest", "Ingested", "Pending", "Queued", "next_piece",
]  # fmt: skip
