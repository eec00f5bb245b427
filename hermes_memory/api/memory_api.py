"""MemoryAPI: one facade over every tier. Thin: validation and envelopes here, work in the tiers."""

from __future__ import annotations

import functools
import inspect
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from hermes_memory import validation as v
from hermes_memory.api import _write_checks as c
from hermes_memory.api._doctor_methods import DoctorMethods
from hermes_memory.api._graph_methods import GraphMethods
from hermes_memory.api._history_methods import HistoryMethods
from hermes_memory.api._llm_methods import LLMMethods
from hermes_memory.api._maintenance_methods import MaintenanceMethods
from hermes_memory.api._ops_methods import OpsMethods
from hermes_memory.api._recall_methods import RecallMethods
from hermes_memory.api._tier3_methods import Tier3Methods
from hermes_memory.api.envelope import Envelope, run
from hermes_memory.config import Config, load_config
from hermes_memory.core.ingest import Flushed
from hermes_memory.core.memory import Memory
from hermes_memory.core.mirror import ACTIONS as MIRROR_ACTIONS
from hermes_memory.errors import ConfigError, HermesMemoryError, ValidationError
from hermes_memory.graph.service import GraphService
from hermes_memory.ingest.worker import Ingestor
from hermes_memory.recall.engine import RecallEngine
from hermes_memory.records import Fact, TurnMessage
from hermes_memory.scoping import ScopeView, check_scope_name
from hermes_memory.security.secrets import redact_data
from hermes_memory.security.threats import neutralise_data
from hermes_memory.tier1.curated_store import CuratedStore
from hermes_memory.tier1.snapshot import CuratedSnapshot
from hermes_memory.tier2 import Tier2
from hermes_memory.tier3.semantic import SemanticMemory

log = logging.getLogger(__name__)


