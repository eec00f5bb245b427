"""Read-time query decomposition (config ``llm.query_decomposition``): the LLM splits a question into at
most ``MAX_SUB_QUERIES`` self-contained sub-queries, so a list or multi-hop question whose evidence sits
in several unrelated turns gets one recall per part (``core.recall`` fuses them).

A pure function of an optional ``StructuredLLM`` like the write path's stages: it never raises because of
the LLM. When the model fails (timeout, transport, invalid JSON after the retries and the one refinement)
the result is a fallback with its reason, and the caller recalls the question as asked — and says so.
After a transport failure the circuit breaker skips the LLM for a while (a dead endpoint must not add
``timeout_s`` x retries to every recall).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from hermes_memory.llm.breaker import TRIPPING_KINDS, CircuitBreaker
from hermes_memory.llm.client import JSONSchema, LLMError
from hermes_memory.llm.structured import StructuredLLM
from hermes_memory.security.threats import first_threat

log = logging.getLogger(__name__)

MAX_SUB_QUERIES = 4
MAX_QUERY_CHARS = 300

DECOMPOSE_SCHEMA: JSONSchema = {
    "type": "object",
    "required": ["queries"],
    "properties": {
        "queries": {
            "type": "array",
            "maxItems": MAX_SUB_QUERIES,
            "items": {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS},
        }
    },
}

DECOMPOSE_PROMPT = (
    "You prepare searches over an agent's long-term memory of conversations.\n"
    f"Split the question into at most {MAX_SUB_QUERIES} short, self-contained search queries when "
    "answering it needs several separate memories: a list or count ('what activities…', 'how many…'), "
    "several people or events, or a chain of facts. Each query names the people it is about (no "
    "pronouns) and one thing to look for; for a category, search for the kinds of concrete instances "
    "that would belong to it. Do not answer the question and do not invent facts. Return an empty list "
    "when the question is already one simple search."
)


@dataclass(frozen=True)
class Decomposition:
    """A question's sub-queries (empty: recall it as asked); ``fallback`` with its ``reason`` when the
    LLM failed or was skipped."""

    queries: tuple[str, ...]
    fallback: bool = False
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"queries": list(self.queries), "fallback": self.fallback, "reason": self.reason}


def decompose(llm: StructuredLLM, question: str, breaker: CircuitBreaker | None = None) -> Decomposition:
    """The sub-queries of ``question`` (distinct, none equal to the question itself), or a fallback with
    its reason when the LLM fails or the ``breaker`` is open (logged). Never raises because of the LLM."""
    if breaker is not None and breaker.is_open():
        return Decomposition((), fallback=True, reason="skipped: the LLM failed recently (circuit open)")
    try:
        reply = llm.generate(DECOMPOSE_PROMPT, f"<question>\n{question}\n</question>", DECOMPOSE_SCHEMA,
                             check=_check_queries)  # fmt: skip
    except LLMError as exc:
        log.warning("query decomposition failed (%s: %s); recalling the question as asked", exc.kind, exc)
        if breaker is not None and exc.kind in TRIPPING_KINDS:
            breaker.trip()
        return Decomposition((), fallback=True, reason=f"{exc.kind}: {exc}"[:500])
    asked = _key(question)
    distinct: dict[str, str] = {}
    for text in reply["queries"]:
        query = " ".join(text.split())
        if _key(query) != asked:
            distinct.setdefault(_key(query), query)
    return Decomposition(tuple(distinct.values()))


def _key(text: str) -> str:
    return " ".join(text.casefold().split()).rstrip("?.! ")


def _check_queries(value: dict[str, Any]) -> list[str]:
    errors = []
    for index, query in enumerate(value["queries"]):
        threat = first_threat(query, "strict")
        if threat is not None:
            errors.append(f"$.queries[{index}]: refused ({threat.pattern_id})")
    return errors


__all__ = ["DECOMPOSE_PROMPT", "DECOMPOSE_SCHEMA", "MAX_SUB_QUERIES", "Decomposition", "decompose"]
