"""Turns are written in batches (several turns per transaction): a process killed in the middle of a
batch, or a turn that fails inside one, loses no turn and writes none twice."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from store_state import knowledge as store_knowledge

from hermes_memory import MemoryAPI
from hermes_memory.errors import StorageError
from hermes_memory.ingest import knowledge, worker

CONFIG = {"tier3.embedding_model": "hashing", "tier3.backend": "memory"}
TURNS = [
    "My sister Lena lives in Boston.",
    "Lena called me this morning.",
    "I had pasta for dinner and it was great.",
    "I went to bed early yesterday.",
    "Lena loves Boston in the autumn.",
    "I go running every Sunday morning.",
    "I keep the spare key under the blue flowerpot.",
    "My favourite colour is green.",
]


def _fill(api: MemoryAPI) -> None:
    for i, text in enumerate(TURNS):
        env = api.remember_message(text, "s1", 1_683_540_000.0 + i * 60, speaker="Caroline", turn_id=f"t{i}")
        assert env["success"], env


def _state(api: MemoryAPI) -> dict[str, Any]:
    return {**store_knowledge(api), "queue": api.pending()["data"]["turns"]}


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    with MemoryAPI(hermes_home=tmp_path_factory.mktemp("ref"), **CONFIG) as api:
        _fill(api)
        assert api.ingest_pending(timeout=60)["data"]["pending"]["turns"] == 0
        return _state(api)


# The child queues every turn, then drains them: the first turn is a batch of its own (its write adds
# entities the next turns' extraction must see), the seven others share one. The child is killed
# (os._exit: no cleanup, like SIGKILL) inside that batch's transaction, after four turns went into it.
CHILD = textwrap.dedent(
    """
    import os, sys
    from hermes_memory import MemoryAPI
    from hermes_memory.ingest import knowledge, worker
    sys.path.insert(0, sys.argv[2])
    from test_ingest_batch_crash import CONFIG, TURNS, _fill

    write, seen, sizes = knowledge.RuleBasedKnowledge.write, [], []
    take = worker.Ingestor._take

    def taking(self, items, *, stop):
        batch = take(self, items, stop=stop)
        sizes.append(len(batch))
        return batch

    def dying(self, tier2, episodes, prepared, changes):
        write(self, tier2, episodes, prepared, changes)
        seen.append(episodes[0].text)
        if len(seen) == 5:
            print("batch", sizes[-1], flush=True)
            os._exit(9)  # the batch's transaction is open: four turns written into it, a fifth too

    knowledge.RuleBasedKnowledge.write = dying
    worker.Ingestor._take = taking
    api = MemoryAPI(hermes_home=sys.argv[1], **CONFIG)
    _fill(api)
    api.ingest_pending(timeout=60)
    print("not killed", flush=True)
    """
)


def test_a_kill_in_the_middle_of_a_batch_loses_and_duplicates_nothing(
    tmp_path: Path, reference: dict[str, Any]
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path), str(Path(__file__).parent)],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 9, done.stdout + done.stderr[-3000:]
    assert done.stdout.split()[-1] == str(len(TURNS) - 1), done.stdout  # the kill came inside the batch
    with MemoryAPI(hermes_home=tmp_path, **CONFIG) as api:
        assert api.pending()["data"]["turns"] == len(TURNS) - 1  # the batch rolled back: all still queued
        texts = [r["text"] for r in api.tier2.db.query("SELECT text FROM episodes")]
        assert texts == TURNS[:1]
        assert api.ingest_pending(timeout=60)["data"]["pending"]["turns"] == 0
        assert _state(api) == reference


def test_a_turn_failing_inside_a_batch_is_found_and_retried_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reference: dict[str, Any]
) -> None:
    original = knowledge.RuleBasedKnowledge.write
    failures = {"left": 2}  # in the batch, then alone
    batches: list[int] = []
    take = worker.Ingestor._take

    def taking(self: worker.Ingestor, items: Any, *, stop: Any) -> Any:
        batch = take(self, items, stop=stop)
        batches.append(len(batch))
        return batch

    def failing(self: Any, tier2: Any, episodes: Any, prepared: Any, changes: Any) -> None:
        if episodes[0].text == TURNS[3] and failures["left"]:
            failures["left"] -= 1
            raise StorageError("injected failure")
        original(self, tier2, episodes, prepared, changes)

    monkeypatch.setattr(knowledge.RuleBasedKnowledge, "write", failing)
    monkeypatch.setattr(worker.Ingestor, "_take", taking)
    with MemoryAPI(hermes_home=tmp_path, **CONFIG) as api:
        _fill(api)
        # The batch fails, is written again turn by turn: the turns before the bad one are stored, the
        # bad one stays queued with its error, and nothing after it is written (turns go in order).
        assert api.ingest_pending(timeout=60)["data"]["written"] == 3
        assert batches[:2] == [1, len(TURNS) - 1]
        texts = [r["text"] for r in api.tier2.db.query("SELECT text FROM episodes ORDER BY id")]
        assert texts == TURNS[:3]
        row = api.tier2.db.query_one("SELECT attempts, last_error FROM ingest_queue ORDER BY id LIMIT 1")
        assert row["attempts"] == 1 and "injected failure" in row["last_error"]
        assert api.ingest_pending(timeout=60)["data"]["pending"]["turns"] == 0
        assert _state(api) == reference
