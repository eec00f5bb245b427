"""Killing the process while the embed queue drains loses nothing and embeds nothing twice.

A child process stores facts and drains the embed queue; the parent SIGKILLs it at a random point
(after some progress lines, right after a batch of vectors was embedded but before its Tier 2
transaction committed, or after the commit but before the engine was brought up to date from Tier 2),
several times. After that a drain in the parent finishes, and every chunk in Tier 2
has exactly one vector in the backend.
"""

from __future__ import annotations

import os
import random
import selectors
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import IO, Any

import pytest

from hermes_memory.api.memory_api import MemoryAPI

FACTS = 200
BATCH = 8
KILLS = 3
LINE_TIMEOUT_S = 120.0  # a child that prints nothing for this long has hung; generous on a busy machine

CHILD = textwrap.dedent(
    """
    import sys
    import time

    from hermes_memory.api.memory_api import MemoryAPI
    from hermes_memory.tier2.chunks import EmbedQueue
    from hermes_memory.tier3 import _indexer

    home, backend, facts = sys.argv[1], sys.argv[2], int(sys.argv[3])
    dequeue = EmbedQueue.complete


    def announced_dequeue(self, items):
        # The vectors of these rows are written; widen the window before the rows leave the queue,
        # so the parent can kill exactly there.
        print("written", len(items), flush=True)
        time.sleep(0.02)
        return dequeue(self, items)


    EmbedQueue.complete = announced_dequeue
    sync = _indexer.sync_chunks


    def announced_sync(*args, **kwargs):
        # Tier 2 holds the vectors and the rows are gone; the engine has not seen them yet.
        print("committed", flush=True)
        time.sleep(0.02)
        return sync(*args, **kwargs)


    _indexer.sync_chunks = announced_sync
    api = MemoryAPI(
        hermes_home=home,
        **{"tier3.embedding_model": "hashing", "tier3.backend": backend, "tier3.embed_batch_size": BATCH,
           "tier3.engine_min_vectors": 0},
    )
    for i in range(facts):
        env = api.fact_store(f"fact {i}: the {i % 7} th shelf holds box {i * 13 % 97} of project {i % 11}")
        assert env["success"], env
    print("filled", flush=True)
    env = api.embed_pending(progress=lambda done, total: print("progress", done, total, flush=True))
    print("drained", env["success"], flush=True)
    api.close()
    """
).replace("BATCH", str(BATCH))


def _lines_until(stream: IO[str], proc: subprocess.Popen[str], want: str, count: int) -> int:
    """Read child output until ``count`` lines starting with ``want`` were seen; return lines read."""
    seen = read = 0
    while seen < count:
        line = _readline(stream, proc)
        if not line:
            return read  # the child finished (or died) first
        read += 1
        if line.startswith(want):
            seen += 1
    return read


def _readline(stream: IO[str], proc: subprocess.Popen[str]) -> str:
    with selectors.DefaultSelector() as sel:
        sel.register(stream, selectors.EVENT_READ)
        if not sel.select(LINE_TIMEOUT_S):
            proc.kill()
            raise AssertionError(f"child printed nothing for {LINE_TIMEOUT_S}s")
    return stream.readline()


def _run_and_kill(script: Path, home: Path, backend: str, facts: int, rng: random.Random, kind: str) -> str:
    """Start the child and SIGKILL it at a random point; return where it was killed (for messages)."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "HF_HUB_OFFLINE": "1"}
    proc = subprocess.Popen(
        [sys.executable, str(script), str(home), backend, str(facts)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    try:
        if facts:
            _lines_until(proc.stdout, proc, "filled", 1)
        # "written": vectors embedded, their transaction not committed; "committed": Tier 2 committed,
        # the engine not synced; "progress": anywhere in a batch
        where = (kind, rng.randint(1, {"written": 3, "committed": 2, "progress": 4}[kind]))
        _lines_until(proc.stdout, proc, *where)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=LINE_TIMEOUT_S)
        proc.stdout.close()
    return f"{where[0]} #{where[1]} (exit {proc.returncode})"


@pytest.mark.parametrize("backend", ["qdrant", "memory"])
def test_killed_drains_lose_nothing_and_duplicate_nothing(tmp_path: Path, backend: str) -> None:
    script = tmp_path / "child.py"
    script.write_text(CHILD)
    home = tmp_path / "home"
    rng = random.Random(f"embed-queue-crash-{backend}")
    kinds = ["committed", "written", "progress"]  # each kill point once, the crash window first
    kills = [
        _run_and_kill(script, home, backend, FACTS if i == 0 else 0, rng, kinds[i]) for i in range(KILLS)
    ]

    settings: dict[str, Any] = {
        "tier3.embedding_model": "hashing", "tier3.backend": backend, "tier3.engine_min_vectors": 0
    }  # fmt: skip
    with MemoryAPI(hermes_home=home, **settings) as api:
        assert api.tier2.facts.count() == FACTS, kills
        drained = api.embed_pending()
        assert drained["success"], drained["error"]
        assert drained["data"]["remaining"] == 0, kills

        chunks = [chunk for batch in api.tier2.chunks.iter_all() for chunk in batch]
        assert len(chunks) == FACTS
        for chunk in chunks:
            env = api.semantic_search(chunk.text, limit=5, min_score=0.0, filters={"chunk_id": chunk.uuid})
            assert [h["id"] for h in env["data"]] == [chunk.vector_id], (kills, chunk.text)
        stats = api.stats()["data"]["tier3"]
        assert stats["memory_chunks"] == FACTS == stats["chunks"], (kills, stats)
        assert stats["embed_pending"] == 0
