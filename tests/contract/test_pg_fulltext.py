"""PostgreSQL full-text search (``tier2.pg.fulltext``) against SQLite FTS5 as the stores use it: the same
rows in a table indexed by the project's own FTS5 DDL (``schema_tables._fts``) and by ``fts_ddl``, and the
same MATCH expressions, must match the same rows with the same bm25 (1e-9 relative), before and after every
kind of write. The tokenizer's known differences from ``porter unicode61`` are pinned at the end, so a
change in either engine is noticed.

Starts a throw-away PostgreSQL cluster (``tests/pg_server.py``); without PostgreSQL installed it fails
with the install command.
"""

from __future__ import annotations

import itertools
import json
import math
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import pg_server
import psycopg
import pytest

from hermes_memory.tier2.pg.fulltext import (
    TEXT_SEARCH_SETUP,
    MatchSyntaxError,
    fts_ddl,
    index_mismatch,
    parse_match,
)
from hermes_memory.tier2.schema_tables import _fts
from hermes_memory.tier2.search import fts_match

pytestmark = [pytest.mark.server, pytest.mark.slow]

DATA = Path(__file__).resolve().parents[1] / "data"
_tables = itertools.count(1)


def _turns() -> list[tuple[str, str]]:
    """(speaker, text) of every turn of the extraction benchmark: conversational English."""
    data = json.loads((DATA / "extraction_bench.json").read_text(encoding="utf-8"))
    return [(t["speaker"], t["text"]) for c in data["conversations"] for t in c["turns"]]


def _odd_texts() -> list[str]:
    """The embedder tests' varied texts: code, URLs, numbers, accents, many scripts, repetition; not the
    ones with emoji (SQLite's Unicode tables predate some: see DIFFERENT)."""
    data = json.loads((DATA / "embedder_agreement.json").read_text(encoding="utf-8"))
    return [str(t) for t in data["texts"] if all(ord(c) < 0x1F000 for c in str(t))]


# Rows that exercise the tokenizer and the ranking edge cases: empty and NULL rows count in N.
EDGE_ROWS: list[tuple[str | None, str | None]] = [
    ("Maya", "Maya's e-mail is maya.lind@example.com; we'll see."),
    ("Joe", "Version 3.5 of x86-64 build, see https://example.org/a/b?q=1 and C:\\tmp\\file_name.txt"),
    ("Zoë", "Crème brûlée in Łódź, İstanbul and Zürich: naïve café owners"),
    ("ann", "going to the market; she is going to go to the market tomorrow"),
    ("", ""),
    (None, None),
    ("Ben", "foo_bar foo bar bar foo foo_bar"),
    ("Ben", "running runner runs ran psychology possibly trekking assembly"),
    ("user", 'He said "quoted" words and AND or OR near NEAR'),
    ("user", "apple apple apple apple banana"),
]

QUERIES = [
    '"maya"',
    '"maya" OR "market"',
    '"maya" AND "mail"',
    '"go" AND "market" OR "foo"',
    '"foo" OR "go" AND "market"',
    '"foo bar"',
    '"bar foo"',
    '"foo_bar"',
    '"foo_bar" OR "apple"',
    '"going to the market"',
    '"apple" OR "apple"',
    '"apple" AND "apple"',
    '"_"',
    '""',
    '"apple" OR ""',
    '"apple" AND ""',
    '"quot""ed"',
    '"and" OR "or" OR "near"',
    '"cafe" OR "lodz" OR "istanbul" OR "zurich" OR "naiv"',
    '"http" OR "com" OR "5" OR "64"',
    '   "psycholog"   OR  "possibl"  ',
    '"nothing_matches_this"',
]

BAD_QUERIES = [
    "apple",
    "apple*",
    '"apple"*',
    '"apple" "banana"',
    '"apple" NOT "banana"',
    '("apple" OR "banana")',
    'text:"apple"',
    'NEAR("apple" "banana")',
    '"apple" or "banana"',
    '"apple" OR',
    'OR "apple"',
    '"apple',
    "",
    "   ",
]


