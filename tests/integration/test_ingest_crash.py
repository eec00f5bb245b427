"""A crash injected at each ingestion step resumes to the same final state: nothing lost, nothing twice."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from store_state import knowledge as store_knowledge

from hermes_memory import MemoryAPI
from hermes_memory.core.tiers import Tiers
from hermes_memory.errors import StorageError
from hermes_memory.ingest import knowledge, worker
from hermes_memory.tier2 import chunks, episodes, facts

TURNS = [
    ("I live in Boston and I adopted a puppy named Rex.", "Nice! Rex is a great name."),
    ("I moved to Denver last month.", "How is Denver?"),
    ("My sister Lena works at Globex.", "Good to know."),
]


def _open(home: Path) -> MemoryAPI:
    return MemoryAPI(hermes_home=home, **{"tier3.embedding_model": "hashing", "tier3.backend": "memory"})


def _fill(api: MemoryAPI) -> None:
    for i, (user, assistant) in enumerate(TURNS):
        env = api.remember_turn(
            user,
            assistant,
            "s1",
            1_683_540_000.0 + i * 60,
            user_name="Caroline",
            assistant_name="Bot",
            turn_id=f"turn-{i}",
        )
        assert env["success"]


def _state(api: MemoryAPI) -> dict[str, Any]:
    return {
        **store_knowledge(api),
        "queue": api.tier2.ingest_queue.count(),
        "vectors": api.stats()["data"]["tier3"].get("memory_chunks"),
    }


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    with _open(tmp_path_factory.mktemp("ref")) as api:
        _fill(api)
        assert api.flush(60)["data"]["drained"]
        return _state(api)


@pytest.mark.parametrize(
    "step",
    ["episode insert", "chunk insert", "extraction write", "fact store", "queue row delete", "after commit"],
)
@pytest.mark.parametrize("crash_on_turn", [0, 2])
def test_crash_at_each_step_resumes_to_the_same_state(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reference: dict[str, Any], step: str, crash_on_turn: int
) -> None:
    from hermes_memory.tier2.ingest_queue import IngestQueue

    targets: dict[str, tuple[Any, str]] = {
        "episode insert": (episodes.EpisodeStore, "add"),
        "chunk insert": (chunks.ChunkStore, "add"),
        "extraction write": (knowledge.RuleBasedKnowledge, "_write"),
        "fact store": (facts.FactStore, "store"),
        "queue row delete": (IngestQueue, "done"),
        "after commit": (Tiers, "after_ingest"),
    }
    owner, name = targets[step]
    original: Callable[..., Any] = getattr(owner, name)
    calls = {"crashed": False}

    def crashing(self: Any, *args: Any, **kwargs: Any) -> Any:
        current = worker_turn["id"]
        if not calls["crashed"] and current == f"turn-{crash_on_turn}":
            calls["crashed"] = True
            raise StorageError(f"injected crash at {step}")
        return original(self, *args, **kwargs)

    worker_turn = {"id": ""}
    original_write, original_follow = worker.Ingestor._write_turn, worker.Ingestor._follow

    def tracking_write(self: Any, conn: Any, staged: Any) -> Any:
        worker_turn["id"] = staged.item.turn_uuid
        return original_write(self, conn, staged)

    def tracking_follow(self: Any, item: Any, changes: Any) -> Any:
        worker_turn["id"] = item.turn_uuid
        return original_follow(self, item, changes)

    monkeypatch.setattr(worker.Ingestor, "_write_turn", tracking_write)
    monkeypatch.setattr(worker.Ingestor, "_follow", tracking_follow)
    monkeypatch.setattr(owner, name, crashing)
    with _open(tmp_path) as api:
        _fill(api)
        api.flush(30)
        assert calls["crashed"], f"the injected crash at {step} never fired"
        # the failed turn is still queued (or, for a crash after commit, already written) ...
        monkeypatch.setattr(owner, name, original)
        assert api.flush(60)["data"]["drained"]
        assert _state(api) == reference
