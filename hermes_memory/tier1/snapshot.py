"""The frozen view of tier 1 that goes into the system prompt.

Taken once when a session opens, like Hermes' ``MemoryStore.load_from_disk`` (hermes-agent 0.19.0
``tools/memory_tool.py``): later writes reach the files but not the snapshot, so the prompt prefix
stays byte-stable for the whole session. Entries that match a threat pattern are replaced by a
``[BLOCKED: ...]`` placeholder in the snapshot only; the files keep them so the user can see and
remove them. ``render()`` reproduces Hermes' blocks byte for byte (``_render_block``, joined with a
blank line as ``agent/system_prompt.py`` joins its volatile parts).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from hermes_memory.security.threats import scan_for_threats
from hermes_memory.tier1.curated_store import (
    STORE_FILES,
    STORES,
    CuratedStore,
    check_store,
    serialize_entries,
    usage_percent,
)

# Hermes exports these header texts (MEMORY_BLOCK_HEADERS); its compression code looks for them.
BLOCK_HEADERS: Final = {
    "memory": "MEMORY (your personal notes)",
    "user": "USER PROFILE (who the user is)",
}
BLOCK_SEPARATOR: Final = "═" * 46


@dataclass(frozen=True, slots=True)
class BlockedEntry:
    """An entry kept out of the prompt: where it was and which patterns it matched."""

    store: str
    index: int
    pattern_ids: tuple[str, ...]


def sanitize_entries(store: str, entries: Sequence[str]) -> tuple[tuple[str, ...], tuple[BlockedEntry, ...]]:
    """Return ``entries`` with every threat-matching entry replaced by Hermes' placeholder, plus
    a record of each replacement.

    Raises ValidationError for an unknown store.
    """
    filename = STORE_FILES[check_store(store)]
    sanitized: list[str] = []
    blocked: list[BlockedEntry] = []
    for index, entry in enumerate(entries):
        # Hermes passes entries that already start with "[BLOCKED:" unscanned; that would let a
        # poisoned file smuggle text in behind the prefix, so every entry is scanned here.
        pattern_ids = tuple(match.pattern_id for match in scan_for_threats(entry, scope="strict"))
        if not pattern_ids:
            sanitized.append(entry)
            continue
        blocked.append(BlockedEntry(store, index, pattern_ids))
        sanitized.append(
            f"[BLOCKED: {filename} entry contained threat pattern(s): {', '.join(pattern_ids)}. "
            f"Removed from system prompt; use memory(action=remove) to delete the original.]"
        )
    return tuple(sanitized), tuple(blocked)


def render_block(store: str, entries: Sequence[str], limit: int) -> str:
    """One system-prompt block: separator, header with usage, separator, entries; "" if empty.

    Raises ValidationError for an unknown store.
    """
    header_text = BLOCK_HEADERS[check_store(store)]
    if not entries:
        return ""
    content = serialize_entries(entries)
    current = len(content)
    header = f"{header_text} [{usage_percent(current, limit)}% — {current:,}/{limit:,} chars]"
    return f"{BLOCK_SEPARATOR}\n{header}\n{BLOCK_SEPARATOR}\n{content}"


@dataclass(frozen=True, slots=True)
class CuratedSnapshot:
    """Both stores as loaded at open time, already sanitised for the prompt."""

    memory_entries: tuple[str, ...]
    user_entries: tuple[str, ...]
    memory_char_limit: int
    user_char_limit: int
    blocked: tuple[BlockedEntry, ...] = ()

    @classmethod
    def capture(cls, store: CuratedStore) -> CuratedSnapshot:
        """Read both files once and freeze them.

        Raises StorageError if a file exists but cannot be read.
        """
        memory, blocked_memory = sanitize_entries("memory", store.entries("memory"))
        user, blocked_user = sanitize_entries("user", store.entries("user"))
        return cls(
            memory_entries=memory,
            user_entries=user,
            memory_char_limit=store.limit_for("memory"),
            user_char_limit=store.limit_for("user"),
            blocked=blocked_memory + blocked_user,
        )

    def entries(self, store: str) -> tuple[str, ...]:
        """The frozen entries of ``store``. Raises ValidationError for an unknown store."""
        return self.memory_entries if check_store(store) == "memory" else self.user_entries

    def limit_for(self, store: str) -> int:
        """The limit ``store`` had at capture. Raises ValidationError for an unknown store."""
        return self.memory_char_limit if check_store(store) == "memory" else self.user_char_limit

    def render_block(self, store: str) -> str:
        """Hermes' block for one store, "" when it had no entries.

        Raises ValidationError for an unknown store.
        """
        return render_block(store, self.entries(store), self.limit_for(store))

    def render(self) -> str:
        """Both blocks (memory first) separated by a blank line; "" when both stores are empty."""
        blocks = (self.render_block(store).strip() for store in STORES)
        return "\n\n".join(block for block in blocks if block)

    def to_dict(self) -> dict[str, Any]:
        """The entries of both stores, how many were blocked, and the rendered prompt block."""
        return {
            "memory": list(self.memory_entries),
            "user": list(self.user_entries),
            "blocked": len(self.blocked),
            "rendered": self.render(),
        }


__all__ = [
    "BLOCK_HEADERS",
    "BLOCK_SEPARATOR",
    "BlockedEntry",
    "CuratedSnapshot",
    "render_block",
    "sanitize_entries",
]
