"""The composed core: ``Memory`` owns the tiers and returns records; ``MemoryAPI`` wraps it in envelopes."""

from hermes_memory.core.memory import Memory
from hermes_memory.core.tiers import Tiers

__all__ = ["Memory", "Tiers"]
