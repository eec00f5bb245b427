"""Engram's LLM passes in the core: ``compress`` (old episodes of a session or period summarised into a
summary fact) and ``reflect`` (insights over recent episodes stored as facts). Both need the LLM
(config ``llm.enabled``) and say so (ConfigError) without it; neither deletes anything: the summaries
and insights are facts whose ``source_episodes`` are the turns they came from (``why`` explains them),
and the turns stay as they are.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from hermes_memory.core.knowledge import Knowledge
from hermes_memory.core.llm import LLMPath
from hermes_memory.core.tiers import Tiers
from hermes_memory.errors import ConfigError, HermesMemoryError
from hermes_memory.extract.classify import category_for
from hermes_memory.records import Episode, Fact
from hermes_memory.security.threats import ensure_safe

if TYPE_CHECKING:
    from hermes_memory.llm.structured import StructuredLLM

COMPRESS_EXTRACTOR = "compress"
REFLECT_EXTRACTOR = "reflect"
# Without a session or a time, compress takes episodes older than this.
DEFAULT_COMPRESS_AGE_DAYS = 7.0


@dataclass(frozen=True)
class Failed:
    """A batch the LLM could not summarise or reflect on (nothing of it was stored)."""

    session_id: str | None
    episodes: tuple[str, ...]
    error: str

    def to_dict(self) -> dict[str, Any]:
        return {"session_id": self.session_id, "episodes": list(self.episodes), "error": self.error}


@dataclass(frozen=True)
class Written:
    """What a pass stored: ``facts`` (summaries or insights, each citing its episodes), how many
    ``episodes`` it read, and the batches that ``failed``."""

    facts: tuple[Fact, ...]
    episodes: int
    failed: tuple[Failed, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        return {"facts": [f.to_dict() for f in self.facts], "episodes": self.episodes,
                "failed": [f.to_dict() for f in self.failed]}  # fmt: skip


class Reflection:
    """``compress`` and ``reflect`` over one ``Tiers`` with the configured LLM."""

    def __init__(self, tiers: Tiers, llm: LLMPath, knowledge: Knowledge) -> None:
        self._tiers = tiers
        self._llm = llm
        self._knowledge = knowledge

    def _model(self, what: str) -> StructuredLLM:
        model = self._llm.structured_llm()
        if model is None:
            raise ConfigError(
                f"{what} needs the LLM: set llm.enabled: true with llm.base_url and llm.model "
                "(any OpenAI-compatible endpoint), or pass an LLM client"
            )
        return model

    def compress(
        self,
        *,
        session_id: str | None = None,
        before: float | None = None,
        batch_size: int = 20,
        limit: int = 200,
    ) -> Written:
        """Summarise old episodes not summarised yet — of ``session_id`` (all of it unless ``before``),
        else those before ``before`` (default: older than a week) — by the LLM, ``batch_size`` turns of one
        session per summary; at most ``limit`` episodes a call. Each summary is stored as a fact (extractor
        ``compress``) citing its episodes. Raises ConfigError without the LLM."""
        from hermes_memory.llm.reflection import summarise

        model = self._model("compress")
        if session_id is None and before is None:
            before = time.time() - DEFAULT_COMPRESS_AGE_DAYS * 86400.0
        episodes = self._tiers.tier2().episodes.not_summarised(
            extractor=COMPRESS_EXTRACTOR, session_id=session_id, before=before, limit=limit
        )
        facts: list[Fact] = []
        failed: list[Failed] = []
        for batch in _batches(episodes, batch_size):
            sid = batch[0].session_id
            try:
                summary = summarise(model, [_line(e) for e in batch])
                ensure_safe(summary)
            except HermesMemoryError as exc:  # reported per batch: the other batches still run
                failed.append(Failed(sid, tuple(e.uuid for e in batch), f"{type(exc).__name__}: {exc}"))
                continue
            span = f"{_day(batch[0].timestamp)} to {_day(batch[-1].timestamp)}"
            content = f"Summary of conversation {sid} ({span}): {summary}"
            facts.append(self._store(content, batch, COMPRESS_EXTRACTOR, "event", f"compress:{sid}"))
        return Written(tuple(facts), len(episodes), tuple(failed))

    def reflect(self, *, session_id: str | None = None, limit: int = 50) -> Written:
        """Insights over the newest ``limit`` episodes (of ``session_id``) that no insight cites yet,
        by the LLM; each is stored as a fact (extractor ``reflect``) citing the episodes it rests on.
        Raises ConfigError without the LLM."""
        from hermes_memory.llm.reflection import insights

        model = self._model("reflect")
        episodes = self._tiers.tier2().episodes.not_summarised(
            extractor=REFLECT_EXTRACTOR, session_id=session_id, limit=limit, newest=True
        )
        if not episodes:
            return Written((), 0)
        try:
            found = insights(model, [_line(e) for e in episodes])
            for item in found:
                ensure_safe(item.text)
        except HermesMemoryError as exc:
            failed = Failed(session_id, tuple(e.uuid for e in episodes), f"{type(exc).__name__}: {exc}")
            return Written((), len(episodes), (failed,))
        source_id = f"reflect:{session_id or '*'}"
        facts = [
            self._store(item.text, [episodes[i] for i in item.sources], REFLECT_EXTRACTOR, None, source_id)
            for item in found
        ]
        return Written(tuple(facts), len(episodes))

    def _store(
        self, content: str, sources: Sequence[Episode], extractor: str, category: str | None, source_id: str
    ) -> Fact:
        t = self._tiers
        text = t.secret_free(content)
        kind = category if category is not None else category_for("", text)
        importance = self._knowledge.salience(text, category=kind).score
        tier2 = t.tier2()
        with tier2.db.atomic():
            stored = tier2.facts.store(
                text, category=kind, confidence=0.8, source_type="extraction", source_id=source_id,
                actor="llm", source_episodes=[e.uuid for e in sources], extractor=extractor,
                importance=importance,
            )  # fmt: skip
            if stored.created:
                t.on_fact_change(stored.fact)
        return stored.fact


def _batches(episodes: Sequence[Episode], size: int) -> list[list[Episode]]:
    """Runs of one session's episodes, at most ``size`` each (the input is ordered by session)."""
    out: list[list[Episode]] = []
    for episode in episodes:
        if out and out[-1][0].session_id == episode.session_id and len(out[-1]) < size:
            out[-1].append(episode)
        else:
            out.append([episode])
    return out


def _day(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=UTC).strftime("%Y-%m-%d")


def _line(e: Episode) -> str:
    return f"({_day(e.timestamp)}) {e.speaker or e.role}: {e.text}"


__all__ = ["COMPRESS_EXTRACTOR", "REFLECT_EXTRACTOR", "Failed", "Reflection", "Written"]