class MemoryAPI(
    Tier3Methods,
    GraphMethods,
    HistoryMethods,
    RecallMethods,
    MaintenanceMethods,
    LLMMethods,
    DoctorMethods,
    OpsMethods,
):
    """Unified interface for all memory tiers; every public method returns the seed's envelope.

    Construction opens Tier 2 (creating and migrating the DB) and freezes the Tier 1 snapshot.
    ``scope`` (default: config ``scope.name``) selects this agent's scope in a store shared by several
    agents; every store is bound to it, so nothing of another scope is read, counted or exported.
    Raises ConfigError for bad configuration and StorageError when the store cannot be opened.
    """

    def __init__(
        self,
        config: Config | None = None,
        *,
        profile: str | None = None,
        hermes_home: str | os.PathLike[str] | None = None,
        config_path: str | os.PathLike[str] | None = None,
        actor: str = "user",
        scope: str | None = None,
        backend: str | None = None,
        background: bool = False,
        **overrides: Any,
    ):
        # Names given here are checked as input (ValidationError); the same names read from a config
        # file are checked there (ConfigError naming the key).
        if profile is not None:
            v.profile_name("profile", profile)
        if scope is not None:
            check_scope_name(scope)
        if config is None:
            if profile is not None:
                overrides["profile"] = profile
            config = load_config(config_path, hermes_home=hermes_home, **overrides)
        elif profile is not None or hermes_home is not None or config_path is not None or overrides:
            raise ConfigError("pass either a Config or profile/hermes_home/config_path/overrides, not both")
        self.config = config
        self.actor = actor
        self.view = _scope_view(config, scope)
        self.scope = self.view.own
        self._core = core = Memory(config, actor=actor, view=self.view, backend=backend)
        if core.tiers.t2 is not None:
            self._finish_erasures_on_open()
        if background:
            # TRANSITIONAL: once the core finishes an interrupted forget itself (core-ops), this is
            # ``Memory(..., background=background)``; until then the worker starts after it.
            core.start_background()

    # -- transitional: the mixins read the core's parts under their old names ----------------------
    @property
    def _max_chars(self) -> int:  # type: ignore[override]
        return self._core.tiers.max_chars

    @property
    def _t2(self) -> Tier2 | None:  # type: ignore[override]
        return self._core.tiers.t2

    @property
    def _curated_store(self) -> CuratedStore | None:  # type: ignore[override]
        return self._core.tiers.curated

    @property
    def _snapshot(self) -> CuratedSnapshot | None:
        return self._core.tiers.snapshot

    @_snapshot.setter
    def _snapshot(self, value: CuratedSnapshot | None) -> None:
        self._core.tiers.snapshot = value

    @property
    def _sem(self) -> SemanticMemory | None:  # type: ignore[override]
        return self._core.tiers.sem

    @property
    def _graph_service(self) -> GraphService | None:  # type: ignore[override]
        return self._core.tiers.graph

    @property
    def _ingestor(self) -> Ingestor | None:  # type: ignore[override]
        return self._core.ingestor

    @property
    def _engine(self) -> RecallEngine | None:
        return self._core._engine

    @_engine.setter
    def _engine(self, value: RecallEngine | None) -> None:
        self._core._engine = value

    def _finish_erasures_on_open(self) -> None:
        """A forget a crash interrupted is finished by the next process that opens the store (one small
        indexed query when there is none). A step that fails stays recorded (``doctor`` reports it, the
        next open or ``doctor --repair`` retries), so the store still opens."""
        assert self._t2 is not None
        if self._t2.db.query_one("SELECT 1 FROM erasures WHERE finished_at IS NULL LIMIT 1") is None:
            return  # the usual case; hermes_memory.ops is not imported
        try:
            self._finish_erasures()
        except HermesMemoryError as exc:
            log.warning("hermes-memory: an unfinished forget could not be finished yet: %s", exc)

    def _run(
        self, tier: str, fn: Callable[[], Any], *, tiers: Sequence[str] | None = None, **meta: Any
    ) -> Envelope:
        """The one envelope edge: ``fn``'s result (records turned into plain data) wrapped by ``run``,
        its data's credentials redacted when config ``security.redact_secrets`` is on (text stored
        before redaction existed, imported, or written with the switch off is never shown verbatim)."""
        envelope = run(tier, fn, tiers=tiers, **meta)
        if self.config.security.redact_secrets and envelope["success"]:
            envelope["data"] = redact_data(envelope["data"])
        return envelope

    # -- transitional: the mixins' shared helpers are the core's ------------------------------------
    def _secret_free(self, text: str) -> str:
        return self._core.tiers.secret_free(text)

    def _tier2(self) -> Tier2:
        return self._core.tiers.tier2()

    def _semantic(self) -> SemanticMemory:
        return self._core.tiers.semantic()

    def _on_fact_change(self, fact: Fact, *, removed: bool = False) -> None:
        self._core.tiers.on_fact_change(fact, removed=removed)

    def _recall_engine(self) -> RecallEngine:
        return self._core.recall_engine()

    def _graph(self) -> GraphService:
        return self._core.tiers.graph_service()

    @property
    def tier2(self) -> Tier2:
        """The Tier 2 stores, for code that works with records instead of envelopes."""
        return self._core.tiers.tier2()

    # -- cross-tier -----------------------------------------------------------------------------
    def stats(self) -> Envelope:
        """Counts and sizes of every enabled tier."""
        return run("multi", self._core.stats, tiers=self.enabled_tiers())

    def enabled_tiers(self) -> list[str]:
        return self._core.tiers.enabled()

    def close(self, drain_timeout: float = 5.0, *, build_indexes: bool = True) -> None:
        """Stop the background worker and close every store (``Memory.close``)."""
        self._core.close(drain_timeout, build_indexes=build_indexes)

    def wait_closed(self, timeout: float) -> bool:
        """Wait (up to ``timeout`` s) until a close left to a background thread has finished; True when
        the stores are closed (a reopen in this process can then take the vector store again)."""
        return self._core.wait_closed(timeout)

    # == public methods: recall (core-recall) ======================================================

    # == public methods: writes, ingest, tiers 1-3 (core-write) ==================================
    # -- remembering turns and the durable queues (Memory.ingest) ---------------------------------
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
            messages = [
                TurnMessage(role, v.text(role, text, max_chars=c.MAX_TURN_CHARS, allow_empty=True),
                            v.optional_text(f"{role}_name", name, max_chars=200))
                for role, text, name in (("user", user, user_name), ("assistant", assistant, assistant_name))
                if text is not None
            ]  # fmt: skip
            return self._core.ingest.remember_turn(
                messages, c.session_id(session_id), c.turn_time(time_),
                metadata=c.metadata(metadata), turn_id=c.turn_id(turn_id),
            ).to_dict()  # fmt: skip

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
            body = v.text("text", text, max_chars=c.MAX_TURN_CHARS)
            message = TurnMessage(v.choice("role", role, {"user", "assistant"}), body,
                                  v.optional_text("speaker", speaker, max_chars=200))  # fmt: skip
            return self._core.ingest.remember_message(
                message, c.session_id(session_id), c.turn_time(time_),
                metadata=c.metadata(metadata), turn_id=c.turn_id(turn_id),
            ).to_dict()  # fmt: skip

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

    # -- the host's curated writes, mirrored as facts (Memory.mirror) ------------------------------
    def mirror_curated_write(
        self,
        action: str,
        store: str,
        content: str,
        old_text: str | None = None,
        *,
        speaker: str | None = None,
        source_id: str | None = None,
    ) -> Envelope:
        """Mirror one curated write (``add`` / ``replace`` / ``remove`` of an entry in ``store``).

        The new entry is stored as a fact (source ``memory``) and so are the statements extracted from it
        (as said by ``speaker``, the user); those supersede older facts they contradict. For replace and
        remove, the entry that ``old_text`` identifies (a substring, as the host's tool takes it) is found
        among the mirrored facts and the session-start snapshot, and every fact that came from it is
        closed: superseded by the new entry (replace) or archived (remove). data: ``stored``,
        ``superseded``, ``archived`` (fact uuids). Raises ValidationError for a bad action or store,
        ThreatDetectedError for unsafe content."""

        def call() -> dict[str, Any]:
            v.choice("action", action, set(MIRROR_ACTIONS))
            v.choice("store", store, {"memory", "user"})
            text = v.text("content", content, max_chars=self._core.tiers.max_chars, allow_empty=True).strip()
            old = v.optional_text("old_text", old_text, max_chars=self._core.tiers.max_chars)
            who = v.optional_text("speaker", speaker, max_chars=200)
            sid = v.optional_text("source_id", source_id, max_chars=500)
            return self._core.mirror.write(action, store, text, old, speaker=who, source_id=sid).to_dict()

        return self._run("tier2", call)

    # -- Tier 1: Hermes' curated MEMORY.md / USER.md (Memory.curated) -----------------------------
    def curated_get(self, store: str = "memory") -> Envelope:
        """The live entries of a curated store ("memory" or "user"), as Hermes' file text."""
        return self._run("tier1", lambda: self._core.curated.get(store))

    def curated_entries(self, store: str = "memory") -> Envelope:
        """The live entries of a curated store as a list."""
        return self._run("tier1", lambda: self._core.curated.entries(store))

    def curated_add(self, content: str, store: str = "memory") -> Envelope:
        """Append an entry (exact duplicates are a no-op; over the limit is refused with the entries)."""
        return self._run("tier1", lambda: self._core.curated.add(store, _entry("content", content)).to_dict())

    def curated_replace(self, old: str, new: str, store: str = "memory") -> Envelope:
        """Replace the one entry containing ``old`` with ``new``."""

        def call() -> dict[str, Any]:
            old_text, new_text = _entry("old", old), _entry("new", new)
            return self._core.curated.replace(store, old_text, new_text).to_dict()

        return self._run("tier1", call)

    def curated_remove(self, substring: str, store: str = "memory") -> Envelope:
        """Remove the one entry containing ``substring``."""
        return self._run(
            "tier1", lambda: self._core.curated.remove(store, _entry("substring", substring)).to_dict()
        )

    def curated_snapshot(self) -> Envelope:
        """The frozen snapshot taken when this API was opened (what the system prompt shows)."""
        return self._run("tier1", lambda: self._core.curated.snapshot().to_dict())

    # -- Tier 2: facts (Memory.knowledge) ---------------------------------------------------------
    def fact_store(
        self,
        content: str,
        category: str = "general",
        confidence: float = 1.0,
        source: str = "user",
        *,
        source_id: str | None = None,
        expires_at: float | None = None,
        ttl_days: float | None = None,
        importance: float = 0.5,
    ) -> Envelope:
        """Store a fact (deduplicated by normalised content)."""

        def call() -> dict[str, Any]:
            stored = self._core.knowledge.store_fact(
                v.text("content", content, max_chars=self._core.tiers.max_chars).strip(),
                category=v.choice("category", category, v.FACT_CATEGORIES),
                confidence=v.unit_interval("confidence", confidence),
                source=v.choice("source", source, v.SOURCE_TYPES),
                source_id=v.optional_text("source_id", source_id, max_chars=500),
                importance=v.unit_interval("importance", importance),
                expires_at=c.ttl_expiry(expires_at, ttl_days),
            )
            return {**stored.fact.to_dict(), "created": stored.created, "superseded": list(stored.superseded)}

        return self._run("tier2", call)

    def fact_query(
        self,
        query: str | None = None,
        category: str | None = None,
        limit: int = 10,
        min_confidence: float = 0.5,
        *,
        as_of: float | None = None,
    ) -> Envelope:
        """Facts matching free text (BM25) and filters; without text, the newest."""

        def call() -> list[dict[str, Any]]:
            max_chars = self._core.tiers.max_chars
            text = None if query is None else v.text("query", query, max_chars=max_chars, allow_empty=True)
            found = self._core.knowledge.query_facts(
                text.strip() if text else None,
                category=None if category is None else v.choice("category", category, v.FACT_CATEGORIES),
                limit=v.positive_int("limit", limit, maximum=c.MAX_LIMIT),
                min_confidence=v.unit_interval("min_confidence", min_confidence),
                as_of=v.optional_time("as_of", as_of),
            )
            return [{**s.fact.to_dict(), "score": round(s.score, 6)} for s in found]

        return self._run("tier2", call)

    def fact_get(self, uuid: str) -> Envelope:
        """One fact by uuid."""
        return self._run(
            "tier2", lambda: self._core.knowledge.get_fact(v.text("uuid", uuid, max_chars=100)).to_dict()
        )

    def fact_update(self, uuid: str, **fields: Any) -> Envelope:
        """Change content, category, confidence, expires_at or importance of a fact."""

        def call() -> dict[str, Any]:
            ref = v.text("uuid", uuid, max_chars=100)
            checked = c.fact_fields(fields, self._core.tiers.max_chars)
            return self._core.knowledge.update_fact(ref, checked).to_dict()

        return self._run("tier2", call)

    def fact_delete(self, uuid: str, soft: bool = True) -> Envelope:
        """Archive (soft=True) or permanently remove a fact."""

        def call() -> dict[str, Any]:
            v.text("uuid", uuid, max_chars=100)
            if not isinstance(soft, bool):
                raise ValidationError(f"soft must be true or false, got {v.shown(soft)}")
            self._core.knowledge.delete_fact(uuid, soft=soft)
            return {"uuid": uuid, "deleted": True, "soft": soft}

        return self._run("tier2", call)

    # -- Tier 2: entities and relations (Memory.knowledge) ----------------------------------------
    def entity_ensure(
        self,
        name: str,
        entity_type: str,
        aliases: Sequence[str] | None = None,
        description: str | None = None,
    ) -> Envelope:
        """Create an entity or return the existing one with this name/alias and type."""

        def call() -> dict[str, Any]:
            ensured = self._core.knowledge.ensure_entity(
                v.text("name", name, max_chars=200).strip(),
                v.choice("entity_type", entity_type, v.ENTITY_TYPES),
                aliases=v.string_list("aliases", aliases, max_chars=200),
                description=v.optional_text("description", description, max_chars=self._core.tiers.max_chars),
            )
            return {**ensured.entity.to_dict(), "created": ensured.created}

        return self._run("tier2", call)

    def entity_link(
        self,
        from_name: str,
        to_name: str,
        relation: str,
        strength: float = 1.0,
        *,
        evidence_fact_id: str | None = None,
    ) -> Envelope:
        """Relate two existing entities (by name, alias or uuid) with a typed, weighted edge."""

        def call() -> dict[str, Any]:
            return self._core.knowledge.link(
                v.text("from_name", from_name, max_chars=200).strip(),
                v.text("to_name", to_name, max_chars=200).strip(),
                v.text("relation", relation, max_chars=100).strip().lower().replace(" ", "_"),
                strength=v.unit_interval("strength", strength),
                evidence_fact_id=v.optional_text("evidence_fact_id", evidence_fact_id, max_chars=100),
            ).to_dict()

        return self._run("tier2", call)

    def entity_query(
        self, name: str | None = None, entity_type: str | None = None, limit: int = 10
    ) -> Envelope:
        """Entities by name/alias (case-insensitive, then full-text) and/or type."""

        def call() -> list[dict[str, Any]]:
            text = None if name is None else v.text("name", name, max_chars=200, allow_empty=True).strip()
            found = self._core.knowledge.query_entities(
                text or None,
                entity_type=None
                if entity_type is None
                else v.choice("entity_type", entity_type, v.ENTITY_TYPES),
                limit=v.positive_int("limit", limit, maximum=c.MAX_LIMIT),
            )
            return [match.to_dict() for match in found]

        return self._run("tier2", call)

    # -- Tier 2: timeline and audit (Memory.knowledge) --------------------------------------------
    def timeline_add(
        self,
        event_type: str,
        title: str,
        description: str | None = None,
        importance: float = 0.5,
        related_entities: Sequence[str] | None = None,
        *,
        timestamp: float | None = None,
        session_id: str | None = None,
    ) -> Envelope:
        """Record a dated event; related entities are given by name, alias or uuid."""

        def call() -> dict[str, Any]:
            refs = v.string_list("related_entities", related_entities, max_chars=200)
            return self._core.knowledge.add_event(
                v.choice("event_type", event_type, v.EVENT_TYPES),
                v.text("title", title, max_chars=500).strip(),
                description=v.optional_text("description", description, max_chars=self._core.tiers.max_chars),
                importance=v.unit_interval("importance", importance),
                related_entities=[ref.strip() for ref in refs],
                timestamp=v.optional_time("timestamp", timestamp),
                session_id=v.optional_text("session_id", session_id, max_chars=200),
            ).to_dict()

        return self._run("tier2", call)

    def timeline_query(
        self,
        start: float | None = None,
        end: float | None = None,
        event_type: str | None = None,
        limit: int = 20,
        *,
        entity: str | None = None,
    ) -> Envelope:
        """Events within [start, end], newest first; optionally of one type or about one entity."""

        def call() -> list[dict[str, Any]]:
            lo, hi = v.optional_time("start", start), v.optional_time("end", end)
            if lo is not None and hi is not None and lo > hi:
                raise ValidationError(f"start ({lo}) is after end ({hi})")
            events = self._core.knowledge.query_events(
                start=lo, end=hi,
                event_type=None if event_type is None else v.choice("event_type", event_type, v.EVENT_TYPES),
                entity=None if entity is None else v.text("entity", entity, max_chars=200).strip(),
                limit=v.positive_int("limit", limit, maximum=c.MAX_LIMIT),
            )  # fmt: skip
            return [e.to_dict() for e in events]

        return self._run("tier2", call)

    def audit_log(self, limit: int = 50, target_uuid: str | None = None) -> Envelope:
        """The newest audit entries (what was written, by whom, when)."""

        def call() -> list[dict[str, Any]]:
            lim = v.positive_int("limit", limit, maximum=c.MAX_LIMIT)
            target = v.optional_text("target_uuid", target_uuid, max_chars=100)
            return [e.to_dict() for e in self._core.knowledge.audit_log(limit=lim, target_uuid=target)]

        return self._run("tier2", call)

    # == public methods: ops, maintenance, doctor, history, graph, llm (core-ops) =================

    def __enter__(self) -> MemoryAPI:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# Public members that return no envelope (nothing to redact), and export_json, which redacts its