@pytest.fixture(scope="session")
def fts_db() -> Iterator[str]:
    """A database on a throw-away cluster, with ``TEXT_SEARCH_SETUP`` run (twice: it is idempotent)."""
    with pg_server.running() as server:
        url = server.database()
        with psycopg.connect(url) as conn:
            conn.execute(TEXT_SEARCH_SETUP)
            conn.execute(TEXT_SEARCH_SETUP)
        yield url


@pytest.fixture
def pg(fts_db: str) -> Iterator[psycopg.Connection[tuple[object, ...]]]:
    """An autocommit connection to ``fts_db`` (own fixture names: the contract conftest has ``pg_url``)."""
    with psycopg.connect(fts_db, autocommit=True) as conn:
        yield conn


class _Reader:
    """``index_mismatch``'s view of the database: ``query_one``."""

    def __init__(self, conn: psycopg.Connection[tuple[object, ...]]) -> None:
        self.conn = conn

    def query_one(self, sql: str) -> tuple[object, ...] | None:
        return self.conn.execute(sql).fetchone()


class Pair:
    """One content table in both engines: SQLite with the project's FTS5 index, PostgreSQL with
    ``fts_ddl``'s; ``run`` writes to both."""

    def __init__(self, pg: psycopg.Connection[tuple[object, ...]], columns: tuple[str, ...]) -> None:
        self.pg = pg
        self.table = f"content{next(_tables)}"
        self.columns = columns
        cols = ", ".join(f"{c} TEXT" for c in columns)
        self.lite = sqlite3.connect(":memory:", isolation_level=None)
        self.lite.executescript(
            f"CREATE TABLE {self.table} (id INTEGER PRIMARY KEY, {cols}, other TEXT);"
            + _fts(self.table, columns)
        )
        pg.execute(f"CREATE TABLE {self.table} (id BIGINT PRIMARY KEY, {cols}, other TEXT)")
        pg.execute(fts_ddl(self.table, columns))
        pg.execute(fts_ddl(self.table, columns))  # idempotent

    def run(self, sql: str, params: Sequence[object] = ()) -> None:
        """``sql`` (``?`` placeholders, ``{t}`` for the table) on both engines."""
        text = sql.replace("{t}", self.table)
        self.lite.execute(text, params)
        self.pg.execute(text.replace("?", "%s"), params)

    def insert(self, rows: Sequence[Sequence[object]]) -> None:
        """Rows of (id, *columns) in one statement each engine."""
        cols = ", ".join(self.columns)
        marks = ", ".join("?" * (len(self.columns) + 1))
        values = ", ".join(f"({marks})" for _ in rows)
        self.run(f"INSERT INTO {{t}} (id, {cols}) VALUES {values}", [v for row in rows for v in row])

    def fts5(self, query: str) -> dict[int, float]:
        fts = f"{self.table}_fts"
        rows = self.lite.execute(f"SELECT rowid, bm25({fts}) FROM {fts} WHERE {fts} MATCH ?", (query,))
        return {int(r): float(b) for r, b in rows}

    def postgres(self, query: str) -> dict[int, float]:
        rows = self.pg.execute(f"SELECT rowid, bm FROM {self.table}_fts_match(%s)", (query,)).fetchall()
        return {int(str(r)): float(str(b)) for r, b in rows}

    def assert_same(self, queries: Sequence[str]) -> None:
        """Each query matches the same rows in both engines, with bm25 equal to 1e-9 relative."""
        for query in queries:
            expected, got = self.fts5(query), self.postgres(query)
            assert set(got) == set(expected), f"{query!r}: rows {sorted(got)} != FTS5's {sorted(expected)}"
            for rowid, bm in expected.items():
                assert math.isclose(got[rowid], bm, rel_tol=1e-9), f"{query!r} row {rowid}: {got[rowid]} {bm}"

    def assert_counts(self) -> None:
        """The sharded counters hold the row count and total length the index holds, and the index is
        what re-tokenising every row gives (``index_mismatch``)."""
        stats = self.pg.execute(f"SELECT sum(n), sum(len) FROM {self.table}_fts_stats").fetchone()
        rows = self.pg.execute(f"SELECT count(*) FROM {self.table}").fetchone()
        length = self.pg.execute(f"SELECT coalesce(sum(dl), 0) FROM {self.table}_fts_docs").fetchone()
        assert stats == ((rows or [0])[0], (length or [0])[0])
        assert index_mismatch(_Reader(self.pg), self.table) is None


