"""MemoryAPI method `doctor`: integrity checks and repairs over every store (work in ``ops/doctor``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from hermes_memory.api.envelope import Envelope, run
from hermes_memory.errors import ValidationError

if TYPE_CHECKING:
    from hermes_memory.api.memory_api import MemoryAPI


class DoctorMethods:
    """Mixed into MemoryAPI; ``run_doctor`` uses its public ``maintenance_context``, ``flush`` and
    ``maintain``."""

    def enabled_tiers(self) -> list[str]:
        raise NotImplementedError

    def doctor(self, repair: bool = False) -> Envelope:
        """Check the stores (and with ``repair`` fix what can be fixed, then check again).

        data: {"clean", "findings": [{check, status ok|warn|error, detail, repairable}], "initial",
        "repairs"}. The envelope succeeds even when problems are found; ``clean`` says whether any were.
        """

        def call() -> dict[str, Any]:
            if not isinstance(repair, bool):
                raise ValidationError("repair must be a boolean")
            # here, not at module level: the checks pull in the graph (NetworkX), unused on a turn
            from hermes_memory.ops.doctor import run_doctor

            return run_doctor(cast("MemoryAPI", self), repair=repair).to_dict()

        return run("multi", call, tiers=[t for t in self.enabled_tiers() if t != "tier1"])


__all__ = ["DoctorMethods"]
