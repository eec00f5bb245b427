"""hermes-memory: tiered, local-first memory for Hermes Agent."""

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.config import Config, load_config
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

__version__ = "0.1.0"

__all__ = [
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
