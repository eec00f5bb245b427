"""hermes-memory: tiered, local-first memory for Hermes Agent."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_memory._lazy import lazy_exports
from hermes_memory.errors import (
    BackendError,
    ConfigError,
    ConflictError,
    DependencyMissingError,
    EmbeddingError,
    HermesMemoryError,
    NotFoundError,
    StorageError,
    ThreatDetectedError,
    ValidationError,
)
from hermes_memory.records import AuditEntry, Entity, Episode, Event, Fact, Hit, Relation

if TYPE_CHECKING:
    from hermes_memory.api.async_api import AsyncMemoryAPI
    from hermes_memory.api.memory_api import MemoryAPI
    from hermes_memory.config import Config, load_config

__version__ = "0.1.0"


# MemoryAPI (and every tier behind it) and the config loader (numpy, YAML) load on first use, not with
# the package: importing a submodule (the Hermes provider shim, the command line) must stay cheap.
__getattr__ = lazy_exports(
    __name__,
    {
        "AsyncMemoryAPI": "hermes_memory.api.async_api",
        "MemoryAPI": "hermes_memory.api.memory_api",
        "Config": "hermes_memory.config",
        "load_config": "hermes_memory.config",
    },
)


__all__ = [
    "AsyncMemoryAPI",
    "AuditEntry",
    "BackendError",
    "Config",
    "ConfigError",
    "ConflictError",
    "DependencyMissingError",
    "EmbeddingError",
    "Entity",
    "Episode",
    "Event",
    "Fact",
    "HermesMemoryError",
    "Hit",
    "MemoryAPI",
    "NotFoundError",
    "Relation",
    "StorageError",
    "ThreatDetectedError",
    "ValidationError",
    "__version__",
    "load_config",
]
