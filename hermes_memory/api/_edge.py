"""The one envelope edge every part of MemoryAPI builds its answers through (``_run``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from hermes_memory.api.envelope import Envelope, run
from hermes_memory.security.secrets import redact_data

if TYPE_CHECKING:
    from hermes_memory.config import Config
    from hermes_memory.core.memory import Memory


class EnvelopeEdge:
    """Base of MemoryAPI's parts: the composed core they call and the edge that wraps its answers.

    ``MemoryAPI.__init__`` sets ``config`` and ``_core``; each part checks its arguments, makes one core
    call and returns ``_run``'s envelope.
    """

    config: Config
    _core: Memory

    def _run(
        self,
        tier: str,
        fn: Callable[[], Any],
        *,
        tiers: Sequence[str] | None = None,
        redacted: bool = False,
        **meta: Any,
    ) -> Envelope:
        """The one envelope edge: ``fn``'s result (records turned into plain data) wrapped by ``run``,
        its data's credentials redacted when config ``security.redact_secrets`` is on (text stored
        before redaction existed, imported, or written with the switch off is never shown verbatim).
        ``redacted``: ``fn`` returns data its core call redacted under the same switch (recall's hits,
        which the Hermes prefetch reads without this edge), so it is not walked a second time."""
        envelope = run(tier, fn, tiers=tiers, **meta)
        if self.config.security.redact_secrets and envelope["success"] and not redacted:
            envelope["data"] = redact_data(envelope["data"])
        return envelope

    def enabled_tiers(self) -> list[str]:
        return self._core.tiers.enabled()


__all__ = ["EnvelopeEdge"]
