"""MemoryAPI: one facade over every tier. Thin: validation and envelopes here, work in the tiers."""

from __future__ import annotations

import functools
import inspect
import logging
import os
from collections.abc import Callable, Sequence
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
from hermes_memory.core.memory import Memory
from hermes_memory.errors import ConfigError, HermesMemoryError, ValidationError
from hermes_memory.graph.service import GraphService
from hermes_memory.ingest.background import BackgroundWorker
from hermes_memory.ingest.worker import Ingestor
from hermes_memory.recall.engine import RecallEngine
from hermes_memory.records import Entity, Fact, Relation
from hermes_memory.scoping import ScopeView, check_scope_name
from hermes_memory.security.secrets import redact_data
from hermes_memory.tier1.curated_store import CuratedStore
from hermes_memory.tier1.snapshot import CuratedSnapshot
from hermes_memory.tier2 import Tier2
from hermes_memory.tier3.semantic import SemanticMemory

log = logging.getLogger(__name__)


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
