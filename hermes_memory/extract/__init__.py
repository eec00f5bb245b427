"""Rule-based extraction (no LLM): entities, relations, facts and dates from one message.

Call ``extract(MessageInput(...), KnownEntities(...))``; see ``types`` for the records. Names are
resolved lazily, so importing one module of the package (``extract.speech`` for a read) does not pay
for the whole pipeline.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_memory._lazy import lazy_exports

if TYPE_CHECKING:
    from hermes_memory.extract.dedup import (
        NEAR_DUPLICATE_THRESHOLD,
        content_hash,
        find_near_duplicate,
        is_near_duplicate,
        merge_facts,
        normalize_content,
    )
    from hermes_memory.extract.pipeline import (
        extract,
    )
    from hermes_memory.extract.relations import (
        EXCLUSIVE_PREDICATES,
    )
    from hermes_memory.extract.temporal import (
        as_phrase,
        find_temporal,
    )
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

_EXPORTS = {
    "CATEGORIES": "hermes_memory.extract.types",
    "ENTITY_TYPES": "hermes_memory.extract.types",
    "EXCLUSIVE_PREDICATES": "hermes_memory.extract.relations",
    "ExtractedEntity": "hermes_memory.extract.types",
    "ExtractedFact": "hermes_memory.extract.types",
    "ExtractedRelation": "hermes_memory.extract.types",
    "ExtractionResult": "hermes_memory.extract.types",
    "GRANULARITIES": "hermes_memory.extract.types",
    "KnownEntities": "hermes_memory.extract.types",
    "KnownEntity": "hermes_memory.extract.types",
    "MessageInput": "hermes_memory.extract.types",
    "NEAR_DUPLICATE_THRESHOLD": "hermes_memory.extract.dedup",
    "TemporalMention": "hermes_memory.extract.types",
    "as_phrase": "hermes_memory.extract.temporal",
    "content_hash": "hermes_memory.extract.dedup",
    "extract": "hermes_memory.extract.pipeline",
    "find_near_duplicate": "hermes_memory.extract.dedup",
    "find_temporal": "hermes_memory.extract.temporal",
    "is_near_duplicate": "hermes_memory.extract.dedup",
    "merge_facts": "hermes_memory.extract.dedup",
    "normalize_content": "hermes_memory.extract.dedup",
}

__getattr__ = lazy_exports(__name__, _EXPORTS)

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
