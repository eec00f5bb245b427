"""Tier 3, semantic memory: embedders, vector backends behind one Protocol, and chunking.

Importing this package imports numpy only; every vector database and model library is imported
by the backend/embedder that needs it, when it is constructed or first used.
"""

from __future__ import annotations

from hermes_memory.tier3.backend import (
    BACKENDS,
    COLLECTIONS,
    DEFAULT_BACKEND,
    ENTITY_EMBEDDINGS,
    MEMORY_CHUNKS,
    CollectionSpec,
    VectorBackend,
    VectorHit,
    make_backend,
    parse_filters,
)
from hermes_memory.tier3.chunks import (
    Chunk,
    approx_tokens,
    chunk_payload,
    chunk_text,
    entity_payload,
    text_hash,
)
from hermes_memory.tier3.embedder import (
    DEFAULT_EMBEDDER,
    EMBEDDERS,
    BaseEmbedder,
    Embedder,
    finalize_embeddings,
    make_embedder,
)

__all__ = [
    "BACKENDS",
    "COLLECTIONS",
    "DEFAULT_BACKEND",
    "DEFAULT_EMBEDDER",
    "EMBEDDERS",
    "ENTITY_EMBEDDINGS",
    "MEMORY_CHUNKS",
    "BaseEmbedder",
    "Chunk",
    "CollectionSpec",
    "Embedder",
    "VectorBackend",
    "VectorHit",
    "approx_tokens",
    "chunk_payload",
    "chunk_text",
    "entity_payload",
    "finalize_embeddings",
    "make_backend",
    "make_embedder",
    "parse_filters",
    "text_hash",
]
