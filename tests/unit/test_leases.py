"""Store-wide leases (``tier2.leases``): one process at a time drains the turn queue, drains the
embedding queue or runs the maintenance, on one host (SQLite: a file lock) or many (PostgreSQL: a session
advisory lock; ``tests/contract/postgresql`` runs this module there). A process that dies loses its
lease; the threads and stores of one process share it.

"Another process" is a second take of the engine's lock that bypasses this process's share
(``Database.take_lease``): another open file of the lock, or another server session."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import pytest

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.tier2 import leases
from hermes_memory.tier2.db import Database
from hermes_memory.tier2.schema import MIGRATIONS


def _ok(envelope: dict[str, Any]) -> Any:
    assert envelope["success"], envelope["error"]
    return envelope["data"]


def test_a_lease_another_process_holds_is_refused_and_free_once_dropped(
    open_api: Callable[..., MemoryAPI],
) -> None:
    db = open_api().tier2.db
    other = db.take_lease(leases.TURNS)
    assert other is not None
    try:
        with db.lease(leases.TURNS) as held:
            assert held is False
        with db.lease(leases.EMBEDDINGS) as held:  # another lease: free
            assert held is True
        holder = db.lease_holder(leases.TURNS)
        assert holder is not None and holder.words()
    finally:
        db.drop_lease(other)
    assert db.lease_holder(leases.TURNS) is None
    with db.lease(leases.TURNS) as held:
        assert held is True
        with db.lease(leases.TURNS) as again:  # this process already holds it: shared
            assert again is True
        assert db.take_lease(leases.TURNS) is None  # still held by this process after the inner one
    with pytest.raises(ValueError, match="unknown lease"), db.lease("everything"):
        pass


def test_turns_and_embeddings_wait_for_the_process_that_holds_their_lease(
    open_api: Callable[..., MemoryAPI],
) -> None:
    api = open_api()
    db = api.tier2.db
    other = db.take_lease(leases.TURNS)
    try:
        _ok(api.remember_turn("I adopted a greyhound called Pixel last spring.", "What a lovely name!", "s1"))
        assert _ok(api.flush(timeout=0.5))["pending"]["turns"] == 1  # not written here, not lost
        assert db.query_one("SELECT count(*) AS n FROM episodes")["n"] == 0
    finally:
        db.drop_lease(other)
    assert _ok(api.flush(timeout=60))["pending"] == {"turns": 0, "embeddings": 0}
    assert db.query_one("SELECT count(*) AS n FROM episodes")["n"] == 2

    other = db.take_lease(leases.EMBEDDINGS)
    try:
        _ok(api.fact_store("Pixel is afraid of thunderstorms."))
        waiting = _ok(api.pending())["embeddings"]
        assert waiting > 0
        sem = api.core.tiers.sem
        assert sem is not None
        report = sem.drain()
        assert report.elsewhere and report.taken == 0 and report.remaining == waiting
        assert _ok(api.flush(timeout=0.5))["pending"]["embeddings"] == waiting
    finally:
        db.drop_lease(other)
    assert _ok(api.flush(timeout=60))["pending"] == {"turns": 0, "embeddings": 0}


_CHILD = """
import sys, time
from hermes_memory.tier2 import Tier2, leases
t2 = Tier2.open(sys.argv[1], url=sys.argv[2] or None)
handle = t2.db.take_lease(leases.JOBS)
print("held" if handle is not None else "refused", flush=True)
time.sleep(120)
"""


def test_a_killed_holder_loses_its_lease(open_api: Callable[..., MemoryAPI]) -> None:
    api = open_api()
    db: Database = api.tier2.db
    url = os.environ.get("HERMES_MEMORY_TIER2_URL", "")
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(api.config.db_path), url], stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "held"
        with db.lease(leases.JOBS) as held:
            assert held is False
        assert db.lease_holder(leases.JOBS) is not None
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
        if child.stdout is not None:
            child.stdout.close()
    deadline = time.monotonic() + 30
    while True:  # the server notices the dead session at once; a file lock goes with the process
        with db.lease(leases.JOBS) as held:
            if held:
                break
        assert time.monotonic() < deadline, "the dead holder's lease was never released"
        time.sleep(0.1)


def test_status_reads_the_queues_and_who_holds_each_lease(open_api: Callable[..., MemoryAPI]) -> None:
    from hermes_memory.hermes.settings import ProviderSettings
    from hermes_memory.hermes.status import maintenance_lines, store_state

    api = open_api()
    db = api.tier2.db
    _ok(api.remember_turn("My sister moved to Porto in June.", "Lovely city.", "s1"))
    others = [db.take_lease(leases.JOBS), db.take_lease(leases.TURNS)]
    try:
        state = store_state(api.config)
    finally:
        for handle in others:
            db.drop_lease(handle)
    assert state.error is None and state.pending["turns_to_ingest"] == 1
    assert state.holder is not None
    lines = maintenance_lines(state, ProviderSettings())
    assert any(line.startswith(f"running now: {state.holder.words()}") for line in lines), lines
    if not os.environ.get("HERMES_MEMORY_TIER2_URL"):
        assert state.queues == []  # one host: nothing shared to break down
        return
    assert state.queues[0] == "shared by every host: 0 turn(s), 0 embedding(s)"
    assert state.queues[1] == "this host's inbox: 1 turn(s) not yet moved to the shared queue"
    assert state.queues[2].startswith("turns drained now by: ") and "server pid" in state.queues[2]
    assert state.schema_version == MIGRATIONS[-1].version
