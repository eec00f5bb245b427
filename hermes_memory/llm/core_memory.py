"""HAEMA's core memory: a few durable, high-impact bullets in four sections (SOUL, TOOLS, RULE, USER),
updated conservatively by the LLM and only when its proposal is valid.

Where it lives: a small JSON file under the profile's memory directory (``llm.core_memory_path``,
default ``{HERMES_HOME}/{profile}/memory/core_memory.json``), written atomically. Not Tier 2 facts: core
memory is one small ordered, sectioned document whose bullets are chosen as a whole, while facts are
extracted, deduplicated, superseded, decayed and pruned one by one — that lifecycle would silently
rewrite it. And never Hermes' MEMORY.md/USER.md: those belong to the user and Hermes' own memory tool;
a host may show the rendered core (``CoreMemory.render``) but nothing here writes Tier 1.

The update: the model sees the current bullets (with ids) and candidate new memories, and proposes
operations — ``add`` (section + text), ``remove`` (id), ``keep`` (id; anything not named is kept).
A proposal is applied only if every operation is valid: known ids, one of the four sections,
one line, no duplicate, no threat pattern (the bullets are meant for a system prompt), and the soft
budget — an add may not push a section past ``budget`` bullets. The budget is soft in that a section
already over it (edited by hand) is never trimmed automatically. An invalid proposal is refined once,
then rejected, leaving the core unchanged.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_memory.errors import StorageError
from hermes_memory.llm.client import JSONSchema, LLMError
from hermes_memory.llm.structured import StructuredLLM
from hermes_memory.security.permissions import private_dir
from hermes_memory.security.threats import first_threat

log = logging.getLogger(__name__)

SECTIONS: tuple[str, ...] = ("SOUL", "TOOLS", "RULE", "USER")
DEFAULT_BUDGET = 8
MAX_BULLET_CHARS = 300
MAX_CANDIDATES = 50
FORMAT_VERSION = 1

CORE_UPDATE_SCHEMA: JSONSchema = {
    "type": "object",
    "required": ["should_update", "operations"],
    "properties": {
        "should_update": {"type": "boolean"},
        "operations": {
            "type": "array",
            "maxItems": 20,
            "items": {
                "type": "object",
                "required": ["op"],
                "properties": {
                    "op": {"enum": ["add", "keep", "remove"]},
                    "id": {"type": "string", "maxLength": 20},
                    "section": {"enum": list(SECTIONS)},
                    "text": {"type": "string", "minLength": 1, "maxLength": MAX_BULLET_CHARS},
                },
            },
        },
    },
}

SYSTEM_PROMPT = (
    "You maintain an agent's core memory: the few facts it must always have in mind.\n"
    "Keep only information that is (1) durable across sessions, (2) materially changes how the agent "
    "should behave, and (3) high-confidence, grounded in the candidate memories.\n"
    "Route each bullet to exactly one section: SOUL (the agent's identity, persona, tone), TOOLS (tools "
    "and environments and how to use them), RULE (standing instructions and policies from the user), "
    "USER (durable facts about the user).\n"
    "Exclude temporary, session-only and low-signal information. Keep each section to about {budget} "
    "bullets; merge or remove outdated bullets instead of growing.\n"
    "Be conservative: set should_update to false unless a durable, high-impact update exists.\n"
    "Operations: add {{section, text}} for a new one-line bullet; remove {{id}} for a bullet that is "
    "outdated or contradicted; keep {{id}} is optional (bullets you do not name are kept)."
)


@dataclass(frozen=True)
class CoreMemory:
    """The bullets of each section (in order) and when the core was last changed (Unix seconds)."""

    sections: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: {s: () for s in SECTIONS})
    updated_at: float | None = None

    def bullets(self) -> list[tuple[str, str, str]]:
        """(id, section, text) for every bullet; ids look like "USER-2" and are stable within a version."""
        return [
            (f"{section}-{index}", section, text)
            for section in SECTIONS
            for index, text in enumerate(self.sections.get(section, ()), start=1)
        ]

    def count(self, section: str) -> int:
        return len(self.sections.get(section, ()))

    def render(self) -> str:
        """Markdown with one ``## SECTION`` heading per non-empty section ('' when empty)."""
        blocks = [
            f"## {section}\n" + "\n".join(f"- {text}" for text in self.sections.get(section, ()))
            for section in SECTIONS
            if self.sections.get(section)
        ]
        return "\n\n".join(blocks)

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": FORMAT_VERSION,
            "sections": {s: list(self.sections.get(s, ())) for s in SECTIONS},
            "updated_at": self.updated_at,
        }


