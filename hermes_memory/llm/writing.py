"""HAEMA's write path, the LLM stages: a raw message split into memory units (pre-split), and the N:M
reconstruction of new memories with their nearest stored ones (write-time reconstruction).

Both are pure functions of an optional ``StructuredLLM``: with none (the LLM is off) or when the model
keeps failing, they return the safe fallback — the raw text as one unit; the new contents unchanged
with nothing retired — so a write never loses what it was given. Each reply is validated, and one
that is empty, "incomplete", cites no valid input or leaves a new content out gets the one refinement
pass (``StructuredLLM``), as HAEMA does.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hermes_memory.llm.client import JSONSchema, LLMError
from hermes_memory.llm.reconstruction import Reconstruction, Statement, normalise_memories
from hermes_memory.llm.structured import StructuredLLM
from hermes_memory.security.threats import first_threat

log = logging.getLogger(__name__)

MAX_UNITS = 30
MAX_UNIT_CHARS = 1000

PRESPLIT_SCHEMA: JSONSchema = {
    "type": "object",
    "required": ["contents"],
    "properties": {
        "contents": {
            "type": "array",
            "maxItems": MAX_UNITS,
            "items": {"type": "string", "minLength": 1, "maxLength": MAX_UNIT_CHARS},
        }
    },
}

PRESPLIT_PROMPT = (
    "You split one raw message into memory units for an agent's long-term memory.\n"
    "Each unit is one self-contained factual statement (who, what, when), in the third person, keeping "
    "names and dates. Split factual units only: do not judge what is important, do not add anything "
    "that is not in the message, skip greetings and filler. Return an empty list when the message "
    "states nothing worth remembering."
)

WRITE_SCHEMA: JSONSchema = {
    "type": "object",
    "required": ["memories", "coverage"],
    "properties": {
        "memories": {
            "type": "array",
            "maxItems": 50,
            "items": {
                "type": "object",
                "required": ["text", "sources"],
                "properties": {
                    "text": {"type": "string", "minLength": 1, "maxLength": 2000},
                    "sources": {"type": "array", "minItems": 1, "items": {"type": "integer", "minimum": 1}},
                },
            },
        },
        "coverage": {"enum": ["complete", "incomplete"]},
    },
}

WRITE_PROMPT = (
    "You maintain an agent's long-term memory. Integrate the new contents with the related stored "
    "memories into long-term memory entries:\n"
    "- each entry is one atomic, self-contained statement; no duplicates;\n"
    "- merge a new content with the related memories it restates, refines or updates;\n"
    "- when they conflict, the new evidence wins (say what changed if it matters);\n"
    "- keep related memories that the new contents do not touch out of your answer;\n"
    "- never add facts that are in neither list;\n"
    "- list in `sources` the numbers of every input (related or new) each entry is based on: a related "
    "memory you cite is replaced by your entry.\n"
    'Set coverage to "complete" only if every important fact of the new contents is preserved, '
    'otherwise "incomplete". Do not edit any core or profile memory in this stage.'
)


@dataclass(frozen=True)
class Split:
    """The memory units of a raw message; ``fallback`` (with ``reason``) when it was kept whole."""

    units: tuple[str, ...]
    fallback: bool
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"units": list(self.units), "fallback": self.fallback, "reason": self.reason}


def presplit(llm: StructuredLLM | None, raw: str) -> Split:
    """``raw`` split into memory units by the LLM; the whole text as one unit when the LLM is off or
    fails (logged). Never raises because of the LLM."""
    text = " ".join(raw.split())
    if not text:
        return Split((), fallback=False)
    if llm is None:
        return Split((text,), fallback=True, reason="llm disabled")
    try:
        reply = llm.generate(PRESPLIT_PROMPT, f"<raw_input>\n{text}\n</raw_input>", PRESPLIT_SCHEMA,
                             check=_check_units)  # fmt: skip
    except LLMError as exc:
        log.warning("pre-split failed (%s: %s); the message is kept as one memory", exc.kind, exc)
        return Split((text,), fallback=True, reason=f"{exc.kind}: {exc}"[:500])
    return Split(tuple(normalise_memories(reply["contents"])), fallback=False)


def reconstruct_write(
    llm: StructuredLLM | None, related: Sequence[str], new: Sequence[str]
) -> Reconstruction:
    """Long-term entries from ``related`` (numbered 1..R) and ``new`` (R+1..R+N); each statement's
    ``sources`` are 0-based indices into ``related + new``. The fallback: every new content as its own
    entry citing only itself (nothing related is replaced). Never raises because of the LLM."""
    fresh = [" ".join(text.split()) for text in new if text.strip()]
    if not fresh:
        return Reconstruction(statements=(), coverage="complete", fallback=False)
    offset = len(related)
    if llm is None:
        return _unchanged(fresh, offset, "llm disabled")
    try:
        reply = llm.generate(
            WRITE_PROMPT, write_prompt(related, fresh), WRITE_SCHEMA,
            check=lambda value: _check_write(value, offset, len(fresh)),
        )  # fmt: skip
    except LLMError as exc:
        log.warning("write-time reconstruction failed (%s: %s); storing the new memories as given",
                    exc.kind, exc)  # fmt: skip
        return _unchanged(fresh, offset, f"{exc.kind}: {exc}"[:500])
    statements = tuple(
        Statement(" ".join(item["text"].split()), tuple(dict.fromkeys(n - 1 for n in item["sources"])))
        for item in reply["memories"]
    )
    return Reconstruction(statements=statements, coverage=reply["coverage"], fallback=False)


def write_prompt(related: Sequence[str], new: Sequence[str]) -> str:
    """The user prompt: numbered related memories, then the numbered new contents (HAEMA's tags)."""
    first = [f"[{i}] {text}" for i, text in enumerate(related, start=1)]
    second = [f"[{i}] {text}" for i, text in enumerate(new, start=len(related) + 1)]
    return (
        "<related_memories>\n" + "\n".join(first) + "\n</related_memories>\n"
        "<new_contents>\n" + "\n".join(second) + "\n</new_contents>"
    )


def _unchanged(new: Sequence[str], offset: int, reason: str) -> Reconstruction:
    return Reconstruction(
        statements=tuple(Statement(text, (offset + i,)) for i, text in enumerate(new)),
        coverage="complete",
        fallback=True,
        reason=reason,
    )


def _check_units(value: dict[str, Any]) -> list[str]:
    errors = []
    for index, unit in enumerate(value["contents"]):
        threat = first_threat(unit, "strict")
        if threat is not None:
            errors.append(f"$.contents[{index}]: refused ({threat.pattern_id})")
    return errors


def _check_write(value: dict[str, Any], related: int, new: int) -> list[str]:
    # HAEMA: an empty or self-declared incomplete reconstruction is refined once, then abandoned.
    errors = []
    total = related + new
    if not value["memories"]:
        errors.append("$.memories: must not be empty when there are new contents")
    if value["coverage"] != "complete":
        errors.append('$.coverage: "incomplete" — preserve every important fact of the new contents')
    cited: set[int] = set()
    for index, item in enumerate(value["memories"]):
        for number in item["sources"]:
            if not 1 <= number <= total:
                errors.append(f"$.memories[{index}].sources: {number} is not an input number (1..{total})")
            cited.add(number)
        threat = first_threat(item["text"], "strict")
        if threat is not None:
            errors.append(f"$.memories[{index}].text: refused ({threat.pattern_id})")
    missing = [n for n in range(related + 1, total + 1) if n not in cited]
    if missing and value["memories"]:
        errors.append(f"$.memories: new content(s) {missing} are cited by no entry")
    return errors


__all__ = [
    "PRESPLIT_SCHEMA",
    "WRITE_SCHEMA",
    "Split",
    "presplit",
    "reconstruct_write",
    "write_prompt",
]
