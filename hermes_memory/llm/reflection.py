"""Engram's LLM passes over episodes: ``summarise`` (compress: a batch of old turns into one summary)
and ``insights`` (reflect: higher-level statements over recent turns, each citing the turns it rests on).

Both validate the reply (schema + every cited number names an input) through ``StructuredLLM`` and raise
``LLMError`` when the model cannot give a valid answer: nothing is stored then (the caller reports it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hermes_memory.llm.client import JSONSchema
from hermes_memory.llm.structured import StructuredLLM

MAX_LINE_CHARS = 1500
MAX_SUMMARY_CHARS = 4000
MAX_INSIGHTS = 10

SUMMARY_SCHEMA: JSONSchema = {
    "type": "object",
    "required": ["summary"],
    "properties": {"summary": {"type": "string", "minLength": 1, "maxLength": MAX_SUMMARY_CHARS}},
}
INSIGHT_SCHEMA: JSONSchema = {
    "type": "object",
    "required": ["insights"],
    "properties": {
        "insights": {
            "type": "array",
            "maxItems": MAX_INSIGHTS,
            "items": {
                "type": "object",
                "required": ["text", "sources"],
                "properties": {
                    "text": {"type": "string", "minLength": 1, "maxLength": 1000},
                    "sources": {"type": "array", "minItems": 1, "items": {"type": "integer", "minimum": 1}},
                },
            },
        }
    },
}

SUMMARY_PROMPT = (
    "You compress an agent's old conversation memories.\n"
    "Summarise the numbered messages into one short paragraph that keeps every durable fact (names, "
    "places, dates, decisions, preferences, plans) and drops small talk. Never add anything that is not in "
    "the messages. Reply with a JSON object {\"summary\": \"...\"}."
)
INSIGHT_PROMPT = (
    "You reflect on an agent's recent memories.\n"
    "From the numbered messages, write a few higher-level insights (patterns, lasting preferences, goals, "
    "changes) that are supported by the messages; each insight is one self-contained sentence that names "
    "who it is about. List in `sources` the numbers of the messages it rests on. Write no insight the "
    'messages do not support; an empty list is a valid answer. Reply with {"insights": [...]}.'
)


@dataclass(frozen=True, slots=True)
class Insight:
    """One insight and the (0-based) indices of the inputs it rests on."""

    text: str
    sources: tuple[int, ...]


def numbered(lines: Sequence[str]) -> str:
    return "\n".join(f"{i}. {line[:MAX_LINE_CHARS]}" for i, line in enumerate(lines, start=1))


def summarise(llm: StructuredLLM, lines: Sequence[str]) -> str:
    """One paragraph summarising ``lines``. Raises LLMError."""
    reply = llm.generate(SUMMARY_PROMPT, f"<messages>\n{numbered(lines)}\n</messages>", SUMMARY_SCHEMA)
    return str(reply["summary"]).strip()


def insights(llm: StructuredLLM, lines: Sequence[str]) -> list[Insight]:
    """Insights over ``lines``, each citing the lines it rests on. Raises LLMError."""
    count = len(lines)

    def cited_inputs(value: dict[str, Any]) -> list[str]:
        return [
            f"$.insights[{i}].sources: {n} names no message (1..{count})"
            for i, item in enumerate(value["insights"])
            for n in item["sources"]
            if not 1 <= n <= count
        ]

    reply = llm.generate(
        INSIGHT_PROMPT, f"<messages>\n{numbered(lines)}\n</messages>", INSIGHT_SCHEMA, check=cited_inputs
    )
    return [
        Insight(str(item["text"]).strip(), tuple(dict.fromkeys(n - 1 for n in item["sources"])))
        for item in reply["insights"]
    ]


__all__ = ["INSIGHT_SCHEMA", "SUMMARY_SCHEMA", "Insight", "insights", "numbered", "summarise"]
