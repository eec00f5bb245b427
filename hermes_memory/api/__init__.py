"""The unified API over every tier."""

from hermes_memory.api.memory_api import MemoryAPI

__all__ = ["MemoryAPI"]