class CoreMemoryStore:
    """Reads and atomically writes the core memory JSON file. A missing file is an empty core."""

    def __init__(self, path: str | os.PathLike[str]):
        self.path = Path(path)

    def load(self) -> CoreMemory:
        """The stored core. Raises StorageError for an unreadable or malformed file (never overwritten)."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return CoreMemory()
        except OSError as exc:
            raise StorageError(f"cannot read core memory {self.path}: {exc}") from exc
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise StorageError(f"core memory {self.path} is not valid JSON: {exc}") from exc
        sections = data.get("sections") if isinstance(data, dict) else None
        if not isinstance(sections, dict) or not all(
            isinstance(v, list) and all(isinstance(t, str) for t in v) for v in sections.values()
        ):
            raise StorageError(f"core memory {self.path} has no valid 'sections' mapping")
        unknown = set(sections) - set(SECTIONS)
        if unknown:
            raise StorageError(
                f"core memory {self.path} has unknown section(s): {', '.join(sorted(unknown))}"
            )
        updated = data.get("updated_at")
        return CoreMemory(
            sections={s: tuple(sections.get(s, [])) for s in SECTIONS},
            updated_at=float(updated) if isinstance(updated, int | float) else None,
        )

    def save(self, core: CoreMemory) -> None:
        """Replace the file atomically (temp file, fsync, rename). Raises StorageError on failure."""
        payload = json.dumps(core.to_dict(), ensure_ascii=False, indent=2) + "\n"
        try:
            private_dir(self.path.parent)
            fd, tmp = tempfile.mkstemp(prefix=".core_memory.", suffix=".tmp", dir=self.path.parent)  # 0600
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    fh.write(payload)
                    fh.flush()
                    os.fsync(fh.fileno())
                os.replace(tmp, self.path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError as exc:
            raise StorageError(f"cannot write core memory {self.path}: {exc}") from exc


@dataclass(frozen=True)
class CoreUpdate:
    """The outcome: the (possibly unchanged) core, whether it changed, the applied operations, and
    ``fallback``/``reason`` when the LLM was off, failed or proposed something invalid."""

    core: CoreMemory
    updated: bool
    applied: tuple[dict[str, str], ...] = ()
    fallback: bool = False
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "updated": self.updated,
            "applied": [dict(op) for op in self.applied],
            "fallback": self.fallback,
            "reason": self.reason,
            "core": self.core.to_dict(),
            "markdown": self.core.render(),
        }


def check_proposal(core: CoreMemory, proposal: Mapping[str, Any], budget: int) -> list[str]:
    """Why a (schema-valid) proposal cannot be applied to ``core``; empty when it can."""
    if not proposal["should_update"]:
        return []
    ids = {bullet_id: section for bullet_id, section, _ in core.bullets()}
    existing = {" ".join(text.split()).casefold() for _, _, text in core.bullets()}
    counts = {s: core.count(s) for s in SECTIONS}
    named: dict[str, str] = {}
    errors: list[str] = []
    for index, op in enumerate(proposal["operations"]):
        where = f"$.operations[{index}]"
        kind = op["op"]
        if kind == "add":
            section, text = op.get("section"), op.get("text")
            if section is None or not isinstance(text, str):
                errors.append(f"{where}: add needs a section and a text")
                continue
            line = " ".join(text.split())
            if "\n" in text.strip():
                errors.append(f"{where}.text: a bullet is one line")
            if line.casefold() in existing:
                errors.append(f"{where}.text: duplicates an existing bullet")
            threat = first_threat(line, "strict")
            if threat is not None:
                errors.append(f"{where}.text: refused ({threat.pattern_id}); bullets enter a system prompt")
            existing.add(line.casefold())
            counts[section] += 1
        else:
            bullet_id = op.get("id")
            if bullet_id not in ids:
                errors.append(f"{where}.id: {bullet_id!r} is not a current bullet id")
                continue
            if named.get(bullet_id, kind) != kind:
                errors.append(f"{where}: {bullet_id} is both kept and removed")
            named[bullet_id] = kind
            if kind == "remove":
                counts[ids[bullet_id]] -= 1
    for section in SECTIONS:
        if counts[section] > budget and counts[section] > core.count(section):
            errors.append(
                f"section {section} would have {counts[section]} bullets; the budget is {budget} — "
                "merge or remove bullets, or add fewer"
            )
    return errors


def apply_proposal(
    core: CoreMemory, proposal: Mapping[str, Any], at: float
) -> tuple[CoreMemory, tuple[dict[str, str], ...]]:
    """The core after a checked proposal, and the operations that changed something."""
    if not proposal["should_update"]:
        return core, ()
    removed = {op["id"] for op in proposal["operations"] if op["op"] == "remove"}
    sections = {s: list(core.sections.get(s, ())) for s in SECTIONS}
    applied: list[dict[str, str]] = []
    for bullet_id, section, text in core.bullets():
        if bullet_id in removed:
            sections[section].remove(text)
            applied.append({"op": "remove", "id": bullet_id, "section": section, "text": text})
    for op in proposal["operations"]:
        if op["op"] == "add":
            line = " ".join(op["text"].split())
            sections[op["section"]].append(line)
            applied.append({"op": "add", "section": op["section"], "text": line})
    if not applied:
        return core, ()
    return CoreMemory({s: tuple(v) for s, v in sections.items()}, updated_at=at), tuple(applied)


def update_core(
    llm: StructuredLLM | None,
    core: CoreMemory,
    candidates: Sequence[str],
    *,
    budget: int = DEFAULT_BUDGET,
    clock: Callable[[], float] = time.time,
) -> CoreUpdate:
    """Ask the LLM for a conservative update of ``core`` from ``candidates``; apply it only if valid.

    Never raises because of the LLM: when it is off (None), fails, or keeps proposing something
    invalid, the core comes back unchanged with ``fallback=True`` and a reason (logged as a warning).
    """
    memories = [" ".join(c.split()) for c in candidates if c and c.strip()][:MAX_CANDIDATES]
    if not memories:
        return CoreUpdate(core=core, updated=False, reason="no candidate memories")
    if llm is None:
        return CoreUpdate(core=core, updated=False, fallback=True, reason="llm disabled")
    try:
        proposal = llm.generate(
            SYSTEM_PROMPT.format(budget=budget),
            prompt(core, memories, budget),
            CORE_UPDATE_SCHEMA,
            check=lambda value: check_proposal(core, value, budget),
        )
    except LLMError as exc:
        log.warning("core memory update rejected (%s: %s); core memory unchanged", exc.kind, exc)
        return CoreUpdate(core=core, updated=False, fallback=True, reason=f"{exc.kind}: {exc}"[:500])
    new_core, applied = apply_proposal(core, proposal, clock())
    return CoreUpdate(core=new_core, updated=bool(applied), applied=applied)


def prompt(core: CoreMemory, candidates: Sequence[str], budget: int) -> str:
    """The user prompt: the current bullets with ids and counts, and the candidate memories."""
    lines = ["<current_core>"]
    for section in SECTIONS:
        lines.append(f"{section} ({core.count(section)}/{budget}):")
        lines.extend(f"  [{bid}] {text}" for bid, sec, text in core.bullets() if sec == section)
    lines.append("</current_core>")
    lines.append("<candidate_new_memories>")
    lines.extend(f"- {c}" for c in candidates)
    lines.append("</candidate_new_memories>")
    return "\n".join(lines)


__all__ = [
    "CORE_UPDATE_SCHEMA",
    "DEFAULT_BUDGET",
    "SECTIONS",
    "SYSTEM_PROMPT",
    "CoreMemory",
    "CoreMemoryStore",
    "CoreUpdate",
    "apply_proposal",
    "check_proposal",
    "prompt",
    "update_core",
]
