"""The provider settings (nextlevel.yaml) the Hermes unit tests share: the hashing embedder and the
in-process vector backend, so a provider opens in milliseconds, and a long prefetch wait, so a test
reads the answer rather than a timeout."""

from __future__ import annotations

FAST_PROVIDER_YAML = """\
provider:
  prefetch_wait_ms: 5000
memory:
  tier3:
    embedding_model: hashing
    backend: memory
"""
