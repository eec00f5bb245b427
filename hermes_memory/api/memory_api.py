"""MemoryAPI: one facade over every tier. Thin: validation and envelopes here, work in the tiers.

The methods live in parts by family, each a base class of MemoryAPI built on the one envelope edge
(``_edge.EnvelopeEdge._run``): recall and search (``_recall``), the write path (``_ingest``), Tier 1 and
its mirror (``_curated``), facts, events and their history (``_facts_history``), entities and the graph
(``_entities``), the LLM path (``_llm``), forget and transfer (``_data_ops``) and maintenance
(``_maintenance``). This module opens the store and holds what concerns it as a whole: lifecycle, stats,
agents and the doctor.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from hermes_memory import validation as v
from hermes_memory.api._constructor import merge_overrides, seed_overrides
from hermes_memory.api._curated import CuratedAPI
from hermes_memory.api._data_ops import DataOpsAPI
from hermes_memory.api._entities import EntitiesAPI
from hermes_memory.api._facts_history import FactsHistoryAPI
from hermes_memory.api._ingest import IngestAPI
from hermes_memory.api._llm import LLMAPI
from hermes_memory.api._maintenance import MaintenanceAPI
from hermes_memory.api._recall import RecallAPI
from hermes_memory.api.envelope import Envelope
from hermes_memory.config import Config, load_config
from hermes_memory.core.memory import Memory
from hermes_memory.errors import ConfigError, ValidationError
from hermes_memory.scoping import ScopeView, check_scope_name
from hermes_memory.tier2 import Tier2

if TYPE_CHECKING:
    from hermes_memory.llm.client import LLMClient

log = logging.getLogger(__name__)


class MemoryAPI(
    RecallAPI,
    IngestAPI,
    CuratedAPI,
    FactsHistoryAPI,
    EntitiesAPI,
    LLMAPI,
    DataOpsAPI,
    MaintenanceAPI,
):
    """Unified interface for all memory tiers; every public method returns the seed's envelope.

    Construction opens Tier 2 (creating and migrating the DB) and freezes the Tier 1 snapshot.
    ``scope`` (default: config ``scope.name``) selects this agent's scope in a store shared by several
    agents; every store is bound to it, so nothing of another scope is read, counted or exported.
    The seed's keywords ``tier2_enabled``, ``tier3_enabled``, ``graph_enabled``, ``tier3_backend`` and
    ``embedding_model`` set ``tier2.enabled``, ``tier3.enabled``, ``graph.enabled``, ``tier3.backend``
    and ``tier3.embedding_model`` (ValidationError for a non-bool switch or an unregistered name).
    ``llm_client`` (any object with HAEMA's ``generate_structured(system, user, response_model)``,
    the ``hermes_memory.llm.LLMClient`` protocol) is the LLM of the optional LLM path; giving one
    switches that path on whatever config ``llm`` says.
    Raises ConfigError for bad configuration and StorageError when the store cannot be opened.
    """

    def __init__(
        self,
        config: Config | str | None = None,
        *,
        profile: str | None = None,
        hermes_home: str | os.PathLike[str] | None = None,
        config_path: str | os.PathLike[str] | None = None,
        actor: str = "user",
        scope: str | None = None,
        backend: str | None = None,
        background: bool = False,
        tier2_enabled: bool | None = None,
        tier3_enabled: bool | None = None,
        graph_enabled: bool | None = None,
        tier3_backend: str | None = None,
        embedding_model: str | None = None,
        llm_client: LLMClient | None = None,
        **overrides: Any,
    ):
        # Names given here are checked as input (ValidationError); the same names read from a config
        # file are checked there (ConfigError naming the key).
        if isinstance(config, str):  # the seed's signature: MemoryAPI("work") names the profile
            if profile is not None:
                raise ValidationError("the profile is given twice (first argument and profile=)")
            config, profile = None, config
        if profile is not None:
            v.profile_name("profile", profile)
        if scope is not None:
            check_scope_name(scope)
        # The seed's keywords (HMNL 8.1) are config overrides: tier2_enabled -> tier2.enabled, ...
        keywords = {
            "tier2_enabled": tier2_enabled, "tier3_enabled": tier3_enabled, "graph_enabled": graph_enabled,
            "tier3_backend": tier3_backend, "embedding_model": embedding_model,
        }  # fmt: skip
        given = [name for name, value in keywords.items() if value is not None]
        if config is not None and given:
            raise ConfigError(f"pass either a Config or the keywords {', '.join(given)}, not both")
        merge_overrides(overrides, seed_overrides(**keywords))
        if llm_client is not None and not callable(getattr(llm_client, "generate_structured", None)):
            raise ConfigError(
                "llm_client must implement generate_structured(system, user, response_model) "
                f"(hermes_memory.llm.LLMClient), got {type(llm_client).__name__}"
            )
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
        self._core = Memory(
            config, actor=actor, view=self.view, backend=backend, background=background, llm_client=llm_client
        )

    @property
    def tier2(self) -> Tier2:
        """The Tier 2 stores, for code that works with records instead of envelopes."""
        return self._core.tiers.tier2()

    # -- the store as a whole -------------------------------------------------------------------
    def stats(self) -> Envelope:
        """Counts and sizes of every enabled tier."""
        return self._run("multi", self._core.stats, tiers=self.enabled_tiers())

    def close(self, drain_timeout: float = 5.0, *, build_indexes: bool = True) -> None:
        """Stop the background worker and close every store (``Memory.close``)."""
        self._core.close(drain_timeout, build_indexes=build_indexes)

    def wait_closed(self, timeout: float) -> bool:
        """Wait (up to ``timeout`` s) until a close left to a background thread has finished; True when
        the stores are closed (a reopen in this process can then take the vector store again)."""
        return self._core.wait_closed(timeout)

    @property
    def core(self) -> Memory:
        """The composed core, for code that works with records instead of envelopes (the Hermes
        provider's prefetch reads ``core.recall``)."""
        return self._core

    def list_agents(self) -> Envelope:
        """Engram's ``list_agents``: every agent scope holding memory in this store (and this agent's),
        by name, with ``own``, ``readable`` (its own, the shared fact pool, config ``scope.read_also``)
        and, for readable scopes only, its episode and fact counts."""
        return self._run("tier2", lambda: [a.to_dict() for a in self._core.agents.list()])

    # -- doctor ---------------------------------------------------------------------------------------
    def doctor(self, repair: bool = False, progress: Callable[[str], None] | None = None) -> Envelope:
        """Check the stores (and with ``repair`` fix what can be fixed, then check again); ``progress``
        is told each step as it starts.

        data: {"clean", "findings": [{check, status ok|warn|error, detail, repairable}], "initial",
        "repairs"}. The envelope succeeds even when problems are found; ``clean`` says whether any were.
        """

        def call() -> dict[str, Any]:
            if not isinstance(repair, bool):
                raise ValidationError("repair must be a boolean")
            v.optional_callback("progress", progress)

            def flush() -> dict[str, Any]:  # draining the queues is the write path's; the doctor is handed it
                return _summary(self.flush(timeout=60.0))

            return self._core.doctor.run(repair=repair, flush=flush, progress=progress).to_dict()

        return self._run("multi", call, tiers=[t for t in self.enabled_tiers() if t != "tier1"])

    def __enter__(self) -> MemoryAPI:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _scope_view(config: Config, name: str | None) -> ScopeView:
    """The view from config ``scope`` (``name`` overrides ``scope.name``). Raises ConfigError."""
    try:
        return ScopeView.of(
            config.scope.name if name is None else name,
            facts=config.scope.facts,
            shared_pool=config.scope.shared_pool,
            read_also=config.scope.read_also,
        )
    except ValidationError as exc:
        raise ConfigError(f"scope: {exc}") from exc


def _summary(envelope: Envelope) -> dict[str, Any]:
    """What a doctor repair step reports of an envelope."""
    return {"success": envelope["success"], "data": envelope["data"], "error": envelope["error"]}


__all__ = ["MemoryAPI"]
