"""Tier 1: Hermes' curated MEMORY.md / USER.md, format-compatible with the built-in memory tool."""

from __future__ import annotations

from hermes_memory.tier1.curated_store import (
    DEFAULT_MEMORY_CHAR_LIMIT,
    DEFAULT_USER_CHAR_LIMIT,
    ENTRY_DELIMITER,
    STORE_FILES,
    STORES,
    AmbiguousMatchError,
    CuratedLimitError,
    CuratedResult,
    CuratedStore,
    EntryNotFoundError,
    ExternalDriftError,
    check_store,
    parse_entries,
    serialize_entries,
    usage_percent,
)
from hermes_memory.tier1.snapshot import (
    BLOCK_HEADERS,
    BLOCK_SEPARATOR,
    BlockedEntry,
    CuratedSnapshot,
    render_block,
    sanitize_entries,
)

__all__ = [
    "BLOCK_HEADERS",
    "BLOCK_SEPARATOR",
    "DEFAULT_MEMORY_CHAR_LIMIT",
    "DEFAULT_USER_CHAR_LIMIT",
    "ENTRY_DELIMITER",
    "STORES",
    "STORE_FILES",
    "AmbiguousMatchError",
    "BlockedEntry",
    "CuratedLimitError",
    "CuratedResult",
    "CuratedSnapshot",
    "CuratedStore",
    "EntryNotFoundError",
    "ExternalDriftError",
    "check_store",
    "parse_entries",
    "render_block",
    "sanitize_entries",
    "serialize_entries",
    "usage_percent",
]
