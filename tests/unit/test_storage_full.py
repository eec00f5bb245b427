"""Issue 14, defect 7: a full disk or a file-size limit is reported as what it is (StorageFullError, a
StorageError), not as SQLite's follow-up "no such savepoint"; the turn stays queued (no attempt is used
up, nothing is lost or written twice), ``flush`` and ``maintain`` fail saying so, ``status`` reports a
stuck queue, and once there is room the turn is written exactly once.

The disk is filled two ways: ``PRAGMA max_page_count`` (SQLITE_FULL) in process, and ``RLIMIT_FSIZE``
in a child process (EFBIG: SQLite rolls the whole transaction back and reports an I/O error)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.errors import StorageError
from hermes_memory.hermes import status
from hermes_memory.tier2.db import SqliteDatabase

LONG_TURN = "Tom works at Nordlicht Labs in Berlin and walks along the Spree every evening. " * 60


def _fill(api: MemoryAPI, spare_pages: int) -> None:
    """At most ``spare_pages`` pages may be added to the database (the writer connection's limit)."""
    db = api.tier2.db
    pages = db.query_one("PRAGMA page_count")[0]
    db.execute(f"PRAGMA max_page_count = {pages + spare_pages}")


def _room(api: MemoryAPI) -> None:
    api.tier2.db.execute("PRAGMA max_page_count = 1073741823")


def _queue(api: MemoryAPI) -> list[tuple[int, str | None]]:
    return [(r["attempts"], r["last_error"]) for r in api.tier2.db.query("SELECT * FROM ingest_queue")]


# 0 spare pages: the turn cannot even move from the inbox into the queue; 6: it moves, but its
# episodes, chunks and knowledge do not fit.
@pytest.mark.parametrize("spare_pages", [0, 6])
def test_a_full_store_keeps_the_turn_queued_and_every_report_says_so(
    open_api: Callable[..., MemoryAPI], tmp_path: Path, spare_pages: int
) -> None:
    api = open_api()
    api.remember_turn("Maya moved to Lisbon.", "Noted.", "s1")
    assert api.flush(timeout=30)["data"]["drained"]
    episodes = api.tier2.db.query_one("SELECT count(*) FROM episodes")[0]
    _fill(api, spare_pages)
    assert api.remember_turn(LONG_TURN, "Noted.", "s1")["success"]  # the inbox is a file of its own
    for _ in range(7):  # more than the ingestor's max_attempts (5): a full disk never retires a turn
        flushed = api.flush(timeout=5)
        assert not flushed["success"], flushed
        assert flushed["meta"]["error_type"] == "storage_error"
        assert "no room to write" in flushed["error"] and "savepoint" not in flushed["error"]
    assert all(attempts == 0 for attempts, _ in _queue(api)), _queue(api)
    assert len(_queue(api)) == (1 if spare_pages else 0)  # else still in the inbox
    assert api.pending()["data"]["turns"] == 1
    failing, last = api.tier2.ingest_queue.failing()
    assert failing == 1 and "StorageFullError" in str(last)
    maintained = api.maintain()
    assert not maintained["success"], maintained
    assert maintained["data"]["failed"] == ["turn_queue"]
    assert "no room to write" in maintained["data"]["jobs"]["turn_queue"]["error"]
    report = status.collect(tmp_path, check=False)
    assert report.failing_turns == 1
    assert any("turn queue is stuck" in p for p in report.problems), report.problems
    # Room again: the turn is written once, and every report is healthy.
    _room(api)
    assert api.flush(timeout=30)["data"]["drained"]
    assert api.tier2.db.query_one("SELECT count(*) FROM episodes")[0] == episodes + 2
    assert _queue(api) == []
    assert api.maintain()["success"]
    assert status.collect(tmp_path, check=False).failing_turns == 0


def test_a_whole_transaction_rolled_back_by_sqlite_is_not_committed(tmp_path: Path) -> None:
    db = SqliteDatabase(tmp_path / "t.db")
    try:
        db.execute("CREATE TABLE t (x TEXT)")
        with pytest.raises(StorageError, match="rolled back by SQLite"), db.atomic() as conn:
            conn.execute("INSERT INTO t VALUES ('first')")
            conn.execute("ROLLBACK")  # what SQLite does itself on SQLITE_FULL / an I/O error
            conn.execute("INSERT INTO t VALUES ('autocommitted')")
        assert not db.in_transaction
        with db.atomic() as conn:  # the next transaction works
            conn.execute("INSERT INTO t VALUES ('later')")
        assert [r[0] for r in db.query("SELECT x FROM t WHERE x = 'later'")] == ["later"]
    finally:
        db.close()


_CHILD = textwrap.dedent(
    """
    import json, os, resource, sys
    from hermes_memory.api.memory_api import MemoryAPI

    home, turn = sys.argv[1], sys.argv[2]
    api = MemoryAPI(hermes_home=home, **{"tier3.embedding_model": "hashing", "tier3.backend": "memory"})
    api.remember_turn("Maya moved to Lisbon.", "Noted.", "s1")
    api.flush(timeout=30)
    db = api.tier2.db
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    before = db.query_one("SELECT count(*) FROM episodes")[0]
    api.remember_turn(turn, "Noted.", "s1")
    size = os.path.getsize(db.path)
    resource.setrlimit(resource.RLIMIT_FSIZE, (size + 16384, resource.RLIM_INFINITY))
    flushed = api.flush(timeout=5)
    queue = [list(r) for r in db.query("SELECT attempts, last_error FROM ingest_queue")]
    maintained = api.maintain("prune")
    resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
    after = api.flush(timeout=30)
    written = db.query_one("SELECT count(*) FROM episodes")[0] - before
    api.close()
    print(json.dumps({"flushed": flushed, "queue": queue, "maintained": maintained, "after": after,
                      "written": written}, default=str))
    """
)


def test_a_file_size_limit_is_reported_as_such_and_the_turn_waits(tmp_path: Path) -> None:
    done = subprocess.run(
        # long enough that the turn's own text and index pass the limit (it queues few chunks)
        [sys.executable, "-c", _CHILD, str(tmp_path), LONG_TURN * 8],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    flushed = out["flushed"]
    assert not flushed["success"], flushed
    assert "file size limit" in flushed["error"], flushed["error"]
    assert "savepoint" not in flushed["error"]  # SQLite's follow-up error no longer hides the cause
    assert len(out["queue"]) == 1 and out["queue"][0][0] == 0, out["queue"]  # queued, no attempt used
    assert not out["maintained"]["success"] and "turn_queue" in out["maintained"]["data"]["failed"]
    assert out["after"]["data"]["drained"], out["after"]
    assert out["written"] == 2  # the turn's two messages, written once
