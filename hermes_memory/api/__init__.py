"""The unified API over every tier (and its asyncio twin)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_memory._lazy import lazy_exports
from hermes_memory.api.memory_api import MemoryAPI

if TYPE_CHECKING:
    from hermes_memory.api.async_api import AsyncMemoryAPI

# The async twin (and asyncio with it) loads on first use: the Hermes provider imports this package.
__getattr__ = lazy_exports(__name__, {"AsyncMemoryAPI": "hermes_memory.api.async_api"})

__all__ = ["AsyncMemoryAPI", "MemoryAPI"]
