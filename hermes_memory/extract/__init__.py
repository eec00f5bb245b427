"""Rule-based extraction (no LLM): entities, relations, facts and dates from one message.

Call ``extract(MessageInput(...), KnownEntities(...))``; see ``types`` for the records.
"""

from __future__ import annotations

from hermes_memory.extract.dedup import (
    NEAR_DUPLICATE_THRESHOLD,
    content_hash,
    find_near_duplicate,
    is_near_duplicate,
    merge_facts,
    normalize_content,
)
from hermes_memory.extract.pipeline import extract
from hermes_memory.extract.relations import EXCLUSIVE_PREDICATES
from hermes_memory.extract.temporal import as_phrase, find_temporal
from hermes_memory.extract.types import (
    CATEGORIES,
    ENTITY_TYPES,
    GRANULARITIES,
    ExtractedEntity,
    ExtractedFact,
    ExtractedRelation,
    ExtractionResult,
    KnownEntities,
    KnownEntity,
    MessageInput,
    TemporalMention,
)

__all__ = [
    "CATEGORIES",
    "ENTITY_TYPES",
    "EXCLUSIVE_PREDICATES",
    "GRANULARITIES",
    "NEAR_DUPLICATE_THRESHOLD",
    "ExtractedEntity",
    "ExtractedFact",
    "ExtractedRelation",
    "ExtractionResult",
    "KnownEntities",
    "KnownEntity",
    "MessageInput",
    "TemporalMention",
    "as_phrase",
    "content_hash",
    "extract",
    "find_near_duplicate",
    "find_temporal",
    "is_near_duplicate",
    "merge_facts",
    "normalize_content",
]