def _loaded(pg: psycopg.Connection[tuple[object, ...]]) -> Pair:
    pair = Pair(pg, ("speaker", "text"))
    rows = [*EDGE_ROWS, *_turns(), *((None, t) for t in _odd_texts())]
    pair.insert([(i, s, t) for i, (s, t) in enumerate(rows, 1)])
    return pair


def _project_queries(texts: Sequence[str]) -> list[str]:
    """MATCH expressions as the stores build them (``search.fts_match``), OR and AND, from ``texts``."""
    built = [fts_match(t, mode=mode) for t in texts for mode in ("or", "and")]
    return [q for q in built if q is not None]


def test_match_and_bm25_equal_fts5(pg: psycopg.Connection[tuple[object, ...]]) -> None:
    pair = _loaded(pg)
    pair.assert_same(QUERIES)
    pair.assert_same(_project_queries([t for _, t in _turns()] + _odd_texts()))
    pair.assert_counts()


def test_one_column_and_three_columns(pg: psycopg.Connection[tuple[object, ...]]) -> None:
    one = Pair(pg, ("content",))
    one.insert([(i, t) for i, (_, t) in enumerate(_turns(), 1)])
    one.assert_same(_project_queries([t for _, t in _turns()[::3]]))
    three = Pair(pg, ("name", "aliases", "description"))  # entities: aliases is a JSON array's text
    three.insert([(1, "Maya", '["Maya Lind", "May"]', "user's sister, lives in Lisbon"),
                  (2, "Biscuit", "[]", None), (3, "Lisbon", '["Lisboa"]', "city where Maya lives"),
                  (4, "May", None, "the month")])  # fmt: skip
    three.assert_same(['"maya"', '"may"', '"lisbon" OR "lisboa"', '"maya" AND "lisbon"', '"maya lind"'])


def test_writes_keep_the_index(pg: psycopg.Connection[tuple[object, ...]]) -> None:
    pair = _loaded(pg)
    queries = [*QUERIES, *_project_queries([t for _, t in _turns()[:40]])]
    steps = [
        ("INSERT INTO {t} (id, speaker, text) VALUES (?, ?, ?)", (1000, "Maya", "the market opens at 9")),
        ("UPDATE {t} SET text = ? WHERE id = ?", ("apple pie at the market", 1)),  # indexed column
        ("UPDATE {t} SET speaker = NULL, text = ? WHERE id = ?", ("foo bar", 2)),
        ("UPDATE {t} SET other = ? WHERE id <= ?", ("not indexed", 50)),  # other column only
        ("UPDATE {t} SET text = text || ? WHERE id BETWEEN ? AND 60", (" and the market", 20)),
        ("DELETE FROM {t} WHERE id = ?", (4,)),
        ("DELETE FROM {t} WHERE id BETWEEN ? AND 30", (10,)),
        (
            "INSERT INTO {t} (id, speaker, text) VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE SET text = ?",
            (1000, "Maya", "never inserted", "apple market again"),
        ),
        ("UPDATE {t} SET text = text WHERE id = ?", (1000,)),  # unchanged value
    ]
    for sql, params in steps:
        pair.run(sql, params)
        pair.assert_same(queries)
        pair.assert_counts()
    pair.run("DELETE FROM {t}")
    pair.assert_same(queries)
    pair.assert_counts()


