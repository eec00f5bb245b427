"""The optional LLM path (off by default, never required): structured extraction after each turn (with
the turn's instances and their categories), read-time query decomposition (opt-in), HAEMA's N:M
reconstruction and the conservative core-memory update, each with retries, one refinement pass and a
safe fallback to the rule-based result."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_memory._lazy import lazy_exports

if TYPE_CHECKING:
    from hermes_memory.llm.client import LLMClient, LLMError, OpenAICompatibleClient
    from hermes_memory.llm.structured import StructuredLLM

# Resolved on first use: importing a submodule (``llm.wiring``, which MemoryAPI needs with the LLM off)
# must not load the HTTP client.
_EXPORTS = {
    "LLMClient": "hermes_memory.llm.client",
    "LLMError": "hermes_memory.llm.client",
    "OpenAICompatibleClient": "hermes_memory.llm.client",
    "StructuredLLM": "hermes_memory.llm.structured",
}


__getattr__ = lazy_exports(__name__, _EXPORTS)


__all__ = ["LLMClient", "LLMError", "OpenAICompatibleClient", "StructuredLLM"]
