"""The agents (scopes) sharing this store, as Engram's ``list_agents`` shows them: every scope that holds
memory, by name; which of them this agent reads (its own, the shared fact pool, those config
``scope.read_also`` names); the counts only of those it may read (another agent's memory is never
counted for it)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hermes_memory.core.tiers import Tiers
from hermes_memory.tier2.agents import scope_counts


@dataclass(frozen=True)
class Agent:
    """A scope in the store: ``own`` (this agent's), ``readable`` by this agent, and (readable ones
    only) its stored episodes and facts."""

    scope: str
    own: bool
    readable: bool
    episodes: int | None
    facts: int | None

    def to_dict(self) -> dict[str, Any]:
        return {"scope": self.scope, "own": self.own, "readable": self.readable,
                "episodes": self.episodes, "facts": self.facts}  # fmt: skip


class Agents:
    """``list_agents`` over one ``Tiers``."""

    def __init__(self, tiers: Tiers) -> None:
        self._tiers = tiers

    def list(self) -> list[Agent]:
        """Every scope holding memory (and this agent's own, even empty), by name. Raises StorageError."""
        view = self._tiers.view
        counts = {c.scope: c for c in scope_counts(self._tiers.tier2().db)}
        names = sorted({*counts, view.own})
        out = []
        for name in names:
            readable = view.can_read(name)
            count = counts.get(name)
            out.append(Agent(name, name == view.own, readable,
                             (count.episodes if count else 0) if readable else None,
                             (count.facts if count else 0) if readable else None))  # fmt: skip
        return out


__all__ = ["Agent", "Agents"]
