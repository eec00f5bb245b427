"""A provider shutdown leaves no background work of the provider running and logs nothing: a recall the
provider started in the background (the prefetch queued after a turn, the warm-up) finishes on the open
store before it closes, and none starts after. Deterministic: the recall's vector search is held until
the store has begun closing, then waits (bounded) for the store to be closed: on code that closes under a
running recall it meets a closed database and logs ``recall without tier3: memory database … is closed``
(what Hermes printed after 3 of 4 shutdowns)."""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

import pytest

from hermes_memory.hermes import registry
from hermes_memory.hermes.provider import NextLevelProvider
from hermes_memory.tier3.semantic import SemanticMemory

PROVIDER_YAML = """\
memory:
  tier3:
    embedding_model: hashing
"""


def _provider_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("nextlevel-") and t.is_alive()]


def test_shutdown_waits_for_background_recalls_and_logs_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    home = tmp_path / "hermes"
    home.mkdir()
    (home / "nextlevel.yaml").write_text(PROVIDER_YAML, encoding="utf-8")
    provider = NextLevelProvider()
    provider.initialize("s1", hermes_home=str(home), platform="cli", agent_identity="default")
    provider.sync_turn("My sister Ana lives in Lisbon.", "Noted.", session_id="s1")
    shared = registry.find(str(home), "default")
    assert shared is not None and shared.api.flush(timeout=30)["data"]["drained"]

    held = threading.Event()
    real = SemanticMemory.source_scores

    def search_after_close_began(self: SemanticMemory, *args: Any, **kwargs: Any) -> Any:
        held.set()
        assert shared.closed.wait(30), "the store never began closing"
        shared.api.wait_closed(1.0)  # closed at once by code that does not wait for this recall
        return real(self, *args, **kwargs)

    monkeypatch.setattr(SemanticMemory, "source_scores", search_after_close_began)
    provider.queue_prefetch("Where does Ana live?")
    assert held.wait(30), "the background recall never started"

    caplog.set_level(logging.DEBUG, logger="hermes_memory")
    caplog.clear()
    provider.shutdown()
    assert _provider_threads() == []  # nothing of the provider still runs
    assert shared.api.wait_closed(0)  # and the store is closed, not left to a thread
    # a queued prefetch after shutdown starts nothing
    provider.queue_prefetch("And where does Ana work?")
    assert _provider_threads() == []
    logged = [f"{r.levelname} {r.name}: {r.getMessage()}" for r in caplog.records if r.levelno > 10]
    assert logged == []