# document itself (keeping each changed row's content_hash true and its base64 vectors untouched).
_NOT_GUARDED = frozenset(
    {"close", "wait_closed", "enabled_tiers", "knowledge_graph", "maintenance_context", "tier2"}
    | {"export_json"}
)


def _redacting(method: Callable[..., Envelope]) -> Callable[..., Envelope]:
    """``method`` whose envelope data has credentials redacted when config ``security.redact_secrets``
    is on: the read-path guard for text stored before redaction existed (or imported, or written with
    the switch off), so recall, prefetch, the tools, MCP and exports never show one verbatim."""

    @functools.wraps(method)
    def guarded(self: MemoryAPI, *args: Any, **kwargs: Any) -> Envelope:
        envelope = method(self, *args, **kwargs)
        if self.config.security.redact_secrets and isinstance(envelope, dict) and envelope.get("success"):
            envelope["data"] = redact_data(envelope["data"])
        return envelope

    return guarded


def _guard_envelopes(cls: type[MemoryAPI]) -> None:
    for name, member in inspect.getmembers(cls):
        if name.startswith("_") or name in _NOT_GUARDED or not inspect.isfunction(member):
            continue
        if isinstance(inspect.getattr_static(cls, name), staticmethod | classmethod):
            continue  # no store of its own (restore works on files before any MemoryAPI opens them)
        setattr(cls, name, _redacting(member))


_guard_envelopes(MemoryAPI)


def _entry(name: str, value: Any) -> str:
    # NUL bytes and lone surrogates cannot be written to a UTF-8 markdown file: refuse them here.
    return v.text(name, value).strip()


def _scope_view(config: Config, name: str | None) -> ScopeView:
    """The view from config ``scope`` (``name`` overrides ``scope.name``). Raises ConfigError."""
    try:
        return ScopeView.of(
            config.scope.name if name is None else name,
            facts=config.scope.facts,
            shared_pool=config.scope.shared_pool,
        )
    except ValidationError as exc:
        raise ConfigError(f"scope: {exc}") from exc


__all__ = ["MemoryAPI"]
