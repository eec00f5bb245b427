"""Which tiers answered a recall and which could not, and why, in words the model (and a person) reads.

The prefetch block ends with a ``Tiers answered:`` line and, when a tier could not answer, a ``Could not
answer:`` line; tool results carry the same facts as ``tiers_answered`` / ``tiers_unavailable`` / ``note``.
``status`` and ``doctor`` can use ``reason_for`` and ``busy_words`` to say the same thing the same way.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from hermes_memory.errors import (
    BackendError,
    ConfigError,
    DependencyMissingError,
    EmbeddingError,
    HermesMemoryError,
    VectorStoreBusyError,
)

# The tier ids of recall, as the model reads them.
TIER_WORDS = {
    "tier1": "notes",
    "tier2": "facts and past turns (keywords)",
    "tier3": "meaning search (vectors)",
    "graph": "knowledge graph",
}
ORDER = ("tier1", "tier2", "tier3", "graph")
KEYWORDS_ONLY = "only keyword matches are shown"
LOADING = "meaning search still loading in this process (the embedding model loads in the background)"
_PID = re.compile(r"\bpid (\d+)\b")


def words(tier: str) -> str:
    return TIER_WORDS.get(tier, tier)


def busy_words(message: str) -> str:
    """Why the vectors cannot be used while another process owns the embedded vector store."""
    pid = _PID.search(message)
    who = f"another process (pid {pid.group(1)})" if pid else "another process"
    return (
        f"{who} owns the vector store (an embedded store admits one process; a Hermes gateway or another "
        f"agent on this home holds it)"
    )


def reason_for(exc: BaseException) -> str:
    """A tier's failure in plain words (never a class name only)."""
    message = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, VectorStoreBusyError):
        return busy_words(message)
    if isinstance(exc, DependencyMissingError):
        return f"a package it needs is missing: {message}"
    if isinstance(exc, EmbeddingError):
        return f"the embedding model could not embed the query: {message}"
    if isinstance(exc, BackendError):
        return f"the vector store answered with an error: {message}"
    if isinstance(exc, ConfigError):
        return f"it cannot work with the current settings: {message} (run `hermes-memory doctor`)"
    if isinstance(exc, HermesMemoryError):
        return f"it failed: {message}"
    return f"it failed unexpectedly: {type(exc).__name__}: {message}"


def answered_line(answered: Iterable[str]) -> str:
    """``Tiers answered: notes, facts and past turns (keywords).`` (``none`` when nothing answered)."""
    names = [words(t) for t in _ordered(answered)]
    return "Tiers answered: " + (", ".join(names) if names else "none") + "."


def unavailable_note(unavailable: Mapping[str, str]) -> str:
    """``Could not answer: <tier> — <why>; <tier> — <why>; only keyword matches are shown.`` or ""."""
    if not unavailable:
        return ""
    parts = [f"{words(t)} — {unavailable[t]}" for t in _ordered(unavailable)]
    tail = f"; {KEYWORDS_ONLY}" if "tier3" in unavailable and "tier2" not in unavailable else ""
    return "Could not answer: " + "; ".join(parts) + tail + "."


def late_note(waited_ms: int) -> str:
    """What the block says when the recall for the message did not finish within the prefetch wait."""
    return (
        f"Could not answer in time: looking up memories for this message took longer than {waited_ms} ms "
        "(the machine is busy), so none are shown here, not even keyword matches; call "
        "nextlevel_search(query) to search memory."
    )


def behind_note(turns: int) -> str:
    """What the block says while meaning search lags behind the stored turns."""
    return (
        f"Meaning search is behind: {turns} stored turn(s) are not yet searchable by meaning "
        "(keyword search finds them)."
    )


def tool_fields(answered: Iterable[str], unavailable: Mapping[str, str]) -> dict[str, Any]:
    """The keys a tool result carries: ``tiers_answered``, ``tiers_unavailable`` and, when some tier
    could not answer, ``note``."""
    out: dict[str, Any] = {
        "tiers_answered": [words(t) for t in _ordered(answered)],
        "tiers_unavailable": {words(t): unavailable[t] for t in _ordered(unavailable)},
    }
    if unavailable:
        out["note"] = unavailable_note(unavailable)
    return out


def _ordered(tiers: Iterable[str]) -> list[str]:
    seen = list(dict.fromkeys(tiers))
    return sorted(seen, key=lambda t: ORDER.index(t) if t in ORDER else len(ORDER))


__all__ = [
    "KEYWORDS_ONLY",
    "LOADING",
    "TIER_WORDS",
    "answered_line",
    "behind_note",
    "busy_words",
    "late_note",
    "reason_for",
    "tool_fields",
    "unavailable_note",
    "words",
]
