"""MemoryAPI's write path: remembering turns, the durable queues, the latest episodes, HAEMA's ``add``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from hermes_memory import validation as v
from hermes_memory.api import _write_checks as c
from hermes_memory.api._edge import EnvelopeEdge
from hermes_memory.api.envelope import Envelope
from hermes_memory.errors import ValidationError
from hermes_memory.security.threats import ensure_safe, neutralise, neutralise_data

if TYPE_CHECKING:
    from hermes_memory.core.ingest import Flushed


class IngestAPI(EnvelopeEdge):
    """Remembering turns and the durable queues (``Memory.ingest``, ``Memory.working``)."""

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
            checked = c.turn(user, assistant, session_id, time_, user_name=user_name,
                             assistant_name=assistant_name, metadata=metadata, turn_id=turn_id)  # fmt: skip
            return self._core.ingest.remember_turn(**checked).to_dict()

        return self._run("tier2", call)

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
            checked = c.message(text, session_id, time_, role=role, speaker=speaker, metadata=metadata,
                                turn_id=turn_id)  # fmt: skip
            return self._core.ingest.remember_message(**checked).to_dict()

        return self._run("tier2", call)

    def observe_many(self, items: Sequence[Mapping[str, Any]], session_id: str | None = None) -> Envelope:
        """Engram's batch remember: durably queue many messages or turns in one call, all or nothing.

        Each item is a message (``text``, optional ``role``, ``speaker``) or a turn (``user`` and/or
        ``assistant``, optional ``user_name``, ``assistant_name``), with optional ``session_id`` (default:
        the call's ``session_id``), ``time`` (Unix seconds, datetime or ISO-8601), ``metadata``, ``turn_id``.
        Every item is checked first (ValidationError naming ``items[i]``: nothing is queued), then all are
        committed in ONE transaction. data: ``queued`` (new turns), ``turns`` [{turn_id, queued, time}]."""

        def call() -> dict[str, Any]:
            turns = self._core.ingest.remember_many(c.observe_items(items, session_id))
            return {"queued": sum(q.queued for q in turns), "turns": [q.to_dict() for q in turns]}

        return self._run("tier2", call)

    def working_memory(self, session_id: str) -> Envelope:
        """The session's working memory (Engram's short-term store): the last messages remembered in it
        by this process (at most config ``limits.working_memory_items``), oldest first; empty after
        ``end_session``. The Hermes provider's session is Hermes' session id: its ``sync_turn`` fills the
        buffer and Hermes ending or switching the session clears it."""

        def call() -> dict[str, Any]:
            sid = v.text("session_id", session_id, max_chars=200)
            items = self._core.working.items(sid)
            return {"session_id": sid, "capacity": self._core.working.capacity,
                    "items": [o.to_dict() for o in items]}  # fmt: skip

        return self._run("tier2", call)

    def end_session(self, session_id: str) -> Envelope:
        """Clear the session's working memory (its messages stay remembered: queued and stored).
        data: ``cleared`` (how many observations the buffer held)."""

        def call() -> dict[str, Any]:
            sid = v.text("session_id", session_id, max_chars=200)
            return {"session_id": sid, "cleared": self._core.working.end(sid)}

        return self._run("tier2", call)

    def flush(self, timeout: float | None = 30.0) -> Envelope:
        """Wait until every queued turn and embedding is written (or ``timeout`` seconds pass).

        While another process holds the vector store, that process writes the embeddings: flush waits
        for them while the queue shrinks, and ``meta.degraded`` says why vectors may still be pending.
        """
        flushed: list[Flushed] = []

        def call() -> dict[str, Any]:
            flushed.append(self._core.ingest.flush(c.flush_timeout(timeout)))
            return flushed[0].to_dict()

        envelope = self._run("tier2", call, tiers=["tier2", "tier3"])
        if flushed and flushed[0].degraded:
            envelope["meta"]["degraded"] = list(flushed[0].degraded)
        return envelope

    def ingest_pending(self, timeout: float | None = 2.0) -> Envelope:
        """Write the queued turns now, in the caller's thread (up to ``timeout`` s), so a recall right
        after sees them (by keyword; their embeddings follow in the background). A process that exited
        left its turns in the durable queue: the next one calls this when it opens the store.
        data: ``written`` (turns) and ``pending`` (see ``pending``)."""
        return self._run(
            "tier2", lambda: self._core.ingest.ingest_pending(c.ingest_timeout(timeout)).to_dict()
        )

    def pending(self) -> Envelope:
        """Work queued but not yet written: ``turns`` (in the turn inbox and queue, not yet stored and
        extracted) and ``embeddings`` (vector writes waiting, 0 without Tier 3). A Hermes process exits
        without waiting for either; the next process (or a long-lived one) finishes them."""
        return self._run("tier2", lambda: self._core.ingest.pending().to_dict(), tiers=["tier2", "tier3"])

    def get_latest(self, count: int = 10, begin: float | None = None) -> Envelope:
        """The newest ``count`` episodes (before ``begin`` if given), oldest first (HAEMA's latest slice);
        their text is neutralised (memory is data, never instructions)."""

        def call() -> list[dict[str, Any]]:
            n, before = v.positive_int("count", count, maximum=1000), v.optional_time("begin", begin)
            return [neutralise_data(e.to_dict()) for e in self._core.ingest.latest(n, before)]

        return self._run("tier2", call)

    def latest(self, begin: int = 1, count: int = 10) -> Envelope:
        """HAEMA's ``get_latest(begin, count)``: the texts of the newest episodes, newest first, from
        the 1-indexed position ``begin`` (1 = the newest). ``count`` <= 0 and a ``begin`` past the end
        give ``[]``; ``begin`` < 1 is a ValidationError. Text is neutralised (memory is data)."""

        def call() -> list[str]:
            start = v.positive_int("begin", begin, maximum=1_000_000)
            if isinstance(count, bool) or not isinstance(count, int):
                raise ValidationError(f"count must be an integer, got {type(count).__name__}")
            n = count
            if n <= 0:
                return []
            n = min(n, 1000)
            episodes = self._core.ingest.latest(start - 1 + n)
            newest_first = list(reversed(episodes))[start - 1 : start - 1 + n]
            return [neutralise(e.text) for e in newest_first]

        return self._run("tier2", call)

    def add(
        self,
        contents: str | Sequence[str],
        *,
        category: str = "general",
        source_id: str | None = None,
        update_core: bool = True,
    ) -> Envelope:
        """HAEMA's single write API. A str is one raw message: with the LLM it is pre-split into memory
        units. Each unit is merged with its nearest stored facts (top ``llm.merge_top_k`` by vector,
        cosine distance <= ``llm.merge_distance_cutoff``) by one N:M reconstruction; the merged
        memories are stored as facts and the facts they replace retired (``superseded_by``, their
        source episodes carried over); then core memory is updated once (``update_core``). Without an
        LLM the contents are stored as facts as given. data: ``memories``, ``stored`` (uuids),
        ``related``, ``retired``, ``split``, ``fallback``/``reason``, ``core``."""

        def call() -> dict[str, Any]:
            limit = self._core.tiers.max_chars
            given: str | list[str]
            if contents is None:
                raise ValidationError("contents must be a string or a list of strings, got NoneType")
            if isinstance(contents, str):
                given = v.text("contents", contents, max_chars=limit).strip()
                ensure_safe(given)
            else:
                given = [item.strip() for item in v.string_list("contents", contents, max_chars=limit)]
                for item in given:
                    ensure_safe(item)
            kind = v.choice("category", category, v.FACT_CATEGORIES)
            sid = v.optional_text("source_id", source_id, max_chars=500)
            if not isinstance(update_core, bool):
                raise ValidationError("update_core must be true or false")
            return self._core.llm.add(given, category=kind, source_id=sid, update_core=update_core).to_dict()

        return self._run("tier2", call, tiers=["tier2", "tier3", "llm"])


__all__ = ["IngestAPI"]
