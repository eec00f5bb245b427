"""MemoryAPI: one facade over every tier. Thin: validation and envelopes here, work in the tiers."""

from __future__ import annotations

import atexit
import functools
import inspect
import logging
import os
import threading
from collections.abc import Callable
from typing import Any

from hermes_memory import validation as v
from hermes_memory.api._doctor_methods import DoctorMethods
from hermes_memory.api._graph_methods import GraphMethods
from hermes_memory.api._history_methods import HistoryMethods
from hermes_memory.api._llm_methods import LLMMethods
from hermes_memory.api._maintenance_methods import MaintenanceMethods
from hermes_memory.api._mirror_methods import MirrorMethods
from hermes_memory.api._ops_methods import OpsMethods
from hermes_memory.api._recall_methods import RecallMethods
from hermes_memory.api._remember_methods import RememberMethods
from hermes_memory.api._tier1_methods import Tier1Methods
from hermes_memory.api._tier2_methods import Tier2Methods
from hermes_memory.api._tier3_methods import Tier3Methods
from hermes_memory.api.envelope import Envelope, run
from hermes_memory.config import Config, load_config
from hermes_memory.errors import ConfigError, HermesMemoryError, ValidationError
from hermes_memory.graph.service import GraphService
from hermes_memory.ingest.background import BackgroundWorker
from hermes_memory.ingest.worker import Changes, Ingestor
from hermes_memory.llm.wiring import ingest_hooks
from hermes_memory.ops import recovery
from hermes_memory.recall.engine import RecallEngine
from hermes_memory.records import Entity, Fact, Relation
from hermes_memory.scoping import ScopeView, check_scope_name
from hermes_memory.security.secrets import redact_data, redact_secrets
from hermes_memory.tier1.curated_store import CuratedStore
from hermes_memory.tier1.snapshot import CuratedSnapshot
from hermes_memory.tier2 import Tier2
from hermes_memory.tier3 import shared as shared_tier3
from hermes_memory.tier3.semantic import SemanticMemory

# How long close waits for the worker to finish the item in hand (a turn's transaction is milliseconds;
# an embedding batch or a model load may be longer, and is then left to finish on its own).
_STOP_GRACE_S = 0.1
# How long interpreter exit waits for stores whose close was left to a thread (a worker in the middle of
# an embedding batch). Native code still running in a daemon thread while the interpreter finalises
# aborts the process ("terminate called without an active exception"); Hermes' exit watchdog is 30 s.
_EXIT_WAIT_S = 20.0
_closing: set[threading.Thread] = set()
_closing_lock = threading.Lock()
_exit_hook_registered = False


log = logging.getLogger(__name__)


def _close_in_background(target: Any, *args: Any) -> None:
    """Run a deferred close on a daemon thread that interpreter exit still waits for (bounded)."""
    global _exit_hook_registered
    thread = threading.Thread(target=target, args=args, name="hermes-memory-close", daemon=True)
    with _closing_lock:
        _closing.add(thread)
        if not _exit_hook_registered:
            atexit.register(_finish_closing)
            _exit_hook_registered = True
    thread.start()


def _finish_closing() -> None:
    with _closing_lock:
        threads = list(_closing)
    for thread in threads:
        thread.join(_EXIT_WAIT_S)


