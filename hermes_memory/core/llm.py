"""The optional LLM path: HAEMA's N:M reconstruction (of recalled memories, and at write time in
``add``), the pre-split of a raw message, and the conservative core memory (SOUL/TOOLS/RULE/USER).
Everything works with the LLM off: reconstruction returns the memories unchanged, ``add`` stores what
it was given, and the core update changes nothing (``fallback: true`` with a reason).

The LLM is the one given to ``MemoryAPI(llm_client=...)`` (any object with ``generate_structured``),
else the configured one (config ``llm``: an OpenAI-compatible endpoint, or with ``use_hermes_model``
the model Hermes is configured with).

The LLM modules are imported where used: a turn never needs them, and importing them with the API
cost the Hermes process ~40 ms at start."""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_memory.core.tiers import Tiers
from hermes_memory.errors import StorageError
from hermes_memory.records import Fact

if TYPE_CHECKING:
    from hermes_memory.llm.breaker import CircuitBreaker
    from hermes_memory.llm.client import LLMClient
    from hermes_memory.llm.core_memory import CoreMemory, CoreUpdate
    from hermes_memory.llm.decompose import Decomposition
    from hermes_memory.llm.reconstruction import Reconstruction
    from hermes_memory.llm.structured import StructuredLLM
    from hermes_memory.llm.writing import Split

log = logging.getLogger(__name__)

# Facts worth proposing for core memory: durable things about the user, their tools and people.
CORE_CANDIDATE_CATEGORIES = frozenset({"user", "preference", "tool", "relationship", "project"})
CORE_CANDIDATE_MIN_CONFIDENCE = 0.6
CORE_CANDIDATE_LIMIT = 50
# One read-modify-write of the core file at a time within this process.
_CORE_LOCK = threading.Lock()
# A session-end core update that failed on the transport is tried again after this long.
CORE_RETRY_S = 300.0
_TRANSPORT_FAILURES = ("timeout", "connection", "http", "config", "client")
# One session-end update at a time in this process (several stores' workers may see one marker).
_PENDING_LOCK = threading.Lock()
# After a transport failure, query decomposition is skipped this long (recall answers without it).
DECOMPOSE_COOLDOWN_S = 60.0


@dataclass(frozen=True)
class Reconstructed:
    """A reconstruction and the recalled hits it was made from (empty when memories were given)."""

    reconstruction: Reconstruction
    sources: tuple[Mapping[str, Any], ...]

    def to_dict(self) -> dict[str, Any]:
        return {**self.reconstruction.to_dict(), "sources": list(self.sources)}


@dataclass(frozen=True)
class CoreMemoryView:
    """The core memory as stored, with its markdown rendering and the per-section bullet budget."""

    core: CoreMemory
    budget: int

    def to_dict(self) -> dict[str, Any]:
        return {**self.core.to_dict(), "markdown": self.core.render(), "budget": self.budget}


@dataclass(frozen=True)
class CoreMemoryChange:
    """A core-memory update's outcome and how many candidate memories it was proposed from."""

    update: CoreUpdate
    candidates: int

    def to_dict(self) -> dict[str, Any]:
        return {**self.update.to_dict(), "candidates": self.candidates}


@dataclass(frozen=True)
class Added:
    """What ``add`` did: the pre-split (None for a list), the reconstruction, the facts stored, the
    stored facts it merged with and which of them were retired (old uuid -> the fact replacing it),
    and the core-memory change (None when not asked or the LLM is off)."""

    split: Split | None
    reconstruction: Reconstruction
    stored: tuple[Fact, ...]
    related: tuple[Fact, ...]
    retired: Mapping[str, str]
    core: CoreMemoryChange | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "split": None if self.split is None else self.split.to_dict(),
            "memories": [f.content for f in self.stored],
            "stored": [f.uuid for f in self.stored],
            "related": [{"uuid": f.uuid, "content": f.content} for f in self.related],
            "retired": [{"uuid": old, "superseded_by": new} for old, new in self.retired.items()],
            "fallback": self.reconstruction.fallback,
            "reason": self.reconstruction.reason,
            "core": None if self.core is None else self.core.to_dict(),
        }


