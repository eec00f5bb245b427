"""MemoryAPI: one facade over every tier. Thin: validation and envelopes here, work in the tiers."""

from __future__ import annotations

import functools
import inspect
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from hermes_memory import validation as v
from hermes_memory.api._doctor_methods import DoctorMethods
from hermes_memory.api._graph_methods import GraphMethods
from hermes_memory.api._history_methods import HistoryMethods
from hermes_memory.api._llm_methods import LLMMethods
from hermes_memory.api._maintenance_methods import MaintenanceMethods
from hermes_memory.api._mirror_methods import MirrorMethods
from hermes_memory.api._ops_methods import OpsMethods
from hermes_memory.api._remember_methods import RememberMethods
from hermes_memory.api._tier1_methods import Tier1Methods
from hermes_memory.api._tier2_methods import Tier2Methods
from hermes_memory.api.envelope import Envelope, run
from hermes_memory.config import Config, load_config
from hermes_memory.core.memory import Memory
from hermes_memory.core.recall import query_meta
from hermes_memory.errors import ConfigError, HermesMemoryError, ValidationError
from hermes_memory.graph.service import GraphService
from hermes_memory.ingest.background import BackgroundWorker
from hermes_memory.ingest.worker import Ingestor
from hermes_memory.recall.engine import TIERS, RecallEngine
from hermes_memory.records import Entity, Fact, Relation
from hermes_memory.scoping import ScopeView, check_scope_name
from hermes_memory.security.secrets import redact_data
from hermes_memory.security.threats import ensure_safe
from hermes_memory.tier1.curated_store import CuratedStore
from hermes_memory.tier1.snapshot import CuratedSnapshot
from hermes_memory.tier2 import Tier2
from hermes_memory.tier3.semantic import Progress, SemanticMemory

log = logging.getLogger(__name__)

# A rendered block larger than this is no longer a memory block (the largest context windows are ~1M
# tokens; Hermes asks for 300).
MAX_BUDGET_TOKENS = 100_000
_MAX_SEARCH_LIMIT = 1000


