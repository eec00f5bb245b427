"""MemoryAPI's optional LLM path: compression, reflection and core memory."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from hermes_memory import validation as v
from hermes_memory.api import _write_checks as c
from hermes_memory.api._edge import EnvelopeEdge
from hermes_memory.api.envelope import Envelope


class LLMAPI(EnvelopeEdge):
    """Compression, reflection (``Memory.reflection``) and core memory (``Memory.llm``)."""

    def compress(
        self,
        session_id: str | None = None,
        before: float | datetime | str | None = None,
        *,
        batch_size: int = 20,
        limit: int = 200,
    ) -> Envelope:
        """Engram's compression (LLM): old episodes not summarised yet — of ``session_id`` (before
        ``before`` if given), else those before ``before`` (default: older than 7 days) — summarised by the
        LLM, ``batch_size`` turns of one session per summary, at most ``limit`` episodes a call. Each
        summary is a fact (extractor ``compress``) whose ``source_episodes`` are its turns (``why``
        shows them); the turns stay. data: ``facts``, ``episodes`` (read), ``failed`` (batches the LLM
        could not summarise, with why). Without the LLM: ConfigError saying it needs the LLM."""

        def call() -> dict[str, Any]:
            sid = v.optional_text("session_id", session_id, max_chars=200)
            return self._core.reflection.compress(
                session_id=sid, before=c.point_in_time("before", before),
                batch_size=v.positive_int("batch_size", batch_size, maximum=100),
                limit=v.positive_int("limit", limit, maximum=c.MAX_LIMIT),
            ).to_dict()  # fmt: skip

        return self._run("tier2", call, tiers=["tier2", "llm"])

    def reflect(self, session_id: str | None = None, *, limit: int = 50) -> Envelope:
        """Engram's explicit reflection (LLM): insights over the newest ``limit`` episodes (of
        ``session_id``) that no insight cites yet, each stored as a fact (extractor ``reflect``) citing
        the episodes it rests on. data: ``facts``, ``episodes`` (read), ``failed``. Without the LLM:
        ConfigError saying it needs the LLM."""

        def call() -> dict[str, Any]:
            sid = v.optional_text("session_id", session_id, max_chars=200)
            lim = v.positive_int("limit", limit, maximum=200)
            return self._core.reflection.reflect(session_id=sid, limit=lim).to_dict()

        return self._run("tier2", call, tiers=["tier2", "llm"])

    def core_memory(self) -> Envelope:
        """The core memory: bullets per section, rendered markdown, budget and last update time."""
        return self._run("core", lambda: self._core.llm.core_memory().to_dict())

    def core_memory_update(self, candidates: Sequence[str] | None = None) -> Envelope:
        """Let the LLM propose a conservative core-memory update from ``candidates`` (default: facts
        learned since the last update) and apply it only if valid. Changes are audited; Hermes'
        MEMORY.md/USER.md are never written."""

        def call() -> dict[str, Any]:
            limit = self._core.tiers.max_chars
            given = None if candidates is None else v.string_list("candidates", candidates, max_chars=limit)
            return self._core.llm.core_memory_update(given).to_dict()

        return self._run("core", call, tiers=["core", "llm"])


__all__ = ["LLMAPI"]
