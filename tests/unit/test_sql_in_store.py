"""Every SQL statement lives in the store package (issue 15): no module of ``hermes_memory/`` outside
``hermes_memory/tier2/`` runs a statement on a database or connection, or holds the text of one.

Read with ``ast``, not by running anything: (a) a call of ``.execute``/``.executemany``/
``.executescript``/``.query``/``.query_one``/``.query_keys`` on a database or connection (a receiver
named like ``db``/``conn``/``cursor``, or an unnamed one such as ``sqlite3.connect(...)``;
``FactStore.query``, a vector client's ``query`` or a plan's ``execute`` are not SQL); (b) a string
constant or f-string, other than a docstring, that starts like a SQL statement
(``SELECT ... FROM``, ``INSERT INTO``, ``UPDATE t SET``, ``DELETE FROM``, ``CREATE TABLE``, ``PRAGMA x``,
``BEGIN``, ``WITH x AS (`` ...). Lower-case text counts only when it reads as SQL (a ``?``, ``*``, ``=``,
``(`` or ``;`` in it), so an English "select one from the list" or "create collection" is not SQL.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "hermes_memory"
STORE = PACKAGE / "tier2"

# Files of ops/ and api/ that still ran SQL when this test was written: their rewrites (issue 15) move
# the statements into tier2/. This list must end EMPTY; an entry whose file no longer has SQL fails the
# test below, so it shrinks as the rewrites land. Nothing outside ops/ and api/ may be added.
ALLOWED: frozenset[str] = frozenset({
})  # fmt: skip

_RUNS_SQL = frozenset({"execute", "executemany", "executescript"})
_DB_READS = frozenset({"query", "query_one", "query_keys"})
# A receiver that is a Database or a sqlite3 connection/cursor by name: db, _db, conn, read_conn, cursor.
_DB_NAME = re.compile(r"(?:^|_)(?:db|conn|connection|cursor|cur)$", re.IGNORECASE)
_STATEMENT = re.compile(
    r"""^\s*(?:
        SELECT\s.*?\bFROM\b | SELECT\s+(?:\d|\*|count\s*\(|coalesce\s*\(|max\s*\(|min\s*\()
      | (?:INSERT|REPLACE)\s+(?:OR\s+\w+\s+)?INTO\s | UPDATE\s+\w+\s+SET\s | DELETE\s+FROM\s
      | CREATE\s+(?:TEMP\w*\s+|UNIQUE\s+|VIRTUAL\s+)?(?:TABLE|INDEX|TRIGGER|VIEW)\b
      | DROP\s+(?:TABLE|INDEX|TRIGGER|VIEW)\b | ALTER\s+TABLE\s | PRAGMA\s+\w
      | VACUUM\b(?:\s+INTO\b|\s*;?\s*$) | (?:ATTACH|DETACH)\s+(?:DATABASE\s+)?\S
      | BEGIN(?:\s+(?:IMMEDIATE|DEFERRED|EXCLUSIVE))?(?:\s+TRANSACTION)?\s*;?\s*$
      | SAVEPOINT\s+\w | RELEASE\s+(?:SAVEPOINT\s+)?\w+\s*$ | ROLLBACK\b | COMMIT\s*;?\s*$
      | WITH\s+(?:RECURSIVE\s+)?\w+(?:\s*\([^)]*\))?\s+AS\s*\(
    )""",
    re.IGNORECASE | re.VERBOSE | re.DOTALL,
)
_SQL_MARK = re.compile(r"[?*=(;]")


def is_sql(text: str) -> bool:
    """Whether a string constant is a SQL statement (or the start of one)."""
    match = _STATEMENT.match(text)
    if match is None:
        return False
    keyword = text.split(maxsplit=1)[0].rstrip(";")
    return keyword.isupper() or _SQL_MARK.search(text) is not None


def _receiver_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def sql_found(source: str) -> list[tuple[int, str]]:
    """(line, what) for every SQL call and SQL string in ``source``."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            name, receiver = node.func.attr, _receiver_name(node.func.value)
            on_db = receiver is not None and _DB_NAME.search(receiver) is not None
            # sqlite3.connect(...).execute(...): a statement run on a connection no name says is one
            unnamed = receiver is None and name in _RUNS_SQL
            if (name in _RUNS_SQL or name in _DB_READS) and (on_db or unnamed):
                found.append((node.lineno, f"runs SQL: .{name}(...) on {receiver or 'an expression'}"))
        elif isinstance(node, ast.JoinedStr):
            skip.update(id(part) for part in node.values)
            text = "".join(p.value if isinstance(p, ast.Constant) else "x" for p in node.values)
            if is_sql(str(text)):
                found.append((node.lineno, f"SQL text: f{text[:60]!r}"))
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in skip
            and is_sql(node.value)
        ):
            found.append((node.lineno, f"SQL text: {node.value[:60]!r}"))
    return sorted(set(found))


def _outside_store() -> dict[str, list[tuple[int, str]]]:
    out: dict[str, list[tuple[int, str]]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.is_relative_to(STORE):
            continue
        found = sql_found(path.read_text(encoding="utf-8"))
        if found:
            out[path.relative_to(PACKAGE).as_posix()] = found
    return out


def test_no_module_outside_the_store_package_runs_or_holds_sql() -> None:
    offenders = [
        f"hermes_memory/{name}:{line}: {what}"
        for name, found in _outside_store().items()
        if name not in ALLOWED
        for line, what in found
    ]
    assert not offenders, "SQL outside hermes_memory/tier2/ (move it into a store method):\n" + "\n".join(
        offenders
    )


def test_the_allow_list_holds_only_ops_and_api_files_that_still_have_sql() -> None:
    assert all(name.startswith(("ops/", "api/")) for name in ALLOWED)
    stale = sorted(ALLOWED - set(_outside_store()))
    assert not stale, f"no SQL left in {stale}: remove them from ALLOWED (the list must end empty)"


@pytest.mark.parametrize(
    "source",
    [
        'db.execute("VACUUM")',
        "self._conn.executemany(sql, rows)",
        "tier2.db.query(sql)",
        "ctx.tier2.db.query_one(sql, (1,))",
        "conn.executescript(script)",
        'sqlite3.connect(path).execute("VACUUM")',
        'x = "SELECT uuid FROM facts WHERE id = ?"',
        'x = f"SELECT count(*) FROM {table}"',
        'x = f"UPDATE {table} SET a = ?"',
        'x = "insert or ignore into t(a) values (?)"',
        'x = "DELETE FROM entities WHERE uuid = ?"',
        'x = "PRAGMA foreign_keys = ON"',
        'x = "WITH recent AS (SELECT 1) SELECT * FROM recent"',
        'x = "BEGIN IMMEDIATE"',
        'x = "CREATE VIRTUAL TABLE t USING fts5(x)"',
        'x = ("SELECT a, b " "FROM t")',
    ],
)
def test_sql_is_found(source: str) -> None:
    assert sql_found(source), source


@pytest.mark.parametrize(
    "source",
    [
        'def f():\n    """Select the facts from the store and update the graph."""',
        'help = "select one of the facts from the list"',
        'p = _sub(sub, "ensure", "create an entity or return the existing one")',
        'self._call("create collection", self._client.create_collection, name)',
        'self._call("drop collection", self._client.delete_collection, name)',
        'errors = "replace"',
        'mode = "with-provider"',
        'action = "delete"',
        "tier2.facts.query(None, limit=100)",
        "self._col.query(query_embeddings=[v], n_results=5)",
        "_forget.execute(conn, t2, plan, actor=actor)",
        'starts = s.upper().startswith(("SELECT", "WITH"))',
    ],
)
def test_english_and_other_apis_are_not_sql(source: str) -> None:
    assert not sql_found(source), source
