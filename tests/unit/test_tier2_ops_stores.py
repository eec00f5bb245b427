"""The store functions behind ``ops`` (backup, doctor, forget, import) where their own behaviour is not
already pinned by the ops tests: the import's staging database, the table-name guards of the doctor's
store-wide reads, and the file checks a restore runs on a copied database."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_memory.scoping import ScopeView
from hermes_memory.tier2 import Tier2, files, maintenance
from hermes_memory.tier2.mentions import MentionQueries
from hermes_memory.tier2.staging import BATCH, StagingDb


@pytest.fixture
def tier2(tmp_path: Path) -> Iterator[Tier2]:
    store = Tier2.open(tmp_path / "t2.db")
    yield store
    store.close()


def test_staging_reads_back_each_tables_rows_in_order_across_batches(tmp_path: Path) -> None:
    path = tmp_path / "stage.db"
    stage = StagingDb(path)
    for i in range(BATCH + 3):  # past one batch: a commit happens in the middle
        stage.add_row("facts" if i % 2 else "episodes", f'{{"n": {i}}}')
    stage.add_vector(("m", "h" * 64, 1, b"\x00\x00\x80\x3f"))
    stage.commit()
    facts = list(stage.rows("facts"))
    assert facts[:2] == ['{"n": 1}', '{"n": 3}'] and len(facts) == (BATCH + 3) // 2
    assert list(stage.rows("entities")) == []
    assert [row for batch in stage.vectors() for row in batch] == [("m", "h" * 64, 1, b"\x00\x00\x80\x3f")]
    stage.close()
    assert not path.exists()


def test_staging_remembers_remapped_uuids_and_links_for_later(tmp_path: Path) -> None:
    stage = StagingDb(tmp_path / "stage.db")
    try:
        assert stage.mapped("old") is None
        stage.remap("old", "new")
        stage.remap("old", "newer")  # the last mapping wins
        assert stage.mapped("old") == "newer"
        stage.add_later("fact-1", "fact-0")
        assert [pair for batch in stage.later() for pair in batch] == [("fact-1", "fact-0")]
    finally:
        stage.close()


def test_staging_refuses_a_path_that_exists(tmp_path: Path) -> None:
    path = tmp_path / "stage.db"
    path.write_text("someone else's", encoding="utf-8")
    with pytest.raises(FileExistsError):
        StagingDb(path)
    assert path.read_text(encoding="utf-8") == "someone else's"


def test_maintenance_reads_refuse_a_table_they_do_not_count(tier2: Tier2) -> None:
    with pytest.raises(ValueError, match="sqlite_master"):
        maintenance.row_count(tier2.db, "sqlite_master")
    with pytest.raises(ValueError, match="facts"):
        maintenance.stuck(tier2.db, "facts", 5)
    with pytest.raises(ValueError, match="facts"):
        maintenance.last_error(tier2.db, "facts")


def _chunk(tier2: Tier2) -> None:
    with tier2.db.atomic() as conn:
        tier2.chunks.add(
            conn, ["Bob prefers green tea"], source_kind="note", source_type="user", timestamp=1.0
        )


def test_maintenance_counts_a_store_wide_queue_and_its_last_error(tier2: Tier2) -> None:
    _chunk(tier2)
    assert maintenance.row_count(tier2.db, "chunks") == 1
    assert maintenance.queued(tier2.db, op="upsert") == maintenance.row_count(tier2.db, "embed_queue") == 1
    assert maintenance.queued(tier2.db, op="delete") == 0
    assert maintenance.last_error(tier2.db, "embed_queue") is None
    items = tier2.embed_queue.pending(10)
    for _ in range(3):
        tier2.embed_queue.fail(items, "the embedder is down")
    assert maintenance.stuck(tier2.db, "embed_queue", 3) == len(items)
    assert maintenance.last_error(tier2.db, "embed_queue") == "the embedder is down"
    maintenance.retry_stuck(tier2.db, 3)
    assert maintenance.stuck(tier2.db, "embed_queue", 1) == 0


def test_mention_queries_refuse_a_table_that_holds_no_records(tier2: Tier2) -> None:
    with tier2.db.atomic() as conn:
        q = MentionQueries(conn, ScopeView.default())
        with pytest.raises(ValueError, match="entity_aliases"):
            q.has_record("entity_aliases", "x")


def test_a_copied_database_file_reports_integrity_and_counts(tier2: Tier2, tmp_path: Path) -> None:
    tier2.facts.store("Bob prefers green tea")
    _chunk(tier2)
    copy = tmp_path / "copy.db"
    tier2.db.backup_to(copy)
    with files.DatabaseFile(copy) as opened:
        assert opened.integrity() == ("ok",)
        assert opened.counts() == {**dict.fromkeys(files.COUNTED, 0), "facts": 1, "chunks": 1}
    assert files.row_counts(tier2.db) == {**dict.fromkeys(files.COUNTED, 0), "facts": 1, "chunks": 1}
    assert files.integrity_messages(tier2.db) == ["ok"]
    assert files.compact(tier2.db) is True  # nobody else reads: the WAL is truncated
