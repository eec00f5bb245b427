"""Meaning search keeps up with a stream of short processes (one `hermes -z` each), and says when it is
behind.

A process lives a few seconds. Embedding goes in pieces that each commit within well under a second, so
every process leaves durable progress (a batch cut off by the process's exit was lost, and the next
process took the same rows again: the queue only grew); a turn queues a bounded number of texts, however
long its reply; at close a process embeds until the queue is shorter than it found it; and ``status`` and
the prefetch block say how many stored turns meaning search cannot find yet.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.core.ingest import PIECE_TARGET_S, next_piece
from hermes_memory.hermes import status
from hermes_memory.hermes.prefetch import Prefetcher, Recalled
from hermes_memory.hermes.settings import ProviderSettings
from hermes_memory.ingest.views import MAX_SENTENCE_VIEWS

HASHING = {"tier3.embedding_model": "hashing", "tier3.backend": "memory"}
LONG_REPLY = " ".join(f"Point number {i} of my long answer is about topic {i}." for i in range(40))


def _queued(db: Path) -> int:
    conn = sqlite3.connect(db)
    try:
        return int(conn.execute("SELECT count(*) FROM embed_queue").fetchone()[0])
    finally:
        conn.close()


def test_a_long_reply_queues_a_bounded_number_of_embeddings(
    open_api: Callable[..., MemoryAPI],
) -> None:
    api = open_api()
    assert api.remember_turn("Tell me everything about it.", LONG_REPLY, "s1")["success"]
    api.core.ingest.ingest_pending(30)
    # The reply's 40 sentences: at most MAX_SENTENCE_VIEWS sentence texts plus its window(s); the
    # user's message its sentence and window.
    queued = _queued(api.config.db_path)
    assert queued <= MAX_SENTENCE_VIEWS + 6, queued
    # every word is still found by keywords and, once embedded, by meaning
    assert api.flush(60)["success"]
    # a reply with no sentence ends (a tool's JSON read out) is not split into dozens of chunks either
    items = (f'{{"text": "item {i} about the harbour", "score": 0.{i}}}' for i in range(300))
    dump = "Results: " + ", ".join(items)
    assert api.remember_turn("Search your memory for the harbour.", dump, "s1")["success"]
    api.core.ingest.ingest_pending(30)
    assert _queued(api.config.db_path) <= MAX_SENTENCE_VIEWS + 6, _queued(api.config.db_path)
    assert api.flush(60)["success"]
    found = api.semantic_search("point number 37 topic 37", limit=3, min_score=0)
    assert found["success"] and any("37" in h["text"] for h in found["data"]), found


def test_the_next_piece_fits_the_target_time_and_grows_at_most_twofold() -> None:
    # 8 rows in 4 s: 1 fits in the target
    assert next_piece(8, 8, 4.0, 64) == max(1, int(PIECE_TARGET_S * 8 / 4.0))
    assert next_piece(4, 4, 0.01, 64) == 8  # fast: doubles, no more
    assert next_piece(64, 64, 0.001, 64) == 64  # capped by the batch size
    assert next_piece(4, 0, 0.0, 64) == 4  # nothing taken: unchanged


# A child process: an embedder that takes 40 ms per text (a busy machine), the store opened with its
# background worker, alive for ``life`` seconds, then closed without a drain and ended with os._exit,
# as `hermes -z` ends.
CHILD = textwrap.dedent(
    """
    import os, sys, time
    from hermes_memory.tier3.hashing_embedder import HashingEmbedder
    slow = HashingEmbedder._embed
    def _embed(self, texts, kind):
        time.sleep(0.04 * len(texts))
        return slow(self, texts, kind)
    HashingEmbedder._embed = _embed
    from hermes_memory.api.memory_api import MemoryAPI
    api = MemoryAPI(hermes_home=sys.argv[1], background=True,
                    **{"tier3.embedding_model": "hashing", "tier3.backend": "memory"})
    time.sleep(float(sys.argv[2]))
    api.close(drain_timeout=0)
    os._exit(0)
    """
)


def test_each_short_process_leaves_the_embed_queue_shorter_than_it_found_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with MemoryAPI(hermes_home=home, **HASHING) as api:
        for i in range(40):
            said = f"I visited city number {i} with Ana in May."
            assert api.remember_turn(said, "Nice trip!", "s1")["success"]
        api.core.ingest.ingest_pending(60)  # the turns only: their texts wait for vectors
        db = api.config.db_path
    before = _queued(db)
    assert before >= 64, before  # more than one default embedding batch
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    seen = [before]
    for _ in range(2):
        child = subprocess.run(
            [sys.executable, "-c", CHILD, str(home), "0.6"], capture_output=True, text=True,
            timeout=120, env=env, check=False,
        )  # fmt: skip
        assert child.returncode == 0, child.stderr[-2000:]
        seen.append(_queued(db))
    assert seen[1] < seen[0] and (seen[2] < seen[1] or seen[2] == 0), seen


def test_status_and_the_block_say_how_many_turns_meaning_search_cannot_find_yet(
    open_api: Callable[..., MemoryAPI], tmp_path: Path
) -> None:
    api = open_api()
    for i in range(3):
        assert api.remember_turn(f"My colleague number {i} is called Bob.", "Noted.", "s1")["success"]
    api.core.ingest.ingest_pending(30)
    assert api.core.ingest.turns_behind() == 3
    counts = status.pending_counts(api.config.db_path)
    assert counts["turns_behind"] == 3
    report = status.StatusReport(hermes_home=tmp_path, this_python="py", version="x", pending=counts)
    assert "meaning search is behind: 3 stored turn(s) not yet searchable by meaning" in status.render(report)
    assert api.flush(60)["success"]
    assert api.core.ingest.turns_behind() == 0
    assert status.pending_counts(api.config.db_path)["turns_behind"] == 0

    class _Shared:  # what emit reads of the shared store: nothing
        pass

    prefetcher = Prefetcher(_Shared(), ProviderSettings(), tier3=True)  # type: ignore[arg-type]
    block = prefetcher.emit(Recalled((), 0.0, ("tier1", "tier2"), (), behind=3))
    assert "3 stored turn(s) are not yet searchable by meaning" in block, block
