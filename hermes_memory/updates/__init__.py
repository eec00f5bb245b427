"""Knowledge updates in the user's own words: which earlier statements a new one makes no longer true.

``statement`` reads a clause (holder, whether it asserts, normal and masked forms), ``model`` holds what
is learned (change cues, the decision), ``detector`` decides with the store's embedder, ``writer``
closes the replaced facts inside the turn's transaction. ``update_detector`` picks the encoder.
"""

from __future__ import annotations

import functools
import logging
from typing import TYPE_CHECKING

from hermes_memory.errors import EmbeddingError
from hermes_memory.updates.detector import Replacement, UpdateDetector
from hermes_memory.updates.writer import Applied, Closed, StatementUpdates

if TYPE_CHECKING:
    from hermes_memory.tier3.int8_embedder import IntegerMiniLMEmbedder
    from hermes_memory.tier3.semantic import SemanticMemory

log = logging.getLogger(__name__)


def update_detector(semantic: SemanticMemory | None) -> UpdateDetector | None:
    """The detector for a store: over its own embedder when that is all-MiniLM-L6-v2 (the model was fitted
    on the default ``local``'s vectors; the other encoders' agree with them at cosine >= 0.99), else over
    a ``local`` MiniLM of its own. None when the store has no Tier 3 (no embedder was chosen), when its
    embedder carries no meaning (the hashing embedder of fast unit tests) or when no MiniLM can be
    loaded: then only structured single-valued predicates supersede."""
    if semantic is None:
        return None
    embedder = semantic.embedder
    if not getattr(embedder, "carries_meaning", True):
        return None
    from hermes_memory.tier3.local_embedder import MINILM_MODEL_IDS

    if embedder.model_id in MINILM_MODEL_IDS:
        return UpdateDetector(embedder.embed_document)
    encoder = _shared_minilm()
    return None if encoder is None else UpdateDetector(encoder.embed_document)


@functools.cache
def _shared_minilm() -> IntegerMiniLMEmbedder | None:
    try:
        from hermes_memory.tier3.int8_embedder import IntegerMiniLMEmbedder

        return IntegerMiniLMEmbedder()
    except (ImportError, EmbeddingError) as exc:
        log.warning("updates in the user's own words are off: all-MiniLM-L6-v2 cannot load (%s)", exc)
        return None


__all__ = ["Applied", "Closed", "Replacement", "StatementUpdates", "UpdateDetector", "update_detector"]
