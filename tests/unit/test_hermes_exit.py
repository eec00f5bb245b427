"""What the provider's process exit costs: a short-lived Hermes process (a one-shot ``hermes -z``) leaves
the vector engine's close-time index build (seconds once a segment passes the engine's threshold) to a
longer-lived process or the ``embed_queue`` maintenance job, and loses nothing by it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hermes_memory.hermes import registry
from hermes_memory.hermes.provider import NextLevelProvider
from hermes_memory.tier3.backend import make_backend

pytest.importorskip("qdrant_edge")

DIM = 8
QDRANT_PROVIDER_YAML = """\
provider:
  prefetch_wait_ms: 5000
memory:
  tier3:
    embedding_model: hashing
    backend: qdrant
    engine_min_vectors: 0  # the engine from the first vector (small stores search exactly otherwise)
"""


def _vectors(n: int) -> np.ndarray:
    vecs = np.random.default_rng(3).normal(size=(n, DIM)).astype(np.float32)
    return vecs / np.linalg.norm(vecs, axis=1, keepdims=True)


def test_a_deferred_build_loses_nothing_and_a_later_open_still_builds(tmp_path: Path) -> None:
    vecs = _vectors(300)
    ids = [f"p{i}" for i in range(300)]
    first = make_backend("qdrant", path=tmp_path, collection="memory_chunks", dim=DIM)
    first.upsert(ids, vecs, [{"i": i} for i in range(300)])
    first.defer_optimize()  # type: ignore[attr-defined]
    assert first.optimize_on_close is False  # type: ignore[attr-defined]
    first.close()
    again = make_backend("qdrant", path=tmp_path, collection="memory_chunks", dim=DIM)
    try:
        assert again.count() == 300
        assert again.search(vecs[42], limit=1)[0].id == "p42"
        assert again.optimize_on_close is True  # type: ignore[attr-defined]  # a new open builds again
    finally:
        again.close()  # nothing written: closes without a flush, and still reopens
    reopened = make_backend("qdrant", path=tmp_path, collection="memory_chunks", dim=DIM)
    try:
        assert reopened.count() == 300
    finally:
        reopened.close()


def test_a_process_that_exits_without_closing_loses_no_upsert(tmp_path: Path) -> None:
    # hermes -z ends with os._exit: whatever a close would not have reached must already be durable
    code = (
        "import os, sys, numpy as np\n"
        "from hermes_memory.tier3.backend import make_backend\n"
        f"b = make_backend('qdrant', path=sys.argv[1], collection='memory_chunks', dim={DIM})\n"
        f"b.upsert(['a', 'b'], np.eye(2, {DIM}, dtype=np.float32), [{{}}, {{}}])\n"
        "os._exit(0)\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    backend = make_backend("qdrant", path=tmp_path, collection="memory_chunks", dim=DIM)
    try:
        assert backend.count() == 2
        assert backend.search(np.eye(1, DIM, 1, dtype=np.float32)[0], limit=1)[0].id == "b"
    finally:
        backend.close()


def _provider_turn(home: Path) -> tuple[NextLevelProvider, list[Any]]:
    provider = NextLevelProvider()
    provider.initialize("s1", hermes_home=str(home), platform="cli", agent_identity="default")
    provider.sync_turn("My sister Ana lives in Lisbon.", "Noted.", session_id="s1")
    shared = registry.find(str(home), "default")
    assert shared is not None
    assert shared.api.flush(timeout=30)["data"]["drained"]
    sem = shared.api.core.tiers.sem
    assert sem is not None
    backends = sem.opened_backends()
    assert backends  # the turn's vectors went into the engine
    return provider, backends


@pytest.mark.parametrize("lived_long", [False, True])
def test_a_short_lived_provider_defers_the_index_build_a_long_lived_one_keeps_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lived_long: bool
) -> None:
    if lived_long:
        monkeypatch.setattr(registry, "BUILD_INDEXES_AFTER_S", 0.0)
    home = tmp_path / "hermes"
    home.mkdir()
    (home / "nextlevel.yaml").write_text(QDRANT_PROVIDER_YAML, encoding="utf-8")
    provider, backends = _provider_turn(home)
    provider.shutdown()
    assert registry.open_stores() == {}
    assert [b.optimize_on_close for b in backends] == [lived_long] * len(backends)
    # nothing lost: the next process finds the turn by meaning
    again, _ = _provider_turn(home)
    try:
        shared = registry.find(str(home), "default")
        assert shared is not None
        hits = shared.api.recall("Where does Ana live?", tiers=["tier3"], limit=5)
        assert hits["success"] and any("Lisbon" in h["text"] for h in hits["data"]["hits"])
    finally:
        again.shutdown()


def test_the_embed_queue_job_builds_what_agents_deferred(tmp_path: Path) -> None:
    from hermes_memory.api.memory_api import MemoryAPI

    api = MemoryAPI(
        hermes_home=tmp_path,
        **{"tier3.embedding_model": "hashing", "tier3.backend": "qdrant", "tier3.engine_min_vectors": 0},
    )
    try:
        assert api.core.tiers.sem is not None
        engine = api.core.tiers.sem.backend("memory_chunks")
        # past the engine's indexing threshold (~6.6k points of 384-d), as an agent that deferred leaves it
        n = 7000
        vecs = np.random.default_rng(5).normal(size=(n, 384)).astype(np.float32)
        engine.upsert([f"c{i}" for i in range(n)], vecs, [{} for _ in range(n)])
        assert engine.health()["indexed_vectors"] == 0
        ran = api.maintain("embed_queue")
        assert ran["success"], ran
        assert ran["data"]["jobs"]["embed_queue"]["result"]["indexes_built"] >= 1
        assert engine.health()["indexed_vectors"] > 0
    finally:
        api.close()
