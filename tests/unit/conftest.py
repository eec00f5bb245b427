"""Fixtures shared by the unit tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_memory.api.memory_api import MemoryAPI


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
