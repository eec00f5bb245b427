"""How MemoryAPI plugs the optional LLM in: the ingestion hooks and the structured caller, from config.

With ``llm.enabled: false`` (the default) nothing here builds a client and no LLM is ever called.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from hermes_memory.config import LLMConfig
from hermes_memory.errors import ConfigError
from hermes_memory.ingest.knowledge import RuleBasedKnowledge

if TYPE_CHECKING:
    from hermes_memory.ingest.worker import AfterCommit, KnowledgeWriter
    from hermes_memory.llm.client import LLMClient
    from hermes_memory.llm.structured import StructuredLLM
    from hermes_memory.records import Fact
    from hermes_memory.tier2 import Tier2
    from hermes_memory.tier3.semantic import SemanticMemory

# The client, extraction and structured modules load only when the LLM is on: with it off (the
# default) a Hermes process never imports them.


def llm_client(config: LLMConfig, hermes_home: str | None = None) -> LLMClient | None:
    """The configured client, or None when the LLM is off: with ``use_hermes_model`` the model Hermes
    is configured with in ``hermes_home`` (``llm.hermes_model``), else ``base_url``/``model``.
    Raises ConfigError for a bad endpoint or a Hermes model that cannot be used."""
    if not config.enabled:
        return None
    if config.use_hermes_model:
        if hermes_home is None:
            raise ConfigError("llm.use_hermes_model needs the Hermes home whose config.yaml names the model")
        from hermes_memory.llm.hermes_model import hermes_model_client

        return hermes_model_client(hermes_home, timeout_s=config.timeout_s)
    from hermes_memory.llm.client import client_from_config

    return client_from_config(
        config.base_url, config.model, api_key_env=config.api_key_env, timeout_s=config.timeout_s
    )


def structured_llm(
    config: LLMConfig, client: LLMClient | None = None, hermes_home: str | None = None
) -> StructuredLLM | None:
    """Retries + validation + refinement around the given (or configured) client; None when off."""
    chosen = client if client is not None else llm_client(config, hermes_home)
    if chosen is None:
        return None
    from hermes_memory.llm.structured import StructuredLLM

    return StructuredLLM(chosen, max_retries=config.max_retries)


def ingest_hooks(
    config: LLMConfig,
    tier2: Tier2,
    semantic: SemanticMemory | None,
    after_commit: AfterCommit,
    *,
    client: LLMClient | None = None,
    hermes_home: str | None = None,
    on_facts: Callable[[list[Fact]], object] | None = None,
) -> tuple[KnowledgeWriter, AfterCommit]:
    """The ingestor's knowledge writer and after-commit hook.

    LLM off (and no ``client`` given): the rule-based writer and ``after_commit`` unchanged. On: an
    ``LLMKnowledge`` (rules inside the transaction) and a hook that runs ``after_commit`` and then the
    LLM step (``on_facts`` gets the facts the LLM added to a turn, after their commit; with
    ``instance_extraction`` the same call also names the turn's instances, see ``llm.instances``). Raises
    ConfigError for a bad endpoint configuration.
    """
    rules = RuleBasedKnowledge(semantic)
    chosen = client if client is not None else llm_client(config, hermes_home)
    if chosen is None:
        return rules, after_commit
    from hermes_memory.llm.extraction import LLMKnowledge

    model = config.model or str(getattr(chosen, "model", "") or "custom")
    knowledge = LLMKnowledge(
        rules, chosen, model=model, semantic=semantic, max_retries=config.max_retries, on_facts=on_facts,
        instances=config.instance_extraction,
    )  # fmt: skip
    return knowledge, knowledge.after_commit(tier2, after_commit)


__all__ = ["ingest_hooks", "llm_client", "structured_llm"]
