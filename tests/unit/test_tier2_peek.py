"""Looking at a Tier 2 file without opening the store (``tier2/peek.py``, what ``status`` reads)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hermes_memory.tier2.peek import Failures, count_rows, fts5_available, inbox_failure, queue_failures
from hermes_memory.tier2.turn_inbox import TurnInbox


def test_a_missing_file_reads_as_empty_and_is_not_created(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    assert count_rows(path, "chunks") == 0
    assert queue_failures(path) == Failures(0, None)
    assert inbox_failure(path) == Failures(0, None)
    assert not path.exists()


def test_a_file_that_is_not_sqlite_cannot_be_read(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    path.write_bytes(b"not a database at all, just some bytes " * 50)
    assert count_rows(path, "embed_queue") is None
    assert queue_failures(path) is None


def test_only_the_queue_and_chunk_tables_are_counted(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="cannot count rows of 'facts; DROP TABLE facts'"):
        count_rows(tmp_path / "memory.db", "facts; DROP TABLE facts")


def test_the_inbox_error_and_its_waiting_turns_are_read(tmp_path: Path) -> None:
    inbox = TurnInbox(tmp_path / "inbox.db")
    try:
        assert inbox.add("t1", "{}", 1.0) and inbox.add("t2", "{}", 2.0)
        assert inbox_failure(tmp_path / "inbox.db") == Failures(0, None)  # waiting, but nothing failed
        inbox.note_error("disk full", 3.0)
        assert inbox_failure(tmp_path / "inbox.db") == Failures(2, "disk full")
        assert count_rows(tmp_path / "inbox.db", "inbox") == 2
    finally:
        inbox.close()


def test_fts5_is_there() -> None:
    assert fts5_available()  # Tier 2 cannot work without it; CI's Python has it
