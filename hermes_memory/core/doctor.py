"""``doctor``: integrity checks over every store, and with ``repair`` the fixes that can be made
(``hermes_memory.ops.doctor`` holds the checks; imported where used, they pull in the graph)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from hermes_memory.core.forgetting import Forgetting
from hermes_memory.core.maintenance import Maintenance
from hermes_memory.core.tiers import Tiers
from hermes_memory.errors import HermesMemoryError

if TYPE_CHECKING:
    from hermes_memory.ops.doctor import DoctorReport

# What a repair step reports: whether it succeeded, its data, the error (None when it succeeded).
Summary = dict[str, Any]


class Doctor:
    """Checks and repairs over the store-wide view the maintenance jobs use."""

    def __init__(self, tiers: Tiers, maintenance: Maintenance, forgetting: Forgetting) -> None:
        self._tiers = tiers
        self._maintenance = maintenance
        self._forgetting = forgetting

    def run(
        self, *, repair: bool, flush: Callable[[], Summary], progress: Callable[[str], None] | None = None
    ) -> DoctorReport:
        """Check the stores (and with ``repair`` fix what can be fixed, then check again). ``flush``
        writes every queued turn and embedding (the ``drain`` repair) and summarises the outcome.
        Raises ConfigError when Tier 2 is off, StorageError when the store cannot be read."""
        from hermes_memory.ops.doctor import check_and_repair

        ctx = self._maintenance.maintenance_context()
        return check_and_repair(
            ctx.tier2,
            ctx.semantic,
            ctx.graph,
            graph_dir=ctx.graph.directory if ctx.graph is not None else self._tiers.config.graph_path,
            flush=flush,
            consolidate=self._consolidate,
            repair=repair,
            finish_erasures=lambda: summary(self._forgetting.finish_erasures),
            progress=progress,
        )

    def _consolidate(self) -> Summary:
        try:
            report = self._maintenance.run(["consolidate"])
        except HermesMemoryError as exc:
            return {"success": False, "data": None, "error": str(exc)}
        failed = bool(report.failed)
        return {"success": not failed, "data": report.to_dict(), "error": report.error() if failed else None}


def summary(step: Callable[[], Any]) -> Summary:
    """``step``'s outcome as a repair reports it: its data, or the error it raised."""
    try:
        data = step()
    except HermesMemoryError as exc:
        return {"success": False, "data": None, "error": str(exc)}
    return {"success": True, "data": data, "error": None}


__all__ = ["Doctor", "Summary", "summary"]
