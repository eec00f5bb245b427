"""Fixtures shared by the unit tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hermes_settings import FAST_PROVIDER_YAML

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.hermes import registry
from hermes_memory.hermes.provider import NextLevelProvider


@pytest.fixture
def open_api(tmp_path: Path) -> Iterator[Callable[..., MemoryAPI]]:
    """Opens MemoryAPIs on ``tmp_path`` (hashing embedder, in-process vectors; ``overrides`` are config
    keys) and closes them, newest first, after the test. A module may define its own ``open_api``."""
    opened: list[MemoryAPI] = []

    def opener(**overrides: Any) -> MemoryAPI:
        settings = {"tier3.embedding_model": "hashing", "tier3.backend": "memory", **overrides}
        api = MemoryAPI(hermes_home=tmp_path, **settings)
        opened.append(api)
        return api

    yield opener
    for api in reversed(opened):
        api.close()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A Hermes home whose nextlevel.yaml holds FAST_PROVIDER_YAML (a module may define its own)."""
    path = tmp_path / "hermes"
    path.mkdir()
    (path / "nextlevel.yaml").write_text(FAST_PROVIDER_YAML, encoding="utf-8")
    return path


@pytest.fixture
def make(home: Path) -> Iterator[Any]:
    """A factory of initialised providers on ``home``; every one is shut down after the test, and no
    store may stay open."""
    made: list[NextLevelProvider] = []

    def factory(session_id: str = "s1", **kwargs: Any) -> NextLevelProvider:
        provider = NextLevelProvider()
        provider.initialize(
            session_id, hermes_home=str(home), platform="cli", agent_identity="default", **kwargs
        )
        made.append(provider)
        return provider

    yield factory
    for provider in made:
        provider.shutdown()
    assert registry.open_stores() == {}