class MemoryAPI(
    Tier1Methods,
    Tier2Methods,
    GraphMethods,
    RememberMethods,
    HistoryMethods,
    MirrorMethods,
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
                core.start_worker(
                    lambda worker: (
                        self._drain_once(stop=lambda: worker.stopping, background=True) or self._idle_upkeep()
                    )
                )

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
    def _worker(self) -> BackgroundWorker | None:  # type: ignore[override]
        return self._core.worker

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

    def _secret_free_data(self, value: dict[str, Any]) -> dict[str, Any]:
        return self._core.tiers.secret_free_data(value)

    def _tier2(self) -> Tier2:
        return self._core.tiers.tier2()

    def _curated(self) -> CuratedStore:
        return self._core.tiers.curated_store()

    def _audit_curated(self, action: str, store: str, diff: dict[str, Any]) -> None:
        self._core.tiers.audit_curated(action, store, diff)

    def _semantic(self) -> SemanticMemory:
        return self._core.tiers.semantic()

    def _on_fact_change(self, fact: Fact, *, removed: bool = False) -> None:
        self._core.tiers.on_fact_change(fact, removed=removed)

    def _on_entity_change(self, entity: Entity) -> None:
        self._core.tiers.on_entity_change(entity)

    def _on_relation_change(self, relation: Relation) -> None:
        self._core.tiers.on_relation_change(relation)

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
    @property
    def core(self) -> Memory:
        """The composed core, for code that works with records instead of envelopes (the Hermes
        provider's prefetch reads ``core.recall``)."""
        return self._core

    def recall(
        self,
        query: str,
        tiers: Sequence[str] | None = None,
        limit: int = 10,
        as_of: float | None = None,
        budget_tokens: int | None = None,
        *,
        session_id: str | None = None,
    ) -> Envelope:
        """What memory knows about the query, from every tier, ranked; ``as_of`` answers what was
        believed then. Facts it returns are reinforced (access count).

        ``meta.tiers_answered`` lists the tiers that answered; ``meta.tiers_unavailable`` maps each tier
        that could not (another process owns the vector store, the embedder or graph failed) to why, in
        words; the others still answer."""
        meta: dict[str, Any] = query_meta([], {})

        def call() -> dict[str, Any]:
            text, wanted, args = _recall_args(self._core.tiers.max_chars, query, tiers, limit, as_of,
                                              budget_tokens, session_id)  # fmt: skip
            meta.update(query_meta(self._core.recall.tiers_for(wanted), {}))  # said also if it fails
            found = self._core.recall.query(text, tiers=wanted, **args)
            meta.update(found.meta())
            return found.to_dict()

        envelope = self._run("multi", call)
        envelope["meta"].update(meta)
        return envelope

    def semantic_index(
        self,
        text: str,
        source_type: str = "session",
        session_id: str | None = None,
        message_id: int | None = None,
        *,
        category: str | None = None,
        timestamp: float | None = None,
        wait: bool = True,
    ) -> Envelope:
        """Chunk and index a text; with ``wait`` the embeddings are written before returning."""

        def call() -> dict[str, Any]:
            body = v.text("text", text, max_chars=self._core.tiers.max_chars).strip()
            ensure_safe(body)
            kind = v.choice("source_type", source_type, {"session", "memory", "tool", "fact", "document"})
            sid = v.optional_text("session_id", session_id, max_chars=200)
            if message_id is not None and (isinstance(message_id, bool) or not isinstance(message_id, int)):
                raise ValidationError(f"message_id must be an integer, got {type(message_id).__name__}")
            if category is not None:
                v.choice("category", category, v.FACT_CATEGORIES)
            when = v.optional_time("timestamp", timestamp)
            return self._core.semantic.index(
                body, source_type=kind, session_id=sid, message_id=message_id, category=category,
                timestamp=when, wait=wait,
            ).to_dict()  # fmt: skip

        return self._run("tier3", call)

    def semantic_search(
        self,
        query: str,
        limit: int = 10,
        min_score: float | None = None,
        filters: Mapping[str, Any] | None = None,
    ) -> Envelope:
        """Chunks nearest in meaning to the query (score in [0, 1], higher is closer)."""
        meta: dict[str, Any] = {}

        def call() -> list[dict[str, Any]]:
            text = v.text("query", query, max_chars=self._core.tiers.max_chars).strip()
            lim = v.positive_int("limit", limit, maximum=_MAX_SEARCH_LIMIT)
            floor = self._core.semantic.min_score()  # ConfigError first when Tier 3 is off
            floor = floor if min_score is None else v.unit_interval("min_score", min_score)
            if filters is not None and not isinstance(filters, Mapping):
                raise ValidationError(f"filters must be a mapping, got {type(filters).__name__}")
            found = self._core.semantic.search(text, limit=lim, min_score=floor, filters=filters)
            meta.update(found.meta(), min_score=floor)
            return found.rows()

        envelope = self._run("tier3", call)
        envelope["meta"].update(meta)
        return envelope

    def semantic_hybrid(self, query: str, limit: int = 10) -> Envelope:
        """Full-text (BM25) and vector results fused by reciprocal rank fusion."""
        meta: dict[str, Any] = {}

        def call() -> list[dict[str, Any]]:
            text = v.text("query", query, max_chars=self._core.tiers.max_chars).strip()
            found = self._core.semantic.hybrid(
                text, limit=v.positive_int("limit", limit, maximum=_MAX_SEARCH_LIMIT)
            )
            meta.update(found.meta())
            return found.rows()

        envelope = self._run("multi", call, tiers=["tier2", "tier3"])
        envelope["meta"].update(meta)
        return envelope

    def embed_pending(self, max_items: int | None = None, progress: Progress | None = None) -> Envelope:
        """Drain the durable embed queue into the vector backend (the ``embed_queue`` job)."""

        def call() -> dict[str, int]:
            cap = None if max_items is None else v.positive_int("max_items", max_items)
            v.optional_callback("progress", progress)
            return self._core.semantic.embed_pending(cap, progress).to_dict()

        return self._run("tier3", call)

    def reindex(self, progress: Progress | None = None) -> Envelope:
        """Rebuild every vector collection from Tier 2 (after switching backend or embedder)."""

        def call() -> dict[str, Any]:
            v.optional_callback("progress", progress)
            report, search = self._core.semantic.reindex(progress)
            return {**report.to_dict(), "search": search}  # which path answers from now on

        return self._run("tier3", call)

    # == public methods: writes, ingest, tiers 1-3 (core-write) ==================================

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


def _recall_args(
    max_chars: int,
    query: str,
    tiers: Sequence[str] | None,
    limit: int,
    as_of: float | None,
    budget_tokens: int | None,
    session_id: str | None,
) -> tuple[str, list[str] | None, dict[str, Any]]:
    """``recall``'s input checked (raises ValidationError): the query, the tiers asked for, the rest."""
    text = v.text("query", query, max_chars=max_chars).strip()
    args: dict[str, Any] = {
        "limit": v.positive_int("limit", limit, maximum=200),
        "as_of": v.optional_time("as_of", as_of),
        "budget_tokens": None
        if budget_tokens is None
        else v.positive_int("budget_tokens", budget_tokens, maximum=MAX_BUDGET_TOKENS),
        "session_id": v.optional_text("session_id", session_id, max_chars=200),
    }
    if tiers is None:
        return text, None, args
    wanted = v.string_list("tiers", tiers, max_chars=20)
    unknown = sorted(set(wanted) - set(TIERS))
    if unknown:
        raise ValidationError(f"unknown tier(s) {', '.join(unknown)}; choose from {', '.join(TIERS)}")
    return text, wanted, args


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
