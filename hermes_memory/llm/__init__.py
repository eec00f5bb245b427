"""The optional LLM path (off by default, never required): structured extraction after each turn,
HAEMA's N:M reconstruction and the conservative core-memory update, each with retries, one refinement
pass and a safe fallback to the rule-based result."""

from hermes_memory.llm.client import LLMClient, LLMError, OpenAICompatibleClient
from hermes_memory.llm.structured import StructuredLLM

__all__ = ["LLMClient", "LLMError", "OpenAICompatibleClient", "StructuredLLM"]
