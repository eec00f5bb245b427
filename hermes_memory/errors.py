"""The exception tree. The core raises these; only the edges (MemoryAPI envelope, tool handler, CLI)
turn them into envelopes, JSON or exit codes. Never shadow the builtin ``MemoryError``."""

from __future__ import annotations


class HermesMemoryError(Exception):
    """Base of every error this package raises on purpose."""

    code = "error"


class ConfigError(HermesMemoryError):
    """A configuration key is unknown or has a bad value (the message names the key)."""

    code = "config_error"


class ValidationError(HermesMemoryError):
    """Input at an edge is malformed: empty, wrong type, out of range, too large."""

    code = "invalid_input"


class NotFoundError(HermesMemoryError):
    """A record addressed by uuid, name or alias does not exist."""

    code = "not_found"


class ConflictError(HermesMemoryError):
    """A write would break an invariant (ambiguous substring, over a limit, duplicate name...)."""

    code = "conflict"


class ThreatDetectedError(ValidationError):
    """Content matched a prompt-injection, exfiltration or invisible-Unicode pattern."""

    code = "threat_detected"


class StorageError(HermesMemoryError):
    """The underlying store failed: not a database, read-only, corrupt, locked past the timeout."""

    code = "storage_error"


class StorageFullError(StorageError):
    """A write found no room: the disk is full, or a file size limit (``RLIMIT_FSIZE``) was reached.

    The transaction was rolled back whole; nothing of it is stored and queued work stays queued. Not a
    fault of the data being written: freeing space and retrying writes it.
    """


class VectorStoreBusyError(StorageError):
    """The vector store is open in another process (embedded engines allow one process per store).

    Not a failure of the memory: that process owns the store, and the others leave their embeddings in
    the durable queue for it and read without the vector tier (``SemanticMemory`` handles this).
    """


class BackendError(HermesMemoryError):
    """A vector backend or remote service failed or is unreachable."""

    code = "backend_error"


class DependencyMissingError(HermesMemoryError):
    """An optional dependency is not installed; the message names the extra to install."""

    code = "dependency_missing"


class EmbeddingError(HermesMemoryError):
    """An embedder produced no vectors, the wrong shape, or non-finite values."""

    code = "embedding_error"


class AccessDeniedError(HermesMemoryError):
    """A call names a session, user, scope or profile other than the one it runs for."""

    code = "access_denied"


class MaintenanceStoppedError(HermesMemoryError):
    """A scheduled maintenance job was stopped between batches because its process is shutting down
    (what it wrote stays; the next run resumes)."""

    code = "stopped"


__all__ = [
    "AccessDeniedError",
    "BackendError",
    "ConfigError",
    "ConflictError",
    "DependencyMissingError",
    "EmbeddingError",
    "HermesMemoryError",
    "MaintenanceStoppedError",
    "NotFoundError",
    "StorageError",
    "StorageFullError",
    "ThreatDetectedError",
    "ValidationError",
    "VectorStoreBusyError",
]
