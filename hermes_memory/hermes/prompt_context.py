"""The provider's system-prompt block (seed §9.5): the static instructions, then the few facts that
matter most, within a small character budget.

The block is assembled in ONE function, ``assemble``, from separate ``Section`` s (a heading and its
lines); ``memory_sections`` gives today's two — the user's most important facts (Tier 2, by importance ×
confidence; curated entries are left out, Hermes already shows MEMORY.md/USER.md) and the most central
entities of the knowledge graph — and another kind of section (e.g. core memory) is one more entry in
that list. Every line is stored text, so it is checked like a recalled line (a flagged one is left
out) and quoted by ``security.fence`` like every other text handed to the model.

``PromptContext`` computes the sections off the hot path (a thread started at ``initialize``) and pins
the block per session: Hermes builds the system prompt once per session and again after compression,
and the same text keeps its prompt cache warm. A cold store never blocks the prompt: what is not ready
within the wait is left out for that session (the static instructions alone).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hermes_memory._exit_guard import finish_before_exit
from hermes_memory.errors import HermesMemoryError
from hermes_memory.hermes import safety
from hermes_memory.security import fence
from hermes_memory.security.secrets import redact_secrets

if TYPE_CHECKING:
    from hermes_memory.core.memory import Memory
    from hermes_memory.hermes.registry import SharedStore
    from hermes_memory.records import Entity

log = logging.getLogger(__name__)

# What Hermes already shows in the system prompt (MEMORY.md / USER.md, mirrored into Tier 2 as facts).
_CURATED_SOURCES = ("memory", "curated")  # mirrored writes; MEMORY.md/USER.md read at first activation
_USER_CATEGORIES = ("user", "preference", "relationship")
_USER_SUBJECTS = ("the user", "user")
FACTS_TITLE = "What you know about the user (from earlier sessions)"
ENTITIES_TITLE = "People and things that matter most"
_SECTION_ITEMS = 5
_MIN_CONFIDENCE = 0.6


@dataclass(frozen=True, slots=True)
class Section:
    """One part of the block: a heading and its lines (stored text, quoted when assembled)."""

    title: str
    lines: tuple[str, ...]


def assemble(intro: str, sections: Sequence[Section], budget_chars: int) -> str:
    """The system-prompt block: ``intro`` (our own constant text), then each section that has a line
    left within ``budget_chars`` (the sections' characters, headings included), in order; each line
    quoted by ``security.fence`` and dropped when the injection scan flags it."""
    parts = [intro]
    used = 0
    for section in sections:
        heading = f"## {section.title}"
        kept: list[str] = []
        cost = len(heading) + 2  # the blank line before it
        for line in section.lines:
            if not safety.is_clean_for_context(line):
                continue
            text = f"- {fence.quote(' '.join(line.split()))}"
            if used + cost + len(text) + 1 > budget_chars:
                break
            kept.append(text)
            cost += len(text) + 1
        if kept:
            parts.append("\n".join([heading, *kept]))
            used += cost
    return "\n\n".join(parts)


def memory_sections(core: Memory, *, user_name: str | None, limit: int = _SECTION_ITEMS) -> list[Section]:
    """The user's most important facts and the most central entities (without the user), as sections.
    Raises what the stores raise (StorageError, ...)."""
    names = (*_USER_SUBJECTS, *((user_name,) if user_name else ()))
    facts = core.knowledge.most_important_facts(
        limit=limit, categories=_USER_CATEGORIES, subjects=names,
        exclude_source_types=_CURATED_SOURCES, min_confidence=_MIN_CONFIDENCE,
    )  # fmt: skip
    redact = core.config.security.redact_secrets
    fact_lines = tuple(redact_secrets(f.content) if redact else f.content for f in facts)
    # Degree centrality read from Tier 2: loading the graph (NetworkX) would cost a one-shot process
    # more than its whole turn.
    central = core.knowledge.central_entities(limit=limit, exclude_names=names)
    return [Section(FACTS_TITLE, fact_lines), Section(ENTITIES_TITLE, tuple(map(_entity_line, central)))]


def _entity_line(entity: Entity) -> str:
    also = f"; also: {', '.join(entity.aliases[:2])}" if entity.aliases else ""
    return f"{entity.name} ({entity.entity_type}{also})"


class PromptContext:
    """The block for one provider: computed in a background thread, pinned per session."""

    def __init__(
        self, shared: SharedStore, intro: str, *, user_name: str | None, budget_chars: int, wait_s: float
    ) -> None:
        self._shared = shared
        self._intro = intro
        self._user_name = user_name
        self._budget = budget_chars
        self._wait_s = wait_s
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._text = intro
        self._pinned: dict[str, str] = {}

    def start(self) -> None:
        """Compute the sections in the background (no-op with a zero budget)."""
        if self._budget <= 0:
            self._ready.set()
            return
        thread = threading.Thread(target=self._compute, name="nextlevel-prompt", daemon=True)
        finish_before_exit(thread)  # not in SQLite or the graph while the interpreter finalises
        if not self._shared.start_thread(thread):
            self._ready.set()  # the store is closing: the block is the intro alone

    def _compute(self) -> None:
        try:
            sections = memory_sections(self._shared.api.core, user_name=self._user_name)
            text = assemble(self._intro, sections, self._budget)
        except HermesMemoryError as exc:
            if not self._shared.closed.is_set():
                log.warning("nextlevel: could not build the prompt context: %s", exc)
            text = self._intro
        with self._lock:
            self._text = text
        self._ready.set()

    def block(self, session_id: str) -> str:
        """The block for ``session_id``: the same text for the whole session. Waits at most ``wait_s``
        for the first computation; what is not ready then stays out for this session."""
        with self._lock:
            pinned = self._pinned.get(session_id)
        if pinned is not None:
            return pinned
        self._ready.wait(self._wait_s)
        with self._lock:
            return self._pinned.setdefault(session_id, self._text)

    def refresh(self) -> None:
        """Compute again for the next session (a new session may see what the last one taught)."""
        with self._lock:
            if not self._ready.is_set():
                return  # the first computation is still running; the next session gets its result
            self._ready.clear()
        self.start()


__all__ = ["ENTITIES_TITLE", "FACTS_TITLE", "PromptContext", "Section", "assemble", "memory_sections"]
