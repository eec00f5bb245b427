"""Tier 2 database: atomic()/savepoints, numbered migrations, re-opening, refusing files it must not
touch (newer schema, not SQLite, read-only directory), and the FTS5 query sanitiser."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_memory.errors import StorageError
from hermes_memory.tier2 import Database, SqliteDatabase, Tier2
from hermes_memory.tier2.schema import MIGRATIONS, Migration, current_version, migrate
from hermes_memory.tier2.search import MAX_TERMS, bm25_to_score, fts_match, fts_terms

LATEST = MIGRATIONS[-1].version


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = SqliteDatabase(tmp_path / "scratch.db")
    database.execute("CREATE TABLE t (x INTEGER NOT NULL CHECK (x < 100))")
    yield database
    database.close()


@pytest.fixture
def tier2(tmp_path: Path) -> Iterator[Tier2]:
    store = Tier2.open(tmp_path / "t2.db")
    yield store
    store.close()


def values(db: Database) -> list[int]:
    return [row["x"] for row in db.query("SELECT x FROM t ORDER BY x")]


def table_names(path: Path) -> set[str]:
    conn = sqlite3.connect(path)
    try:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
    finally:
        conn.close()


# -- atomic() -----------------------------------------------------------------------------------


def test_atomic_commits_everything_together(db: Database) -> None:
    with db.atomic() as conn:
        conn.execute("INSERT INTO t VALUES (1)")
        conn.execute("INSERT INTO t VALUES (2)")
        assert db.in_transaction
    assert not db.in_transaction
    assert values(db) == [1, 2]


def test_atomic_rolls_back_on_any_exception_and_reraises_it(db: Database) -> None:
    with pytest.raises(KeyError), db.atomic() as conn:
        conn.execute("INSERT INTO t VALUES (1)")
        raise KeyError("boom")
    assert values(db) == []
    assert not db.in_transaction


def test_sqlite_failure_inside_atomic_is_a_storage_error_and_rolls_back(db: Database) -> None:
    with pytest.raises(StorageError), db.atomic() as conn:
        conn.execute("INSERT INTO t VALUES (1)")
        conn.execute("INSERT INTO t VALUES (500)")  # violates the CHECK
    assert values(db) == []


def test_nested_atomic_is_a_savepoint(db: Database) -> None:
    with db.atomic() as conn:
        conn.execute("INSERT INTO t VALUES (1)")
        with pytest.raises(ValueError), db.atomic() as inner:
            inner.execute("INSERT INTO t VALUES (2)")
            raise ValueError("inner only")
        with db.atomic() as inner:
            inner.execute("INSERT INTO t VALUES (3)")
    assert values(db) == [1, 3]


def test_outer_failure_discards_a_released_savepoint(db: Database) -> None:
    with pytest.raises(RuntimeError), db.atomic() as conn:
        with db.atomic() as inner:
            inner.execute("INSERT INTO t VALUES (2)")
        conn.execute("INSERT INTO t VALUES (1)")
        raise RuntimeError("outer")
    assert values(db) == []


def test_three_levels_of_nesting(db: Database) -> None:
    with db.atomic() as c1:
        c1.execute("INSERT INTO t VALUES (1)")
        with db.atomic() as c2:
            c2.execute("INSERT INTO t VALUES (2)")
            with pytest.raises(StorageError), db.atomic() as c3:
                c3.execute("INSERT INTO t VALUES (3)")
                c3.execute("INSERT INTO t VALUES (999)")
            c2.execute("INSERT INTO t VALUES (4)")
    assert values(db) == [1, 2, 4]


def test_database_is_usable_after_a_failed_transaction(db: Database) -> None:
    with pytest.raises(StorageError), db.atomic() as conn:
        conn.execute("INSERT INTO t VALUES (1000)")
    with db.atomic() as conn:
        conn.execute("INSERT INTO t VALUES (5)")
    assert values(db) == [5]


def test_query_keys_runs_an_in_list_in_batches(db: Database) -> None:
    db.execute("CREATE TABLE keyed(k INTEGER, tag TEXT)")
    with db.atomic() as conn:
        rows = [(i, ("even", "odd")[i % 2]) for i in range(1200)]
        conn.executemany("INSERT INTO keyed VALUES (?, ?)", rows)
    keys = list(range(0, 1200, 3))  # 400 keys, several batches of 7
    sql = "SELECT k FROM keyed WHERE k IN ({keys}) AND tag = ? ORDER BY k"
    found = db.query_keys(sql, keys, ["even"], batch=7)
    assert [r["k"] for r in found] == [k for k in keys if k % 2 == 0]
    assert db.query_keys("SELECT k FROM keyed WHERE k IN ({keys})", []) == []


def test_wal_mode_and_a_closed_database(tmp_path: Path) -> None:
    database = SqliteDatabase(tmp_path / "w.db")
    row = database.query_one("PRAGMA journal_mode")
    assert row is not None and row[0] == "wal"
    database.close()
    database.close()  # idempotent
    with pytest.raises(StorageError, match="closed"):
        database.query("SELECT 1")
    with pytest.raises(StorageError, match="closed"), database.atomic():
        pass


def test_backup_to_copies_a_consistent_database(tier2: Tier2, tmp_path: Path) -> None:
    tier2.facts.store("Backups are taken through the SQLite online API.")
    dest = tmp_path / "copy.db"
    tier2.db.backup_to(dest)
    copy = Tier2.open(dest)
    try:
        assert [f.fact.content for f in copy.facts.query("backups", touch=False)] == [
            "Backups are taken through the SQLite online API."
        ]
    finally:
        copy.close()


# -- migrations ---------------------------------------------------------------------------------


def test_migrations_are_numbered_from_one_without_gaps() -> None:
    assert [m.version for m in MIGRATIONS] == list(range(1, len(MIGRATIONS) + 1))


def test_migrating_an_empty_database_builds_the_whole_schema(tmp_path: Path) -> None:
    path = tmp_path / "fresh.db"
    database = SqliteDatabase(path)
    try:
        assert current_version(database) == 0
        assert migrate(database) == [m.version for m in MIGRATIONS]
        assert current_version(database) == LATEST
        rows = database.query("SELECT version, name FROM memory_schema_version ORDER BY version")
        assert [(r["version"], r["name"]) for r in rows] == [(m.version, m.name) for m in MIGRATIONS]
    finally:
        database.close()
    names = table_names(path)
    for table in (
        "facts",
        "entities",
        "entity_aliases",
        "relations",
        "fact_entities",
        "timeline",
        "episodes",
        "memory_audit_log",
        "memory_schema_version",
        "facts_fts",
        "entities_fts",
        "timeline_fts",
        "episodes_fts",
    ):
        assert table in names, table
    conn = sqlite3.connect(path)
    try:
        fact_columns = {r[1] for r in conn.execute("PRAGMA table_info(facts)")}
    finally:
        conn.close()
    assert {
        "valid_from",
        "valid_to",
        "recorded_at",
        "superseded_at",
        "superseded_by",
        "source_episodes",
        "extractor",
        "expires_at",
        "access_count",
        "last_accessed",
    } <= fact_columns


def test_reopening_keeps_data_and_applies_nothing(tmp_path: Path) -> None:
    path = tmp_path / "t2.db"
    first = Tier2.open(path)
    stored = first.facts.store("Reopening must keep every fact.")
    first.entities.ensure("Atlas", "project", aliases=["Project Atlas"])
    first.close()

    second = Tier2.open(path)
    try:
        assert migrate(second.db) == []
        rows = second.db.query("SELECT version FROM memory_schema_version")
        assert len(rows) == len(MIGRATIONS)
        assert second.facts.get(stored.fact.uuid, touch=False).content == "Reopening must keep every fact."
        assert second.entities.resolve("project atlas").name == "Atlas"
        assert [s.fact.uuid for s in second.facts.query("reopening", touch=False)] == [stored.fact.uuid]
    finally:
        second.close()


def test_only_newer_migrations_are_applied(tmp_path: Path) -> None:
    database = SqliteDatabase(tmp_path / "m.db")
    try:
        migrate(database)
        extra = Migration(LATEST + 1, "add_notes", "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);")
        assert migrate(database, (*MIGRATIONS, extra)) == [LATEST + 1]
        assert migrate(database, (*MIGRATIONS, extra)) == []
        assert current_version(database) == LATEST + 1
        database.execute("INSERT INTO notes(body) VALUES ('x')")
    finally:
        database.close()


def test_a_failing_migration_leaves_the_previous_version_intact(tmp_path: Path) -> None:
    database = SqliteDatabase(tmp_path / "m.db")
    try:
        migrate(database)
        broken = Migration(
            LATEST + 1,
            "broken",
            "CREATE TABLE half_done (id INTEGER PRIMARY KEY);\nCREATE TABLE oops (syntax error here;\n",
        )
        with pytest.raises(StorageError):
            migrate(database, (*MIGRATIONS, broken))
        assert current_version(database) == LATEST
        # DDL is transactional in SQLite: the first statement of the failed migration is gone too.
        assert database.query_one("SELECT 1 FROM sqlite_master WHERE name = 'half_done'") is None
    finally:
        database.close()


def test_a_newer_schema_version_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "future.db"
    store = Tier2.open(path)
    store.facts.store("Written by a future release.")
    with store.db.atomic() as conn:
        conn.execute(
            "INSERT INTO memory_schema_version(version, name, applied_at) VALUES (?, 'future', 0)",
            (LATEST + 50,),
        )
    store.close()

    with pytest.raises(StorageError, match="newer"):
        Tier2.open(path)
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("SELECT max(version) FROM memory_schema_version").fetchone()[0] == LATEST + 50
        assert conn.execute("SELECT content FROM facts").fetchall() == [("Written by a future release.",)]
    finally:
        conn.close()


# -- files it must not touch --------------------------------------------------------------------


@pytest.mark.parametrize(
    "payload",
    [
        b"# My notes\nThis is a markdown file, not a database.\n",
        b"\x00" * 4096,
        b"SQLite format 3\x00" + b"\xff" * 200,
    ],
    ids=["text", "zeros", "sqlite-header-then-garbage"],
)
def test_a_file_that_is_not_sqlite_is_refused_and_untouched(tmp_path: Path, payload: bytes) -> None:
    path = tmp_path / "tier2.db"
    path.write_bytes(payload)
    before = path.stat()
    with pytest.raises(StorageError) as info:
        Tier2.open(path)
    assert str(path) in str(info.value)
    assert path.read_bytes() == payload
    assert path.stat().st_mtime_ns == before.st_mtime_ns
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tier2.db"]  # no -wal / -shm left behind


def test_a_second_open_in_this_process_keeps_the_first_connections_locks(tmp_path: Path) -> None:
    # Closing any descriptor of the file drops this process's POSIX locks on it. If opening a second
    # Database did that, another process closing its last connection would think it was alone, and
    # checkpoint and delete the WAL under our live connection (its later commits were lost that way).
    path = tmp_path / "tier2.db"
    first = SqliteDatabase(path)
    first.execute("CREATE TABLE t(x)")
    second = SqliteDatabase(path)
    try:
        other = "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute('INSERT INTO t VALUES (1)')"
        subprocess.run([sys.executable, "-c", other + "; c.commit(); c.close()", str(path)], check=True)
        assert Path(f"{path}-wal").exists(), "the other process deleted the WAL we still have open"
        with first.atomic() as conn:
            conn.execute("INSERT INTO t VALUES (2)")
        with second.atomic() as conn:
            conn.execute("INSERT INTO t VALUES (3)")
    finally:
        first.close()
        second.close()
    check = sqlite3.connect(path)
    try:
        assert sorted(r[0] for r in check.execute("SELECT x FROM t")) == [1, 2, 3]
    finally:
        check.close()


def test_a_directory_in_place_of_the_db_file_is_a_storage_error(tmp_path: Path) -> None:
    (tmp_path / "tier2.db").mkdir()
    with pytest.raises(StorageError):
        Tier2.open(tmp_path / "tier2.db")


@pytest.fixture
def read_only_dir(tmp_path: Path) -> Iterator[Path]:
    """A directory nobody (root included) can create files in: chattr +i for root, else chmod 555."""
    target = tmp_path / "ro"
    target.mkdir()
    existing = Tier2.open(target / "existing.db")
    existing.facts.store("Stored before the directory became read-only.")
    existing.close()
    if os.geteuid() == 0:
        chattr = shutil.which("chattr")
        if chattr is None:
            pytest.skip("running as root and chattr is not installed: cannot make a read-only directory")
        done = subprocess.run([chattr, "+i", str(target)], capture_output=True, text=True)
        if done.returncode != 0:
            pytest.skip(f"chattr +i not supported here: {done.stderr.strip()}")
        try:
            yield target
        finally:
            subprocess.run([chattr, "-i", str(target)], check=True)
    else:
        target.chmod(0o555)
        try:
            yield target
        finally:
            target.chmod(0o755)


def test_a_new_db_in_a_read_only_directory_is_a_storage_error(read_only_dir: Path) -> None:
    with pytest.raises(StorageError):
        Tier2.open(read_only_dir / "new.db")
    with pytest.raises(StorageError):
        Tier2.open(read_only_dir / "sub" / "new.db")
    assert not (read_only_dir / "new.db").exists()


def test_an_existing_db_in_a_read_only_directory_is_a_storage_error(read_only_dir: Path) -> None:
    with pytest.raises(StorageError) as info:
        store = Tier2.open(read_only_dir / "existing.db")
        # Opening may succeed on some systems; then the first write must fail cleanly.
        try:
            store.facts.store("This write cannot land.")
        finally:
            store.close()
    assert "existing.db" in str(info.value)


# -- FTS5 sanitiser -----------------------------------------------------------------------------

NASTY_QUERIES = [
    '"',
    '""',
    '"unbalanced',
    "'single'",
    "AND",
    "OR",
    "NOT",
    "NEAR",
    "python AND",
    "OR python",
    "NOT python",
    "python NOT rust",
    "NEAR(python rust)",
    "NEAR(python rust, 2)",
    "*",
    "pyth*",
    "*python",
    "-python",
    "python -rust",
    "^python",
    "content:python",
    "facts_fts:python",
    "(",
    ")",
    "((python",
    "python))",
    "(python OR",
    "{python rust}",
    "[python]",
    "python + rust",
    "a\u200bb",
    "python\tthe\nrust",
    "ÄÖÜ ß café",
    "日本語",
    "🐍 python",
    ":",
    "::",
    "-",
    "^",
    "'",
    "\\",
    "%",
    "_",
    "python;DROP TABLE facts",
]


@pytest.mark.parametrize("query", NASTY_QUERIES)
def test_fts_match_quotes_every_term(query: str) -> None:
    match = fts_match(query)
    if match is None:
        assert fts_terms(query) == []
        return
    for part in match.split(" OR "):
        assert part.startswith('"') and part.endswith('"')
        assert '"' not in part[1:-1]


def test_fts_terms_drop_stop_words_but_keep_a_stop_word_only_query() -> None:
    assert fts_terms("Where does Maya work?") == ["maya", "work"]
    assert fts_terms("the and") == ["the", "and"]
    assert fts_terms("Python python PYTHON") == ["python"]
    assert fts_terms("  ") == []
    assert fts_match("?!*()") is None


def test_fts_terms_drop_what_an_apostrophe_leaves_of_a_possessive_or_contraction() -> None:
    # The index splits "Maya's" into "maya" and "s": a query's "s" would match every possessive.
    assert fts_terms("Maya's dog") == ["maya", "dog"]
    assert fts_terms("Maya’s dog isn't here, we'll see") == ["maya", "dog", "isn", "here", "see"]
    assert fts_match("maya works", mode="and") == '"maya" AND "works"'


def test_fts_terms_are_capped() -> None:
    text = " ".join(f"word{i}" for i in range(MAX_TERMS * 3))
    assert len(fts_terms(text)) == MAX_TERMS


def test_bm25_score_is_in_the_unit_interval_and_monotonic() -> None:
    scores = [bm25_to_score(rank) for rank in (0.0, -0.5, -2.0, -10.0, 3.0)]
    assert all(0.0 <= s < 1.0 for s in scores)
    assert scores[0] < scores[1] < scores[2] < scores[3]


@pytest.mark.parametrize("query", NASTY_QUERIES)
def test_nasty_queries_never_reach_fts_as_syntax(tier2: Tier2, query: str) -> None:
    tier2.facts.store("Python is the language of the Atlas project.")
    tier2.facts.store("Rust powers the routing engine.")
    tier2.facts.store("NOT AND OR NEAR are words here, not operators.")
    found = tier2.facts.query(query, touch=False)
    terms = fts_terms(query)
    if "python" in terms:
        assert any("Python" in s.fact.content for s in found)
    if not terms:
        assert found == []
    # Entities and episodes share the sanitiser.
    tier2.entities.query(query)
    tier2.episodes.search(query)


def test_operator_words_are_searchable_as_plain_words(tier2: Tier2) -> None:
    tier2.facts.store("NOT AND OR NEAR are words here, not operators.")
    tier2.facts.store("Something unrelated.")
    assert [s.fact.content for s in tier2.facts.query("NEAR", touch=False)] == [
        "NOT AND OR NEAR are words here, not operators."
    ]


def test_bm25_ranks_the_better_match_first(tier2: Tier2) -> None:
    tier2.facts.store("Postgres is a database.")
    tier2.facts.store("Atlas stores its routes in the Postgres database with PostGIS routes.")
    tier2.facts.store("The weather in Hamburg is rainy.")
    found = tier2.facts.query("atlas postgres routes", touch=False)
    assert found[0].fact.content.startswith("Atlas stores")
    assert len(found) == 2
    assert found[0].score > found[1].score > 0.0


def test_fts_index_follows_updates_and_hard_deletes(tier2: Tier2) -> None:
    a = tier2.facts.store("Atlas caches routes in Redis.").fact
    b = tier2.facts.store("Lena lives in Lisbon.").fact
    tier2.facts.update(a.uuid, content="Atlas caches routes in Memcached.")
    assert tier2.facts.query("redis", touch=False) == []
    assert [s.fact.uuid for s in tier2.facts.query("memcached", touch=False)] == [a.uuid]
    tier2.facts.delete(b.uuid, soft=False)
    assert tier2.db.query("SELECT rowid FROM facts_fts WHERE facts_fts MATCH '\"lisbon\"'") == []
    # FTS5's own consistency check between the index and its content table.
    tier2.db.execute("INSERT INTO facts_fts(facts_fts) VALUES ('integrity-check')")


def test_filters_that_reject_the_best_matches_still_fill_the_limit(tier2: Tier2) -> None:
    # Sixty short, strong "zeta" matches are below the confidence filter; the three facts that pass it
    # rank behind all of them, so the search must look past its first candidate pool.
    with tier2.db.atomic():
        for i in range(60):
            tier2.facts.store(f"zeta zeta {i}", confidence=0.1)
        wanted = {
            tier2.facts.store(
                f"A much longer sentence that mentions zeta once, number {i}.", confidence=0.9
            ).fact.uuid
            for i in range(3)
        }
    found = tier2.facts.query("zeta", min_confidence=0.5, limit=3, touch=False)
    assert {s.fact.uuid for s in found} == wanted
    assert len(tier2.facts.query("zeta", limit=10, touch=False)) == 10


def test_ranked_search_equals_ranking_the_whole_match_set(tier2: Tier2) -> None:
    with tier2.db.atomic():
        for i in range(120):
            tier2.facts.store(
                f"Fact {i} about {'postgres ' * (i % 4 + 1)}and {'routing ' * (i % 3)}in project {i % 7}.",
                category="project" if i % 2 else "general",
                confidence=(i % 10) / 10,
            )
    for text, category, conf, limit in [
        ("postgres", None, 0.0, 10),
        ("postgres routing", "project", 0.5, 7),
        ("routing", "general", 0.8, 25),
        ("project 3", None, 0.3, 1),
    ]:
        found = tier2.facts.query(text, category=category, min_confidence=conf, limit=limit, touch=False)
        params: list[object] = [fts_match(text), conf]
        extra = ""
        if category is not None:
            extra = " AND f.category = ?"
            params.append(category)
        expected = tier2.db.query(
            "SELECT f.uuid, bm25(facts_fts) AS rank FROM facts_fts JOIN facts f ON f.id = facts_fts.rowid "
            f"WHERE facts_fts MATCH ? AND f.confidence >= ?{extra} ORDER BY rank LIMIT ?",
            [*params, limit],
        )
        # Equal scores may come in any order: compare the score sequence and the strictly-better set.
        assert [round(s.score, 9) for s in found] == [round(bm25_to_score(r["rank"]), 9) for r in expected]
        cutoff = found[-1].score
        better = {r["uuid"] for r in expected if round(bm25_to_score(r["rank"]), 9) > round(cutoff, 9)}
        assert {s.fact.uuid for s in found if round(s.score, 9) > round(cutoff, 9)} == better, text