def test_a_moved_key_moves_its_postings(pg: psycopg.Connection[tuple[object, ...]]) -> None:
    """``UPDATE … SET id`` re-indexes the row under its new id (the SQLite triggers fire on the text
    columns only, so FTS5 would keep the old rowid: not compared)."""
    pair = _loaded(pg)
    pg.execute(f"UPDATE {pair.table} SET id = 2000 WHERE id = 1")
    moved = pair.postgres('"maya"')
    assert 2000 in moved and 1 not in moved
    pg.execute(f"SELECT {pair.table}_fts_rebuild()")
    assert pair.postgres('"maya"') == moved
    pair.assert_counts()


def test_truncate_and_rebuild(pg: psycopg.Connection[tuple[object, ...]]) -> None:
    pair = _loaded(pg)
    before = {q: pair.postgres(q) for q in QUERIES}
    pg.execute(f"SELECT {pair.table}_fts_rebuild()")
    assert {q: pair.postgres(q) for q in QUERIES} == before
    pair.assert_counts()
    pg.execute(f"TRUNCATE {pair.table}")
    assert all(pair.postgres(q) == {} for q in QUERIES)
    pair.assert_counts()


def test_index_mismatch_names_what_differs(pg: psycopg.Connection[tuple[object, ...]]) -> None:
    pair = _loaded(pg)
    reader = _Reader(pg)
    assert index_mismatch(reader, pair.table) is None
    pg.execute(f"DELETE FROM {pair.table}_fts_postings WHERE rowid = 1 AND term = 'maya'")
    assert "1 postings differ from the rows" in (index_mismatch(reader, pair.table) or "")
    pg.execute(f"ALTER TABLE {pair.table} DISABLE TRIGGER {pair.table}_fts_ai")
    pg.execute(f"INSERT INTO {pair.table} (id, text) VALUES (5000, 'unindexed row')")
    pg.execute(f"ALTER TABLE {pair.table} ENABLE TRIGGER {pair.table}_fts_ai")
    problem = index_mismatch(reader, pair.table) or ""
    assert "rows indexed wrongly or not at all" in problem and "row count or total length" not in problem
    pg.execute(f"UPDATE {pair.table}_fts_stats SET n = n + 1 WHERE slot = 0")
    assert "row count or total length is off" in (index_mismatch(reader, pair.table) or "")
    pg.execute(f"SELECT {pair.table}_fts_rebuild()")
    assert index_mismatch(reader, pair.table) is None
    with pytest.raises(ValueError, match="not a plain identifier"):
        index_mismatch(reader, "x; DROP TABLE y")


def test_concurrent_writers_keep_the_counts(pg: psycopg.Connection[tuple[object, ...]], fts_db: str) -> None:
    """Writers in parallel transactions (each holding its counter slot until commit) neither wait on one
    another's counter nor lose an update; the index equals a rebuild afterwards."""
    pair = Pair(pg, ("speaker", "text"))
    turns, errors = _turns(), []

    def write(worker: int) -> None:
        try:
            with psycopg.connect(fts_db) as conn:
                for i in range(40):
                    with conn.transaction():
                        rowid = worker * 1000 + i
                        conn.execute(f"INSERT INTO {pair.table} (id, speaker, text) VALUES (%s, %s, %s)",
                                     (rowid, *turns[(worker * 40 + i) % len(turns)]))  # fmt: skip
                        if i % 3 == 2:
                            conn.execute(f"DELETE FROM {pair.table} WHERE id = %s", (rowid - 1,))
        except psycopg.Error as exc:
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(w,)) for w in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    pair.assert_counts()
    postings = f"SELECT term, rowid, tf, dl FROM {pair.table}_fts_postings ORDER BY 1, 2"
    written = pg.execute(postings).fetchall()
    pg.execute(f"SELECT {pair.table}_fts_rebuild()")
    assert pg.execute(postings).fetchall() == written
    pair.assert_counts()


