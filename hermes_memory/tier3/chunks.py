"""Split text into embedding chunks by an approximate token count, preferring sentence ends.

A token here is a word or a punctuation mark (``\\w+|[^\\w\\s]``): close to, and a little under, a
word-piece count (MiniLM splits rare words further), cheap, and identical on every machine. Set
``chunk_size`` to at most ~80% of the embedder's ``max_tokens`` so chunks are not truncated.
A turn that fits in ``chunk_size`` stays one chunk (the text with outer whitespace stripped).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hermes_memory.errors import ValidationError
from hermes_memory.tier3.backend import TEXT_PREVIEW_CHARS, Payload

_TOKEN = re.compile(r"\w+|[^\w\s]")
_SENTENCE_END = frozenset(".!?;\n")
# A cut is moved back to a sentence end only if that keeps at least this share of the window.
_MIN_SENTENCE_SHARE = 0.5


@dataclass(frozen=True, slots=True)
class Chunk:
    """A piece of a text: its index, the text, char offsets into the source, and approx tokens."""

    index: int
    text: str
    start: int
    end: int
    tokens: int


def approx_tokens(text: str) -> int:
    """Approximate token count (words and punctuation marks)."""
    return len(_TOKEN.findall(text))


def _check(chunk_size: int, chunk_overlap: int) -> None:
    if chunk_size <= 0:
        raise ValidationError(f"chunk_size must be > 0, got {chunk_size}")
    if not 0 <= chunk_overlap < chunk_size:
        raise ValidationError(f"chunk_overlap must be in [0, chunk_size), got {chunk_overlap}")


def chunk_text(text: str, chunk_size: int = 512, chunk_overlap: int = 64) -> list[Chunk]:
    """Split ``text`` into chunks of at most ``chunk_size`` approx tokens, overlapping by ``chunk_overlap``.

    Returns [] for blank text. Raises ValidationError for chunk_size <= 0 or overlap outside [0, size).
    """
    _check(chunk_size, chunk_overlap)
    spans = [m.span() for m in _TOKEN.finditer(text)]
    if not spans:
        return []
    if len(spans) <= chunk_size:
        start, end = spans[0][0], spans[-1][1]
        return [Chunk(0, text[start:end], start, end, len(spans))]
    chunks: list[Chunk] = []
    first = 0
    while first < len(spans):
        last = min(first + chunk_size, len(spans))  # exclusive
        if last < len(spans):
            floor = first + max(1, int(chunk_size * _MIN_SENTENCE_SHARE))
            for i in range(last - 1, floor - 1, -1):
                tail = text[spans[i][0] : spans[i][1]]
                gap = text[spans[i][1] : spans[i + 1][0]]
                if tail in _SENTENCE_END or "\n" in gap:
                    last = i + 1
                    break
        start, end = spans[first][0], spans[last - 1][1]
        chunks.append(Chunk(len(chunks), text[start:end], start, end, last - first))
        if last >= len(spans):
            break
        # overlap at most half the chunk, so a short (sentence-cut) chunk still moves us forward
        first = last - min(chunk_overlap, (last - first) // 2)
    return chunks


def text_hash(text: str) -> str:
    """sha256 of the whitespace-normalised text: the same content hashes the same in every tier."""
    return hashlib.sha256(" ".join(text.split()).encode("utf-8")).hexdigest()


def chunk_payload(
    *,
    chunk_id: str,
    text: str,
    source_type: str,
    timestamp: float,
    session_id: str | None = None,
    message_id: int | None = None,
    fact_id: str | None = None,
    category: str | None = None,
    scope: str | None = None,
    content_hash: str | None = None,
    extra: Mapping[str, Any] | None = None,
) -> Payload:
    """The ``memory_chunks`` payload (seed section 6.1); None fields are left out.

    ``content_hash`` defaults to ``text_hash(text)``; pass tier 2's hash to keep one definition.
    """
    payload: dict[str, Any] = {
        "chunk_id": chunk_id,
        "fact_id": fact_id,
        "session_id": session_id,
        "message_id": message_id,
        "source_type": source_type,
        "category": category,
        "timestamp": float(timestamp),
        "content_hash": content_hash if content_hash is not None else text_hash(text),
        "text_preview": text[:TEXT_PREVIEW_CHARS],
        "scope": scope,
        **(extra or {}),
    }
    return {k: v for k, v in payload.items() if v is not None}


def entity_payload(
    *,
    entity_id: str,
    entity_name: str,
    entity_type: str,
    description: str | None = None,
    scope: str | None = None,
) -> Payload:
    """The ``entity_embeddings`` payload (seed section 6.1); None fields are left out."""
    payload: dict[str, Any] = {
        "entity_id": entity_id,
        "entity_name": entity_name,
        "entity_type": entity_type,
        "description": description,
        "scope": scope,
    }
    return {k: v for k, v in payload.items() if v is not None}


__all__ = ["Chunk", "approx_tokens", "chunk_payload", "chunk_text", "entity_payload", "text_hash"]
