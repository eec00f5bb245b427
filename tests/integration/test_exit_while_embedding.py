"""A process releases its store while the worker is in the middle of an embedding batch (the real
MiniLM embedder), then exits the normal way (the interactive `hermes` CLI does not `os._exit`).

Release returns at once and leaves the close to a thread; interpreter exit must still wait for that
thread, or the embedder's native threads are torn down under it and the process aborts ("terminate
called without an active exception", exit 134). A reopen in the same process right after the release
(a gateway starting a new agent) waits for the close and gets the vector store, not a busy one.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

CHILD = textwrap.dedent(
    """
    import sys, time
    from hermes_memory.hermes import registry
    from hermes_memory.hermes.settings import ProviderSettings

    home, settings = sys.argv[1], ProviderSettings()
    shared = registry.acquire(home, "default", settings)
    for i in range(80):
        shared.api.remember_turn(
            f"I visited city number {i} with my friend Ana in May and we ate pastries.", "Nice!", "s1"
        )
    # Wait until the worker is embedding: some vectors written, many still pending.
    deadline, first = time.monotonic() + 120, None
    while time.monotonic() < deadline:
        pending = shared.api.pending()["data"]["embeddings"]
        first = pending if first is None or pending > first else first
        if 0 < pending < first - 8:
            break
        time.sleep(0.05)
    else:
        sys.exit("the worker never started embedding")
    registry.release(shared, 0)
    again = registry.acquire(home, "default", settings)
    found = again.api.semantic_search("friend", min_score=0)
    print("reopened:", found["success"], found["meta"].get("degraded"), flush=True)
    registry.release(again, 0)
    print("released", flush=True)
    """
)


def test_a_normal_exit_right_after_release_waits_for_the_worker_and_does_not_abort(tmp_path: Path) -> None:
    child = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path / "home")],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        check=False,
    )
    assert "terminate called" not in child.stderr, child.stderr[-2000:]
    assert child.returncode == 0, child.stderr[-2000:]
    assert "reopened: True None" in child.stdout, child.stdout + child.stderr[-2000:]
    assert child.stdout.rstrip().endswith("released")