def test_malformed_expression_raises(pg: psycopg.Connection[tuple[object, ...]]) -> None:
    pair = Pair(pg, ("text",))
    for query in BAD_QUERIES:
        with pytest.raises(psycopg.errors.SyntaxError, match="malformed full-text query") as raised:
            pair.postgres(query)
        assert repr(query)[1:-1] in str(raised.value)
        with pytest.raises(MatchSyntaxError, match="malformed full-text query"):
            parse_match(query)
    with pytest.raises(psycopg.errors.SyntaxError, match="malformed full-text query NULL"):
        pg.execute(f"SELECT * FROM {pair.table}_fts_match(NULL)")


def test_parse_match_reads_the_grammar() -> None:
    assert parse_match('"a" OR "b c" AND "d"') == (("a",), ("b c", "d"))
    assert parse_match('  "say ""hi"""  AND  "x"') == (('say "hi"', "x"),)
    assert parse_match('""') == (("",),)
    for query in QUERIES:
        parse_match(query)


def _fts5_tokens(text: str) -> list[str]:
    """What FTS5's ``porter unicode61`` makes of ``text``, in order."""
    lite = sqlite3.connect(":memory:")
    lite.executescript(
        "CREATE VIRTUAL TABLE f USING fts5(x, tokenize='porter unicode61');"
        "CREATE VIRTUAL TABLE v USING fts5vocab(f, 'instance');"
    )
    lite.execute("INSERT INTO f(rowid, x) VALUES (1, ?)", (text,))
    return [str(t) for (t,) in lite.execute("SELECT term FROM v ORDER BY \"offset\"")]


def _pg_tokens(pg: psycopg.Connection[tuple[object, ...]], text: str) -> list[str]:
    rows = pg.execute("SELECT term FROM hm_fts_tokens(%s) ORDER BY pos", (text,)).fetchall()
    return [str(t) for (t,) in rows]


AGREED = [
    "Maya's", "we'll", "don’t", "e-mail", "3.5", "10,000 $5.99", "x86-64 v1.2.3", "C++ C#",
    "https://example.com/path?q=1&x=two#frag", "bob@example.com", "/usr/local/bin", "foo_bar",
    "Crème Brûlée Æsop straße Łódź", "ÀÉÎÕÜ naïve café cafe\u0301", "İstanbul ǅemal ΣΊΣΥΦΟΣ ſ µ",
    "½ ² Ⅻ ① ❶", "книги читают", "日本語のテキスト", "हिन्दी भाषा", "ά ǖ ệ", "x\u00a0y a\u200bb co\u00adop",
    "is as us a I", "generously dying running caresses ponies relational happy",
    "psychology technologies possibly incredibly assembly trekked specced grokking", "ab" * 40 + "ing",
    "Zürich Straße Grüße Hauptstraße Øre große",
]  # fmt: skip


def test_tokens_agree_with_unicode61(pg: psycopg.Connection[tuple[object, ...]]) -> None:
    for text in AGREED:
        assert _pg_tokens(pg, text) == _fts5_tokens(text), text


# (text, FTS5's tokens, PostgreSQL's): the differences the module docstring lists.
DIFFERENT = [
    ("eed ies sses", ["e", "ie", "sse"], ["eed", "i", "ss"]),  # non-words, snowball's Porter
    ("x\u058dx", ["x\u058dx"], ["x", "x"]),  # a symbol newer than SQLite's Unicode tables
    ("x\u0528x", ["x\u0528x"], ["x\u0529x"]),  # a case pair newer than SQLite's tables
    ("x\U00010107x", ["x\U00010107x"], ["x", "x"]),  # an "other number" outside the BMP
    ("tacos 🌮 🙂🙃 🍕", ["taco", "🌮", "🙂🙃"], ["taco"]),  # emoji newer than SQLite's tables: tokens there
]


def test_known_tokenizer_differences(pg: psycopg.Connection[tuple[object, ...]]) -> None:
    for text, fts5, postgres in DIFFERENT:
        assert _fts5_tokens(text) == fts5, text
        assert _pg_tokens(pg, text) == postgres, text