class MemoryAPI(
    Tier1Methods,
    Tier2Methods,
    Tier3Methods,
    GraphMethods,
    RememberMethods,
    HistoryMethods,
    RecallMethods,
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
        self._max_chars = config.tier2.max_content_chars
        self._t2: Tier2 | None = None
        self._curated_store: CuratedStore | None = None
        self._snapshot: CuratedSnapshot | None = None
        self._sem: SemanticMemory | None = None
        self._ingestor: Ingestor | None = None
        self._worker: BackgroundWorker | None = None
        self._closed = threading.Event()  # set once every store is closed
        self._graph_service: GraphService | None = None
        self._engine: RecallEngine | None = None
        if config.tier2.enabled:
            recovery.finish_restore(config)  # a restore cut short mid-swap completes first
            self._t2 = Tier2.open(
                config.db_path,
                wal=config.tier2.wal_mode,
                busy_timeout_ms=config.tier2.busy_timeout_ms,
                auto_dedupe=config.tier2.auto_dedupe,
                view=self.view,
            )
        if config.tier1.enabled:
            self._curated_store = CuratedStore(
                config.memories_dir,
                memory_char_limit=config.tier1.memory_char_limit,
                user_char_limit=config.tier1.user_char_limit,
            )
        if self._t2 is not None:  # an import cut short after its commit gets its curated entries
            try:
                recovery.finish_imports(self._t2, self._curated_store)
            except BaseException:
                self._t2.close()
                raise
        if self._curated_store is not None:
            self._snapshot = CuratedSnapshot.capture(self._curated_store)
        if config.tier3.enabled and self._t2 is not None:
            # Cheap: the embedder and the vector collections open on first use.
            # Shared with every other MemoryAPI of this store in the process (other scopes, same files).
            self._sem = shared_tier3.acquire(config.tier3, config.tier3_path, self._t2, backend=backend)
        if config.graph.enabled and self._t2 is not None:
            self._graph_service = GraphService(self._t2, config.graph_path)
        if self._t2 is not None:
            self._finish_erasures_on_open()
            # llm.enabled: false (default) gives the rule-based writer and _after_ingest unchanged.
            knowledge, after_commit = ingest_hooks(config.llm, self._t2, self._sem, self._after_ingest)
            self._ingestor = Ingestor(
                self._t2, self._sem, knowledge=knowledge, after_commit=after_commit,
                redact=redact_secrets if config.security.redact_secrets else None,
            )  # fmt: skip
            if background:
                worker = BackgroundWorker(
                    lambda: (
                        self._drain_once(stop=lambda: worker.stopping, background=True) or self._idle_upkeep()
                    )
                )
                self._worker = worker
                worker.start()

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
    # -- secrets (config security.redact_secrets) ------------------------------------------------
    def _secret_free(self, text: str) -> str:
        """``text`` with credentials redacted when config ``security.redact_secrets`` is on."""
        return redact_secrets(text) if self.config.security.redact_secrets else text

    def _secret_free_data(self, value: dict[str, Any]) -> dict[str, Any]:
        """``value``'s strings with credentials redacted when config ``security.redact_secrets`` is on."""
        if not self.config.security.redact_secrets:
            return value
        redacted: dict[str, Any] = redact_data(value)
        return redacted

    # -- tier access (raise when a tier is switched off) ------------------------------------------
    def _tier2(self) -> Tier2:
        if self._t2 is None:
            raise ConfigError("tier2 is disabled (config key 'tier2.enabled')")
        return self._t2

    def _curated(self) -> CuratedStore:
        if self._curated_store is None:
            raise ConfigError("tier1 is disabled (config key 'tier1.enabled')")
        return self._curated_store

    def _audit_curated(self, action: str, store: str, diff: dict[str, Any]) -> None:
        # Tier 1 has no database of its own; its writes are logged in this profile's Tier 2 audit log.
        if self._t2 is not None:
            with self._t2.db.atomic() as conn:
                self._t2.audit.record(
                    conn, action=action, tier="tier1", actor=self.actor, target_uuid=None, diff=diff
                )

    def _semantic(self) -> SemanticMemory:
        if self._sem is None:
            raise ConfigError("tier3 is disabled (config key 'tier3.enabled'; it also needs tier2)")
        return self._sem

    # -- derived stores follow Tier 2 writes (inside the write's transaction) ---------------------
    def _on_fact_change(self, fact: Fact, *, removed: bool = False) -> None:
        if self._sem is None:
            return
        if removed:
            self._sem.unindex("fact", fact.uuid)
        else:
            self._sem.index_fact(fact)

    def _on_entity_change(self, entity: Entity) -> None:
        if self._sem is not None:
            self._sem.index_entity(entity)
        if self._graph_service is not None:
            self._graph_service.entity_changed(entity)

    def _on_relation_change(self, relation: Relation) -> None:
        if self._graph_service is not None:
            self._graph_service.relation_changed(relation)

    def _after_ingest(self, changes: Changes) -> None:
        """Derived stores follow a committed turn."""
        if self._graph_service is not None:
            for entity in changes.entities:
                self._graph_service.entity_changed(entity)
            for relation in changes.relations:
                self._graph_service.relation_changed(relation)

    def _recall_engine(self) -> RecallEngine:
        if self._engine is None:
            self._engine = RecallEngine(self._tier2(), self._sem, self._graph_service, self._curated_store)
        return self._engine

    def _graph(self) -> GraphService:
        if self._graph_service is None:
            raise ConfigError("the graph is disabled (config key 'graph.enabled'; it also needs tier2)")
        return self._graph_service

    @property
    def tier2(self) -> Tier2:
        """The Tier 2 stores, for code that works with records instead of envelopes."""
        return self._tier2()

    # -- cross-tier -----------------------------------------------------------------------------
    def stats(self) -> Envelope:
        """Counts and sizes of every enabled tier."""

        def call() -> dict[str, Any]:
            out: dict[str, Any] = {
                "profile": self.config.profile,
                "scope": self.scope,
                "scope_view": self.view.to_dict(),
            }
            if self._curated_store is not None:
                out["tier1"] = {
                    store: {
                        "entries": len(state.entries),
                        "usage_chars": state.usage_chars,
                        "limit": state.limit,
                        "usage": state.usage,
                    }
                    for store in ("memory", "user")
                    for state in (self._curated_store.state(store),)
                }
            if self._t2 is not None:
                out["tier2"] = self._t2.stats()
            if self._sem is not None:
                out["tier3"] = self._sem.health()
            return out

        return run("multi", call, tiers=self.enabled_tiers())

    def enabled_tiers(self) -> list[str]:
        tiers = []
        if self.config.tier1.enabled:
            tiers.append("tier1")
        if self.config.tier2.enabled:
            tiers.append("tier2")
        if self._sem is not None:
            tiers.append("tier3")
        if self._graph_service is not None:
            tiers.append("graph")
        return tiers

    def close(self, drain_timeout: float = 5.0, *, build_indexes: bool = True) -> None:
        """Stop the background worker and close every store.

        With ``drain_timeout`` > 0 the worker first drains the queues (up to that long); with 0 it only
        finishes the item in hand: the queues are durable, the next process (or the next open) finishes
        them. A worker still busy after a short grace (loading a model, embedding a batch) is left to end
        on its own and the stores close after it, in a daemon thread, so close returns at once.
        ``build_indexes=False`` leaves a vector engine's close-time index build (seconds at 10k points)
        to a later close or the ``embed_queue`` maintenance job; nothing written is lost either way.
        """
        if not build_indexes and self._sem is not None:
            for backend in self._sem.opened_backends():
                defer = getattr(backend, "defer_optimize", None)  # only engines that build at close
                if callable(defer):
                    defer()
        worker, self._worker = self._worker, None
        if worker is not None:
            if drain_timeout > 0:
                worker.wait_idle(drain_timeout)
            if not worker.stop(_STOP_GRACE_S):
                _close_in_background(self._close_after, worker)
                return
        self._close_stores()

    def wait_closed(self, timeout: float) -> bool:
        """Wait (up to ``timeout`` s) until a close left to a background thread has finished; True when
        the stores are closed (a reopen in this process can then take the vector store again)."""
        return self._closed.wait(timeout)

    def _close_after(self, worker: BackgroundWorker) -> None:
        try:
            worker.join()
            self._close_stores()
        finally:
            with _closing_lock:
                _closing.discard(threading.current_thread())

    def _close_stores(self) -> None:
        if self._graph_service is not None:
            self._graph_service.save()
            self._graph_service = None
        if self._sem is not None:
            shared_tier3.release(self._sem)
            self._sem = None
        if self._t2 is not None:
            self._t2.close()
            self._t2 = None
        self._closed.set()

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