class LLMPath:
    """Reconstruction, the HAEMA write path and core memory over this memory's scope (config ``llm``;
    ``client``: the caller's own LLM, which switches the LLM path on)."""

    def __init__(self, tiers: Tiers, client: LLMClient | None = None) -> None:
        self._tiers = tiers
        self._client = client
        self._llm: StructuredLLM | None = None
        self._breaker: CircuitBreaker | None = None  # query decomposition's, built on first use

    @property
    def enabled(self) -> bool:
        """True when an LLM is given or configured (nothing is built or imported to answer)."""
        return self._client is not None or self._tiers.config.llm.enabled

    @property
    def core_path(self) -> Path:
        """This scope's core-memory file: it summarises the scope's facts, so each readable set of
        scopes has its own file (the default scope keeps ``llm.core_memory_path``)."""
        path = self._tiers.config.core_memory_path
        t2 = self._tiers.t2
        key = t2.view.key if t2 is not None else ""
        return path if not key else path.with_name(f"{path.stem}-{key}{path.suffix}")

    @property
    def pending_path(self) -> Path:
        """The marker of a core-memory update asked for at session end and not done yet."""
        path = self.core_path
        return path.with_name(path.name + ".pending")

    def structured_llm(self) -> StructuredLLM | None:
        """The given or configured model (built once), or None when the LLM is off. Raises
        ConfigError for a configuration that cannot build a client."""
        if not self.enabled:
            return None
        if self._llm is None:
            from hermes_memory.llm.wiring import structured_llm

            config = self._tiers.config
            self._llm = structured_llm(config.llm, self._client, config.hermes_home)
        return self._llm

    @property
    def decomposes(self) -> bool:
        """Whether explicit recalls split their question (an LLM is on and ``llm.query_decomposition``)."""
        return self.enabled and self._tiers.config.llm.query_decomposition

    def decompose_query(self, question: str) -> Decomposition:
        """The question's sub-queries (``llm.decompose``); a fallback with its reason when the LLM is off
        or fails. Raises ConfigError for a configuration that cannot build a client."""
        from hermes_memory.llm.breaker import CircuitBreaker
        from hermes_memory.llm.decompose import Decomposition, decompose

        llm = self.structured_llm()
        if llm is None:
            return Decomposition((), fallback=True, reason="llm disabled")
        if self._breaker is None:
            self._breaker = CircuitBreaker(DECOMPOSE_COOLDOWN_S)
        return decompose(llm, question, self._breaker)

    def reconstruct(
        self, query: str, memories: Sequence[str] | None, hits: Sequence[Mapping[str, Any]] = ()
    ) -> Reconstructed:
        """``memories`` (None: the recalled ``hits``) consolidated by the LLM into statements citing
        their sources; unchanged when the LLM is off or fails (``fallback``)."""
        from hermes_memory.llm.reconstruction import reconstruct

        inputs = [_hit_line(hit) for hit in hits] if memories is None else list(memories)
        return Reconstructed(reconstruct(self.structured_llm(), query, inputs), tuple(hits))

    def core_memory(self) -> CoreMemoryView:
        """The core memory: bullets per section, rendered markdown, budget and last update time."""
        from hermes_memory.llm.core_memory import CoreMemoryStore

        budget = self._tiers.config.llm.core_memory_budget
        return CoreMemoryView(CoreMemoryStore(self.core_path).load(), budget)

    def core_memory_update(self, candidates: Sequence[str] | None) -> CoreMemoryChange:
        """Let the LLM propose a conservative update from ``candidates`` (None: facts learned since the
        last update) and apply it only if valid; audited. Hermes' MEMORY.md/USER.md are never written."""
        from hermes_memory.llm.core_memory import CoreMemoryStore, update_core

        store = CoreMemoryStore(self.core_path)
        with _CORE_LOCK:
            core = store.load()
            texts = list(candidates) if candidates is not None else self._candidates(core.updated_at)
            update = update_core(
                self.structured_llm(), core, texts, budget=self._tiers.config.llm.core_memory_budget
            )
            if update.updated:
                store.save(update.core)
                self._audit(update.to_dict()["applied"])
        return CoreMemoryChange(update, len(texts))

    # -- HAEMA's write path ----------------------------------------------------------------------
    def add(
        self,
        contents: str | Sequence[str],
        *,
        category: str = "general",
        source_id: str | None = None,
        update_core: bool = True,
    ) -> Added:
        """HAEMA's ``add``: a str is pre-split into memory units (LLM), each unit's nearest stored facts
        (``llm.merge_top_k`` by vector, cosine distance <= ``llm.merge_distance_cutoff``) are merged
        with the new units by one N:M reconstruction, the merged memories are stored and the stored
        facts they replace are retired (``superseded_by`` the new fact, whose ``source_episodes``
        carry theirs); then the core memory is updated once (``update_core``). With the LLM off the
        contents are stored as given and nothing is retired. Contents are checked by the caller.
        Raises StorageError; never raises because of the LLM (its failures fall back, logged)."""
        from hermes_memory.llm.reconstruction import normalise_memories
        from hermes_memory.llm.writing import presplit, reconstruct_write

        t = self._tiers
        llm = self.structured_llm()
        split = None
        if isinstance(contents, str):
            split = presplit(llm, t.secret_free(contents))
            units = list(split.units)
        else:
            units = normalise_memories([t.secret_free(text) for text in contents])
        related = self._related(units, drain=True) if llm is not None else []
        rebuilt = reconstruct_write(llm, [f.content for f in related], units)
        inputs: list[Fact | None] = [*related, *([None] * len(units))]
        stored, retired = self._store(rebuilt, inputs, category=category, source_type="user",
                                      source_id=source_id, actor=t.actor)  # fmt: skip
        if t.sem is not None and stored:
            t.sem.drain()  # the next add finds these by vector
        core = None
        if update_core and llm is not None and stored:
            core = self.core_memory_update([f.content for f in stored])
        return Added(split, rebuilt, tuple(stored), tuple(related), retired, core)

    def reconstruct_facts(self, facts: Sequence[Fact]) -> Added | None:
        """Write-time reconstruction of facts just stored by a turn's LLM extraction (the worker's
        after-commit step, never ``sync_turn``): merged with their nearest stored facts, the merged
        memories stored and every fact they replace — older ones and the turn's own — retired
        (``superseded_by``). None when the LLM is off, nothing is new, no stored fact is near enough,
        or the model fell back (the turn's facts then stay as extracted). Raises StorageError."""
        from hermes_memory.llm.writing import reconstruct_write

        llm = self.structured_llm()
        new = [f for f in facts if f.is_active]
        if llm is None or not new:
            return None
        mine = {f.uuid for f in new}
        related = [f for f in self._related([f.content for f in new], drain=False) if f.uuid not in mine]
        if not related:  # nothing stored to merge with: the facts stay as the LLM extracted them
            return None
        rebuilt = reconstruct_write(llm, [f.content for f in related], [f.content for f in new])
        if rebuilt.fallback:
            return None
        stored, retired = self._store(
            rebuilt, [*related, *new], category=new[0].category, source_type="session",
            source_id=new[0].source_id, actor="llm",
        )  # fmt: skip
        return Added(None, rebuilt, tuple(stored), tuple(related), retired, None)

    def _related(self, units: Sequence[str], *, drain: bool) -> list[Fact]:
        """The believed facts nearest to any unit (top-k each, within the distance cut-off), closest
        first, each once. ``drain``: embed what is queued first (the caller's thread; not the worker's
        after-commit step, which drains right after)."""
        t = self._tiers
        if t.sem is None or not units:
            return []
        config = t.config.llm
        floor = 1.0 - config.merge_distance_cutoff / 2.0  # score (1 + cos) / 2, distance 1 - cos
        if drain:
            t.sem.drain()  # facts stored a moment ago are found too
        best: dict[str, float] = {}
        for unit in units:
            for uuid, score in t.sem.source_scores(unit, {"fact": config.merge_top_k})["fact"].items():
                if score >= floor:
                    best[uuid] = max(best.get(uuid, 0.0), score)
        facts = t.tier2().facts.get_many(list(best))
        believed = [f for f in facts.values() if f.is_active]
        return sorted(believed, key=lambda f: -best[f.uuid])

    def _store(
        self,
        rebuilt: Reconstruction,
        inputs: Sequence[Fact | None],
        *,
        category: str,
        source_type: str,
        source_id: str | None,
        actor: str,
    ) -> tuple[list[Fact], dict[str, str]]:
        """Store each reconstructed memory and retire the stored facts it cites (``inputs``: the fact
        behind each input number, None for a text not stored yet), in one transaction with one audit
        row. A merged memory carries the source episodes of every fact it cites."""
        t = self._tiers
        tier2 = t.tier2()
        extractor = "haema-add" if rebuilt.fallback else "llm-reconstruct"
        stored: list[Fact] = []
        retired: dict[str, str] = {}
        with tier2.db.atomic() as conn:
            for statement in rebuilt.statements:
                behind = (inputs[i] for i in statement.sources if i < len(inputs))
                cited = [f for f in behind if f is not None]
                episodes = tuple(dict.fromkeys(e for f in cited for e in f.source_episodes))
                kinds = {f.category for f in cited}
                subjects = {f.subject for f in cited}  # one subject in common: history finds the merge
                result = tier2.facts.store(
                    t.secret_free(statement.text),
                    category=kinds.pop() if len(kinds) == 1 else category,
                    source_type=source_type, source_id=source_id, actor=actor, extractor=extractor,
                    exclusive=False, source_episodes=episodes,
                    subject=subjects.pop() if len(subjects) == 1 else None,
                    importance=max([0.5, *(f.importance for f in cited)]),
                )  # fmt: skip
                if result.created:
                    t.on_fact_change(result.fact)
                stored.append(result.fact)
                for old in cited:
                    if old.uuid == result.fact.uuid or old.uuid in retired:
                        continue
                    if tier2.facts.supersede(old.uuid, result.fact.uuid, actor=actor):
                        retired[old.uuid] = result.fact.uuid
            tier2.audit.record(
                conn, action="memory_reconstruct", tier="tier2", actor=actor, target_uuid=None,
                diff={"stored": [f.uuid for f in stored], "retired": retired,
                      "fallback": rebuilt.fallback, "reason": rebuilt.reason},
            )  # fmt: skip
        return stored, retired

    # -- the core update after a session (off the exit path) -------------------------------------
    def request_core_update(self, session_id: str | None) -> bool:
        """Ask for a core-memory update from what this session taught (one small file write; the
        background worker of this or the next process does it, never the caller). False with the
        LLM off. Raises StorageError when the marker cannot be written."""
        if not self.enabled:
            return False
        marker = {"requested_at": time.time(), "session_id": session_id, "not_before": 0.0}
        _write_marker(self.pending_path, marker)
        return True

    def background_step(self, stopping: Callable[[], bool]) -> bool:
        """The worker's turn when the queues are empty: the core update asked for at session end, if
        any and due. One stat when there is none. Returns False (the worker then sleeps). Raises
        StorageError."""
        path = self.pending_path
        if not self.enabled or stopping() or not path.exists():
            return False
        if not _PENDING_LOCK.acquire(blocking=False):
            return False
        try:
            self._pending_update(path)
        finally:
            _PENDING_LOCK.release()
        return False

    def _pending_update(self, path: Path) -> None:
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return  # done meanwhile (another store of this file)
        except OSError as exc:
            raise StorageError(f"cannot read the core-update request {path}: {exc}") from exc
        try:
            marker = json.loads(text)
        except ValueError:
            marker = {}  # a damaged request still asks for an update
        if isinstance(marker, dict) and float(marker.get("not_before") or 0.0) > time.time():
            return
        change = self.core_memory_update(None)
        reason = change.update.reason or ""
        if change.update.fallback and reason.startswith(_TRANSPORT_FAILURES):
            log.warning("core memory update after the session failed (%s); retried later", reason)
            retry = marker if isinstance(marker, dict) else {}
            _write_marker(path, {**retry, "not_before": time.time() + CORE_RETRY_S})
            return
        try:
            if path.read_text(encoding="utf-8") == text:  # a newer request stays for the next pass
                path.unlink()
        except FileNotFoundError:
            return
        except OSError as exc:
            raise StorageError(f"cannot clear the core-update request {path}: {exc}") from exc

    def _candidates(self, since: float | None) -> list[str]:
        t2 = self._tiers.t2
        if t2 is None:
            return []
        recent = t2.facts.query(
            None, limit=CORE_CANDIDATE_LIMIT, min_confidence=CORE_CANDIDATE_MIN_CONFIDENCE, touch=False
        )
        return [
            s.fact.content
            for s in recent
            if s.fact.category in CORE_CANDIDATE_CATEGORIES
            and (since is None or (s.fact.recorded_at or s.fact.created_at) > since)
        ]

    def _audit(self, applied: list[dict[str, str]]) -> None:
        t2 = self._tiers.t2
        if t2 is not None:
            with t2.db.atomic() as conn:
                t2.audit.record(
                    conn, action="core_memory_update", tier="core", actor="llm", target_uuid=None,
                    diff={"applied": applied, "path": str(self.core_path)},
                )  # fmt: skip


def _write_marker(path: Path, marker: Mapping[str, Any]) -> None:
    from hermes_memory.security.permissions import private_dir, write_private_text

    try:
        private_dir(path.parent)
        tmp = path.with_name(path.name + ".tmp")
        write_private_text(tmp, json.dumps(marker))
        os.replace(tmp, path)
    except OSError as exc:
        raise StorageError(f"cannot write the core-update request {path}: {exc}") from exc


def _hit_line(hit: Mapping[str, Any]) -> str:
    """A recalled hit as the model sees it: its date first, so newer evidence can win conflicts."""
    stamp = hit.get("timestamp")
    if isinstance(stamp, int | float):
        return f"({datetime.fromtimestamp(stamp, tz=UTC).strftime('%Y-%m-%d')}) {hit.get('text', '')}"
    return str(hit.get("text", ""))


__all__ = ["Added", "CoreMemoryChange", "CoreMemoryView", "LLMPath", "Reconstructed"]
