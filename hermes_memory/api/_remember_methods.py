"""MemoryAPI methods of durable ingestion: remember_turn / remember_message, flush, get_latest."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from hermes_memory import validation as v
from hermes_memory.api.envelope import Envelope, run
from hermes_memory.errors import StorageError, ValidationError
from hermes_memory.extract.speech import strip_memory_context
from hermes_memory.ingest.background import BackgroundWorker
from hermes_memory.ingest.turns import TurnMessage, new_turn_uuid
from hermes_memory.ingest.worker import Ingestor, to_timestamp
from hermes_memory.security.threats import neutralise_data
from hermes_memory.tier2 import Tier2
from hermes_memory.tier3.semantic import SemanticMemory

# A turn may be long (pasted logs, code); it is chunked, not refused, up to this size per message.
MAX_TURN_CHARS = 1_000_000
_MAX_METADATA_CHARS = 20_000
# While another process holds the vector store, it writes our embeddings; flush waits for them only
# while it sees the queue shrink, and gives up after this long without progress.
_HANDOFF_WAIT_S = 3.0
# ingest_pending waits at most a day (beyond it, pass None: no bound).
_MAX_INGEST_WAIT_S = 86400.0


class RememberMethods:
    """Mixed into MemoryAPI; expects ``_tier2()``, ``_ingestor``, ``_worker``, ``_sem`` and ``scope``."""

    scope: str
    _ingestor: Ingestor | None
    _worker: BackgroundWorker | None
    _sem: SemanticMemory | None

    def _tier2(self) -> Tier2:
        raise NotImplementedError

    def _secret_free(self, text: str) -> str:
        """``text`` with credentials redacted (config ``security.redact_secrets``), else unchanged."""
        raise NotImplementedError

    def _secret_free_data(self, value: dict[str, Any]) -> dict[str, Any]:
        """``value``'s strings with credentials redacted (config ``security.redact_secrets``)."""
        raise NotImplementedError

    def remember_turn(
        self,
        user: str | None,
        assistant: str | None,
        session_id: str,
        time_: float | datetime | str | None = None,
        *,
        user_name: str | None = None,
        assistant_name: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        turn_id: str | None = None,
    ) -> Envelope:
        """Durably queue one exchange (one small insert) and return; the worker stores and extracts it."""

        def call() -> dict[str, Any]:
            messages = []
            for role, text, name in (("user", user, user_name), ("assistant", assistant, assistant_name)):
                if text is None:
                    continue
                # Recalled memory (Hermes' <memory-context> fence) is never stored again as if said.
                body = strip_memory_context(v.text(role, text, max_chars=MAX_TURN_CHARS, allow_empty=True))
                body = self._secret_free(body)
                speaker = v.optional_text(f"{role}_name", name, max_chars=200)
                messages.append(TurnMessage(role, body, speaker))
            if not any(m.text.strip() for m in messages):
                raise ValidationError("a turn needs a non-empty user or assistant message")
            return self._enqueue(messages, session_id, time_, metadata, turn_id)

        return run("tier2", call)

    def remember_message(
        self,
        text: str,
        session_id: str,
        time_: float | datetime | str | None = None,
        *,
        role: str = "user",
        speaker: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        turn_id: str | None = None,
    ) -> Envelope:
        """Durably queue a single message (the one-sided form of ``remember_turn``)."""

        def call() -> dict[str, Any]:
            body = strip_memory_context(v.text("text", text, max_chars=MAX_TURN_CHARS))
            if not body.strip():
                raise ValidationError(
                    "text holds only recalled memory context (<memory-context>); nothing to remember"
                )
            v.choice("role", role, {"user", "assistant"})
            name = v.optional_text("speaker", speaker, max_chars=200)
            message = TurnMessage(role, self._secret_free(body), name)
            return self._enqueue([message], session_id, time_, metadata, turn_id)

        return run("tier2", call)

    def _enqueue(
        self,
        messages: list[TurnMessage],
        session_id: Any,
        when: Any,
        metadata: Mapping[str, Any] | None,
        turn_id: str | None,
    ) -> dict[str, Any]:
        sid = v.text("session_id", session_id, max_chars=200)
        if when is not None and (
            isinstance(when, bool) or not isinstance(when, int | float | str | datetime)
        ):
            raise ValidationError(
                f"time must be Unix seconds, a datetime or ISO-8601 text, got {v.shown(when)}"
            )
        try:
            ts = to_timestamp(when)
        except (ValueError, OverflowError, OSError) as exc:
            raise ValidationError(f"time {v.shown(when)} is not a valid timestamp: {exc}") from exc
        v.timestamp("time", ts)
        meta = self._secret_free_data(_check_metadata(metadata))
        uuid = v.text("turn_id", turn_id, max_chars=200) if turn_id is not None else new_turn_uuid()
        payload = {
            "session_id": sid,
            "time": ts,
            "messages": [m.to_dict() for m in messages],
            "metadata": meta,
            "scope": self.scope,
        }
        queued = self._tier2().ingest_queue.enqueue(uuid, payload)
        if self._worker is not None:
            self._worker.wake()
        return {"turn_id": uuid, "queued": queued, "time": ts}

    def flush(self, timeout: float | None = 30.0) -> Envelope:
        """Wait until every queued turn and embedding is written (or ``timeout`` seconds pass).

        While another process holds the vector store, that process writes the embeddings: flush waits
        for them while the queue shrinks, and ``meta.degraded`` says why vectors may still be pending.
        """
        degraded: list[str] = []

        def call() -> dict[str, Any]:
            deadline = None if timeout is None else time.monotonic() + v.number_value("timeout", timeout)
            tier2 = self._tier2()
            last_embeds, progress_at = -1, time.monotonic()
            while True:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    break
                if self._worker is not None and self._worker.alive:
                    self._worker.wait_idle(1.0 if left is None else min(left, 1.0))
                else:
                    self._drain_once(deadline)
                counts = self._pending_counts()
                turns, embeds = counts["turns"], counts["embeddings"]
                if turns == 0 and embeds == 0:
                    break
                reason = self._sem.busy_reason() if self._sem is not None and turns == 0 else None
                if reason is None:
                    continue
                degraded[:] = [reason]
                if embeds != last_embeds:
                    last_embeds, progress_at = embeds, time.monotonic()
                elif time.monotonic() - progress_at >= _HANDOFF_WAIT_S:
                    break  # the holder is not draining now; the rows stay queued for it
                time.sleep(0.05)
            pending = {"turns": tier2.ingest_queue.count(), "embeddings": tier2.embed_queue.count()}
            failing, last = tier2.ingest_queue.failing() if pending["turns"] else (0, None)
            if failing:
                # The worker could not write them (its error is logged there): say so instead of "not yet".
                raise StorageError(
                    f"{failing} queued turn(s) could not be written and stay queued; last error: {last}"
                )
            if pending["embeddings"] == 0:
                degraded.clear()  # the vectors were written in the end (by the holder, or after a handover)
            return {"drained": pending["turns"] == 0 and pending["embeddings"] == 0, "pending": pending}

        envelope = run("tier2", call, tiers=["tier2", "tier3"])
        if degraded:
            envelope["meta"]["degraded"] = degraded
        return envelope

    def _drain_once(
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
        (``recall.foreground``), so they do not share the cores with work nobody waits for."""
        from hermes_memory.recall.foreground import BACKGROUND_WAIT_S, RECALLS, SETTLE_S

        def step_aside() -> None:
            if background:
                RECALLS.wait_until_clear(BACKGROUND_WAIT_S)

        busy = False
        if self._ingestor is not None:  # Tier 2 is open: recall records fact uses, the writer writes them
            self._tier2().flush_accesses()
        if self._ingestor is not None:
            if background and self._tier2().ingest_queue.count():
                time.sleep(SETTLE_S)  # the next turn's prefetch goes first
            step_aside()
            busy = self._ingestor.drain(deadline=deadline, stop=stop) > 0
        if self._sem is None:
            return busy
        batch = max(1, self._sem.cfg.embed_batch_size)
        while not (stop is not None and stop()):
            if self._ingestor is not None and self._tier2().ingest_queue.count():
                return True  # new turns came in: they go first (the next step)
            step_aside()
            # no count of what is left (it visits every queued row: per batch, quadratic in a backlog)
            report = self._sem.drain(max_items=batch, count_remaining=False)
            busy = busy or report.upserted > 0 or report.deleted > 0
            if report.deferred or report.taken < batch:
                break  # the queue ran dry (or holds only rows for the engine's holder)
            if deadline is not None and time.monotonic() >= deadline:
                break
        return busy

    def _idle_upkeep(self) -> bool:
        """What the background worker does when the queues are empty: carry on a pending threat re-scan
        (text stored under an older detector: ``RESCAN_PER_IDLE`` rows a cycle, so a long-lived process
        finishes what the bounded re-scan at open began), and write the exact index's snapshot when this
        process's index changed enough since it was loaded or written (a cold process then maps it
        instead of reading every stored vector; ``SemanticMemory.save_exact_snapshot``). Two primary-key
        reads when there is nothing to do. Returns False (idle: the worker sleeps). Raises StorageError,
        OSError (the worker logs them)."""
        from hermes_memory.tier2 import verdicts

        verdicts.refresh(self._tier2().db, verdicts.RESCAN_PER_IDLE)
        if self._sem is not None:
            self._sem.save_exact_snapshot(wait=False)  # a search or load in progress: next time
        return False

    def ingest_pending(self, timeout: float | None = 2.0) -> Envelope:
        """Write the queued turns now, in the caller's thread (up to ``timeout`` s), so a recall right
        after sees them (by keyword; their embeddings follow in the background). A process that exited
        left its turns in the durable queue: the next one calls this when it opens the store.
        data: ``written`` (turns) and ``pending`` (see ``pending``)."""

        def call() -> dict[str, Any]:
            limit = None if timeout is None else v.number_value("timeout", timeout)
            if limit is not None and not 0 <= limit <= _MAX_INGEST_WAIT_S:
                raise ValidationError(
                    f"timeout must be between 0 and {_MAX_INGEST_WAIT_S:g} seconds, got {limit!r}"
                )
            deadline = None if limit is None else time.monotonic() + limit
            written = self._ingestor.drain(deadline=deadline) if self._ingestor is not None else 0
            return {"written": written, "pending": self._pending_counts()}

        return run("tier2", call)

    def pending(self) -> Envelope:
        """Work queued but not yet written: ``turns`` (in the turn inbox and queue, not yet stored and
        extracted) and ``embeddings`` (vector writes waiting, 0 without Tier 3). A Hermes process exits
        without waiting for either; the next process (or a long-lived one) finishes them."""
        return run("tier2", self._pending_counts, tiers=["tier2", "tier3"])

    def _pending_counts(self) -> dict[str, int]:
        tier2 = self._tier2()
        return {
            "turns": tier2.ingest_queue.count(),
            "embeddings": tier2.embed_queue.count() if self._sem is not None else 0,
        }

    def get_latest(self, count: int = 10, begin: float | None = None) -> Envelope:
        """The newest ``count`` episodes (before ``begin`` if given), oldest first (HAEMA's latest slice);
        their text is neutralised (memory is data, never instructions)."""

        def call() -> list[dict[str, Any]]:
            n = v.positive_int("count", count, maximum=1000)
            before = v.optional_time("begin", begin)
            return [
                neutralise_data(e.to_dict()) for e in self._tier2().episodes.latest(count=n, before=before)
            ]

        return run("tier2", call)


def _check_metadata(metadata: Mapping[str, Any] | None) -> dict[str, Any]:
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise ValidationError(f"metadata must be a mapping, got {type(metadata).__name__}")
    try:
        text = json.dumps(dict(metadata), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        # RecursionError: nested deeper than the interpreter's stack; refused like any unserialisable value.
        raise ValidationError(f"metadata must be JSON-serialisable: {exc}") from exc
    if len(text) > _MAX_METADATA_CHARS:
        raise ValidationError(
            f"metadata is {len(text)} characters as JSON; the limit is {_MAX_METADATA_CHARS}"
        )
    v.text("metadata", text, allow_empty=True)
    loaded: dict[str, Any] = json.loads(text)
    return loaded
