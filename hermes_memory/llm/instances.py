"""Write-time instance extraction (config ``llm.instance_extraction``): the concrete things a speaker
mentions — an activity, an event, an item, a place — with the general categories a later question
may use for them ("a wine tasting" → indoor activity, date activity, hobby).

A question names a category ("what indoor activities has Jon done?") while the evidence names
instances, in other sessions; neither BM25 nor the embedder links the two. The LLM does, once, at write
time: each instance becomes a Tier 2 fact whose text carries the category words
(``Jon: wine tasting — indoor activity, date activity, hobby; with his girlfriend``) and whose source is
the turn, so the fact's BM25 and vector match the category and its hit maps back to the turn
(``Hit.source_ids``). It rides on the extraction call (one LLM call per turn): the schema gains an
``instances`` list and the prompt one rule.

Conservative like the other LLM facts: never exclusive (nothing is superseded), the instance must be
words of the message it cites and ``who`` a speaker or a name in the turn, the AI's words are no
evidence about anyone else, a text carrying an injection pattern is dropped, duplicates are skipped.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hermes_memory.llm.client import JSONSchema
from hermes_memory.records import Episode
from hermes_memory.security.threats import first_threat

MAX_INSTANCES = 20
MAX_CATEGORIES = 6
MAX_ATTRIBUTES = 4
# The fact's category and predicate: an instance is no statement about the user's profile.
FACT_CATEGORY = "general"
PREDICATE = "mentions"
_SPACE = re.compile(r"\s+")
_LOOSE = re.compile(r"[^0-9a-z]+")

INSTANCES_PROPERTY: JSONSchema = {
    "type": "array",
    "maxItems": MAX_INSTANCES,
    "items": {
        "type": "object",
        "required": ["instance", "categories", "who"],
        "properties": {
            "instance": {"type": "string", "minLength": 1, "maxLength": 100},
            "categories": {
                "type": "array",
                "minItems": 1,
                "maxItems": MAX_CATEGORIES,
                "items": {"type": "string", "minLength": 1, "maxLength": 60},
            },
            "who": {"type": "string", "minLength": 1, "maxLength": 100},
            "attributes": {
                "type": "array",
                "maxItems": MAX_ATTRIBUTES,
                "items": {"type": "string", "minLength": 1, "maxLength": 80},
            },
            "when": {"type": ["string", "null"], "maxLength": 60},
            "message": {"type": "integer", "minimum": 1},
        },
    },
}

PROMPT_RULE = (
    "- Instances: every concrete activity, event, item, place, book, pet or other thing a person says "
    "they did, have, made, like or plan (e.g. 'wine tasting', 'volunteering at the shelter', 'Charlotte's "
    "Web'). instance: the words of the message naming it; categories: 1-6 general classes a question "
    "might ask about instead (e.g. 'indoor activity', 'date activity', 'hobby', 'children's book', "
    "'pet'); who: the person it belongs to; attributes: up to 4 short phrases such as with whom or "
    "where; when: the time as said, or null; message: the [number] of the message it comes from."
)


@dataclass(frozen=True, slots=True)
class InstanceDraft:
    """An instance the LLM names (texts with runs of whitespace collapsed, empty parts dropped)."""

    instance: str
    categories: tuple[str, ...]
    who: str
    attributes: tuple[str, ...] = ()
    when: str | None = None
    message: int | None = None

    @property
    def text(self) -> str:
        """The fact's text: who, the instance, its categories, then its attributes and time."""
        tail = [*self.attributes, *([self.when] if self.when else [])]
        extra = "; " + "; ".join(tail) if tail else ""
        return f"{self.who}: {self.instance} — {', '.join(self.categories)}{extra}"


def instance_drafts(reply: dict[str, Any]) -> tuple[InstanceDraft, ...]:
    """The instances of a reply that passed the schema with ``INSTANCES_PROPERTY`` (none when absent)."""
    out = []
    for item in reply.get("instances") or []:
        when = item.get("when")
        out.append(
            InstanceDraft(
                instance=_clean(item["instance"]),
                categories=_distinct(item["categories"]),
                who=_clean(item["who"]),
                attributes=_distinct(item.get("attributes") or []),
                when=(_clean(when) or None) if isinstance(when, str) else None,
                message=item.get("message") if isinstance(item.get("message"), int) else None,
            )
        )
    return tuple(out)


def check_messages(value: dict[str, Any], messages: int) -> list[str]:
    """Errors for instances citing a message number the turn does not have."""
    errors = []
    for index, item in enumerate(value.get("instances") or []):
        number = item.get("message")
        if isinstance(number, int) and not 1 <= number <= messages:
            errors.append(f"$.instances[{index}].message: {number} is not a message number (1..{messages})")
    return errors


def grounded_source(draft: InstanceDraft, episodes: Sequence[Episode]) -> tuple[Episode, ...] | None:
    """The episodes an instance is grounded in, or None to drop it: its words must be in the message
    it cites (any message of the turn when it cites none), ``who`` a speaker or a name in the turn but
    never the assistant, never an assistant's message alone, and no text may carry an injection pattern."""
    index = draft.message
    source = (episodes[index - 1],) if index is not None and index <= len(episodes) else tuple(episodes)
    said = _loose(" ".join(e.text for e in source))
    if not draft.instance or not draft.categories or _loose(draft.instance) not in said:
        return None
    speakers = {e.speaker.casefold() for e in episodes if e.speaker}
    who = draft.who.casefold()
    if who not in speakers and _loose(draft.who) not in _loose(" ".join(e.text for e in episodes)):
        return None
    assistants = {(e.speaker or "the assistant").casefold() for e in episodes if e.role == "assistant"}
    if (len(source) == 1 and source[0].role == "assistant") or who in assistants:
        return None  # the AI's words are no evidence, and the AI is no subject
    if first_threat(draft.text, "strict") is not None:
        return None
    return source


def _loose(text: str) -> str:
    """Case and punctuation folded away ("Wine-tasting!" matches "wine tasting"), padded by spaces so
    a containment test matches whole words only."""
    return f" {_LOOSE.sub(' ', text.casefold()).strip()} "


def _clean(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


def _distinct(texts: Sequence[str]) -> tuple[str, ...]:
    kept: dict[str, str] = {}
    for text in map(_clean, texts):
        if text:
            kept.setdefault(text.casefold(), text)
    return tuple(kept.values())


__all__ = [
    "FACT_CATEGORY",
    "INSTANCES_PROPERTY",
    "MAX_INSTANCES",
    "PREDICATE",
    "PROMPT_RULE",
    "InstanceDraft",
    "check_messages",
    "grounded_source",
    "instance_drafts",
]
