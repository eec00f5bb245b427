"""HAEMA's N:M reconstruction at read time: N retrieved memories in, M consolidated statements out.

The model merges memories that say the same thing, keeps what the query needs, prefers newer evidence
on conflict and cites which inputs each statement came from. An empty answer or ``coverage:
"incomplete"`` gets one refinement pass (HAEMA); if the LLM is off or still fails, the memories come
back unchanged (``fallback=True``) — a reconstruction can lose nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hermes_memory.llm.client import JSONSchema, LLMError
from hermes_memory.llm.structured import StructuredLLM

log = logging.getLogger(__name__)

MAX_MEMORIES = 50
MAX_MEMORY_CHARS = 2000

RECONSTRUCTION_SCHEMA: JSONSchema = {
    "type": "object",
    "required": ["memories", "coverage"],
    "properties": {
        "memories": {
            "type": "array",
            "maxItems": MAX_MEMORIES,
            "items": {
                "type": "object",
                "required": ["text"],
                "properties": {
                    "text": {"type": "string", "minLength": 1, "maxLength": 2000},
                    "sources": {"type": "array", "items": {"type": "integer", "minimum": 1}},
                },
            },
        },
        "coverage": {"enum": ["complete", "incomplete"]},
    },
}

SYSTEM_PROMPT = (
    "You reconstruct an agent's memories for answering a query.\n"
    "Given the query and numbered retrieved memories, write consolidated, self-contained statements:\n"
    "- merge memories that say the same thing into one statement; keep statements atomic;\n"
    "- keep every fact that is relevant to the query, with its names and dates;\n"
    "- when memories conflict, prefer the newer one and say what changed;\n"
    "- never add facts that are not in the memories;\n"
    "- list in `sources` the numbers of the memories each statement is based on.\n"
    'Set coverage to "complete" only if every memory relevant to the query is represented, '
    'otherwise "incomplete".'
)


@dataclass(frozen=True, slots=True)
class Statement:
    """One reconstructed statement and the (0-based) indices of the input memories behind it."""

    text: str
    sources: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Reconstruction:
    """The result: ``fallback`` is true (with ``reason``) when the inputs were returned unchanged."""

    statements: tuple[Statement, ...]
    coverage: str
    fallback: bool
    reason: str | None = None

    @property
    def memories(self) -> tuple[str, ...]:
        return tuple(s.text for s in self.statements)

    def to_dict(self) -> dict[str, Any]:
        return {
            "memories": [{"text": s.text, "sources": list(s.sources)} for s in self.statements],
            "coverage": self.coverage,
            "fallback": self.fallback,
            "reason": self.reason,
        }


def normalise_memories(memories: Sequence[str]) -> list[str]:
    """Stripped, non-empty, exact duplicates dropped (first kept), each cut to MAX_MEMORY_CHARS."""
    seen: set[str] = set()
    out: list[str] = []
    for memory in memories:
        text = " ".join(str(memory).split())[:MAX_MEMORY_CHARS]
        if text and text.casefold() not in seen:
            seen.add(text.casefold())
            out.append(text)
    return out[:MAX_MEMORIES]


def unchanged(memories: Sequence[str], reason: str) -> Reconstruction:
    """The safe fallback: every memory as its own statement."""
    return Reconstruction(
        statements=tuple(Statement(m, (i,)) for i, m in enumerate(memories)),
        coverage="complete",
        fallback=True,
        reason=reason,
    )


def reconstruct(llm: StructuredLLM | None, query: str, memories: Sequence[str]) -> Reconstruction:
    """Reconstruct ``memories`` for ``query``; the memories unchanged when ``llm`` is None or fails.

    Never raises because of the LLM (failures are logged as warnings); ConfigError only for a bug.
    """
    inputs = normalise_memories(memories)
    if not inputs:
        return Reconstruction(statements=(), coverage="complete", fallback=False)
    if llm is None:
        return unchanged(inputs, "llm disabled")
    user = prompt(query, inputs)
    try:
        reply = llm.generate(
            SYSTEM_PROMPT, user, RECONSTRUCTION_SCHEMA, check=lambda v: _check(v, len(inputs))
        )
    except LLMError as exc:
        log.warning("N:M reconstruction failed (%s: %s); returning the memories unchanged", exc.kind, exc)
        return unchanged(inputs, f"{exc.kind}: {exc}"[:500])
    statements = []
    for item in reply["memories"]:
        sources = tuple(dict.fromkeys(n - 1 for n in item.get("sources") or []))
        statements.append(Statement(" ".join(item["text"].split()), sources))
    return Reconstruction(statements=tuple(statements), coverage=reply["coverage"], fallback=False)


def prompt(query: str, memories: Sequence[str]) -> str:
    """The user prompt: the query and the numbered memories, boundary-tagged (HAEMA style)."""
    listed = "\n".join(f"[{i}] {m}" for i, m in enumerate(memories, start=1))
    return f"<query>\n{query}\n</query>\n<related_memories>\n{listed}\n</related_memories>"


def _check(value: dict[str, Any], count: int) -> list[str]:
    # HAEMA: an empty or self-declared incomplete reconstruction is refined once, then abandoned.
    errors = []
    if not value["memories"]:
        errors.append("$.memories: must not be empty when there are memories to reconstruct")
    if value["coverage"] != "complete":
        errors.append('$.coverage: "incomplete" — include every memory relevant to the query')
    for index, item in enumerate(value["memories"]):
        for number in item.get("sources") or []:
            if not 1 <= number <= count:
                errors.append(f"$.memories[{index}].sources: {number} is not a memory number (1..{count})")
    return errors


__all__ = [
    "RECONSTRUCTION_SCHEMA",
    "SYSTEM_PROMPT",
    "Reconstruction",
    "Statement",
    "normalise_memories",
    "prompt",
    "reconstruct",
    "unchanged",
]
