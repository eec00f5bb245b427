"""Names the command line offers as choices, kept apart from the modules that implement them so that
building the parser (``hermes-memory --help``) loads neither the maintenance jobs nor the vector
backends. ``tests/unit/test_cli_fast.py`` checks they match the registries."""

from __future__ import annotations

JOB_NAMES: tuple[str, ...] = ("consolidate", "prune", "embed_queue", "graph_refresh")
BACKEND_NAMES: tuple[str, ...] = ("qdrant", "chroma", "memory", "qdrant-client")

__all__ = ["BACKEND_NAMES", "JOB_NAMES"]
