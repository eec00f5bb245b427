"""The provider settings (nextlevel.yaml) the Hermes unit tests share: the hashing embedder and the
in-process vector backend, so a provider opens in milliseconds, and a long prefetch wait, so a test
reads the answer rather than a timeout (conftest.py's ``home`` and ``make`` fixtures use them)."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator
from pathlib import Path

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.hermes import registry

FAST_PROVIDER_YAML = """\
provider:
  prefetch_wait_ms: 5000
memory:
  tier3:
    embedding_model: hashing
    backend: memory
"""


def fast_provider_yaml(**provider: object) -> str:
    """FAST_PROVIDER_YAML with more ``provider:`` keys (``maintenance_interval_s=0.2``)."""
    extra = "".join(f"  {key}: {value}\n" for key, value in provider.items())
    return FAST_PROVIDER_YAML.replace("provider:\n", "provider:\n" + extra, 1)


def api_of(home: Path, profile: str = "default") -> MemoryAPI:
    """The MemoryAPI the providers on ``home`` share."""
    shared = registry.find(str(home), profile)
    assert shared is not None
    return shared.api


@contextlib.contextmanager
def listening_url() -> Iterator[str]:
    """An http URL on 127.0.0.1 where something accepts connections (an embedding endpoint that
    setup and status can reach), for as long as the block runs."""
    server = socket.create_server(("127.0.0.1", 0))
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}/v1"
    finally:
        server.close()
