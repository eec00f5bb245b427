"""The opened stores of one profile and scope, handed to every core service (injected, not inherited).

A switched-off tier is None; asking for it raises ConfigError naming the config key. The change hooks
keep the derived stores (Tier 3, the graph) following Tier 2 writes, inside the write's transaction.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hermes_memory.config import Config
from hermes_memory.errors import ConfigError
from hermes_memory.records import Entity, Fact, Relation
from hermes_memory.scoping import ScopeView
from hermes_memory.security.secrets import redact_data, redact_secrets
from hermes_memory.tier1.curated_store import CuratedStore
from hermes_memory.tier1.snapshot import CuratedSnapshot
from hermes_memory.tier2 import Tier2

if TYPE_CHECKING:  # the types only: a read of Tier 2 never imports the write path or the vector stack
    from hermes_memory.graph.service import GraphService
    from hermes_memory.ingest.worker import Changes
    from hermes_memory.tier3.semantic import SemanticMemory


class Tiers:
    """What the core services work with: config, who writes, the scope view and each open store."""

    def __init__(
        self,
        config: Config,
        *,
        actor: str,
        view: ScopeView,
        t2: Tier2 | None = None,
        curated: CuratedStore | None = None,
        snapshot: CuratedSnapshot | None = None,
        sem: SemanticMemory | None = None,
        graph: GraphService | None = None,
    ) -> None:
        self.config = config
        self.actor = actor
        self.view = view
        self.t2 = t2
        self.curated = curated
        # The curated entries as they were when this process started (Hermes' frozen system prompt).
        self.snapshot = snapshot
        self.sem = sem
        self.graph = graph

    @property
    def scope(self) -> str:
        return self.view.own

    @property
    def max_chars(self) -> int:
        return self.config.tier2.max_content_chars

    # -- the tiers (raise when one is switched off) -----------------------------------------------
    def tier2(self) -> Tier2:
        if self.t2 is None:
            raise ConfigError("tier2 is disabled (config key 'tier2.enabled')")
        return self.t2

    def curated_store(self) -> CuratedStore:
        if self.curated is None:
            raise ConfigError("tier1 is disabled (config key 'tier1.enabled')")
        return self.curated

    def semantic(self) -> SemanticMemory:
        if self.sem is None:
            raise ConfigError("tier3 is disabled (config key 'tier3.enabled'; it also needs tier2)")
        return self.sem

    def graph_service(self) -> GraphService:
        if self.graph is None:
            raise ConfigError("the graph is disabled (config key 'graph.enabled'; it also needs tier2)")
        return self.graph

    def enabled(self) -> list[str]:
        """The tiers this memory answers from, in order."""
        tiers = []
        if self.config.tier1.enabled:
            tiers.append("tier1")
        if self.config.tier2.enabled:
            tiers.append("tier2")
        if self.sem is not None:
            tiers.append("tier3")
        if self.graph is not None:
            tiers.append("graph")
        return tiers

    # -- secrets (config security.redact_secrets) ------------------------------------------------
    def secret_free(self, text: str) -> str:
        """``text`` with credentials redacted when config ``security.redact_secrets`` is on."""
        return redact_secrets(text) if self.config.security.redact_secrets else text

    def secret_free_data(self, value: dict[str, Any]) -> dict[str, Any]:
        """``value``'s strings with credentials redacted when config ``security.redact_secrets`` is on."""
        if not self.config.security.redact_secrets:
            return value
        redacted: dict[str, Any] = redact_data(value)
        return redacted

    # -- Tier 1 writes are audited in Tier 2 -----------------------------------------------------
    def audit_curated(self, action: str, store: str, diff: dict[str, Any]) -> None:
        # Tier 1 has no database of its own; its writes are logged in this profile's Tier 2 audit log.
        if self.t2 is not None:
            with self.t2.db.atomic() as conn:
                self.t2.audit.record(
                    conn, action=action, tier="tier1", actor=self.actor, target_uuid=None, diff=diff
                )

    # -- derived stores follow Tier 2 writes (inside the write's transaction) ---------------------
    def on_fact_change(self, fact: Fact, *, removed: bool = False) -> None:
        if self.sem is None:
            return
        if removed:
            self.sem.unindex("fact", fact.uuid)
        else:
            self.sem.index_fact(fact)

    def on_entity_change(self, entity: Entity) -> None:
        if self.sem is not None:
            self.sem.index_entity(entity)
        if self.graph is not None:
            self.graph.entity_changed(entity)

    def on_relation_change(self, relation: Relation) -> None:
        if self.graph is not None:
            self.graph.relation_changed(relation)

    def after_ingest(self, changes: Changes) -> None:
        """Derived stores follow a committed turn."""
        if self.graph is not None:
            for entity in changes.entities:
                self.graph.entity_changed(entity)
            for relation in changes.relations:
                self.graph.relation_changed(relation)


__all__ = ["Tiers"]
