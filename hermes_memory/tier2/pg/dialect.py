"""The stores' SQL, written for SQLite, as PostgreSQL runs it: a translation per statement text, cached.

What differs only in spelling is rewritten here; what SQLite has and PostgreSQL lacks as a function
(``instr``, ``json_extract``, a two-argument ``max``/``min``, ``strftime('%s', 'now')``) is created by the
schema (``pg.compat``), so the SQL keeps its meaning without a rewrite. Rewritten:

* placeholders: ``?`` becomes ``%s`` (a literal ``%`` is doubled);
* ``INSERT OR IGNORE`` becomes ``INSERT … ON CONFLICT DO NOTHING``;
* ``x [NOT] IN (SELECT value FROM json_each(?))`` becomes ``x = ANY(%s)`` (``<> ALL``), its parameter
  the decoded list, so the comparison keeps the column's type; any other ``json_each`` is ``hm_json_each``
  (text items of a JSON array, with their ``type``);
* FTS5: ``FROM x_fts … WHERE x_fts MATCH ?`` becomes ``FROM x_fts_match(%s) AS x_fts … WHERE TRUE`` and
  ``bm25(x_fts)`` becomes ``x_fts.bm`` (``pg.fulltext``: the same BM25);
* ``IS ?`` / ``IS NOT ?`` become ``IS [NOT] DISTINCT FROM``; ``ON 1`` becomes ``ON TRUE``; ``CROSS JOIN …
  ON`` (SQLite's join-order hint) is a ``JOIN`` and a unary ``+`` before a column (SQLite's "no index
  here" hint) goes; ``LIKE`` is ``ILIKE`` (SQLite's LIKE ignores case); ``CAST(… AS REAL)`` casts to a
  double.

A statement that only SQLite can run (PRAGMA, ``sqlite_master``, ``INSERT OR REPLACE``) raises
``UnsupportedStatement``: the caller has to ask the engine instead.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

_LITERAL = re.compile(r"('(?:[^']|'')*')")
_SQLITE_ONLY = re.compile(r"\bPRAGMA\b|\bsqlite_master\b|\bINSERT\s+OR\s+REPLACE\b|\bREPLACE\s+INTO\b", re.I)
_JSON_IN = re.compile(r"\b(NOT\s+)?IN\s*\(\s*SELECT\s+value\s+FROM\s+json_each\(\s*\?\s*\)\s*\)", re.I)
_FTS_FROM = re.compile(r"\b(FROM|JOIN)\s+(\w+_fts)\b(?!\s*\()", re.I)
_BM25 = re.compile(r"\bbm25\(\s*(\w+_fts)\s*\)", re.I)
_INSERT_IGNORE = re.compile(r"\bINSERT\s+OR\s+IGNORE\b", re.I)
_IS_PARAM = re.compile(r"\bIS\s+(NOT\s+)?\?", re.I)
_ON_ONE = re.compile(r"\bON\s+1\b(?!\s*[=<>])")
_LIKE = re.compile(r"(?<!I)\bLIKE\b", re.I)
_AS_REAL = re.compile(r"\bAS\s+REAL\b", re.I)
_JSON_EACH = re.compile(r"\bjson_each\(", re.I)
_RETURNING = re.compile(r"\bRETURNING\b", re.I)
_UNARY_PLUS = re.compile(
    r"(\b(?:AND|OR|WHERE|ON|NOT|WHEN|THEN|ELSE|SELECT)\s+|[(,=]\s*)\+(?=[A-Za-z_])", re.I
)
_CROSS_ON = re.compile(r"\bCROSS\s+JOIN\s+(\w+(?:\s+(?!ON\b)\w+)?)\s+ON\b", re.I)


class UnsupportedStatement(ValueError):
    """A statement only SQLite can run reached the PostgreSQL engine."""


@dataclass(frozen=True)
class Statement:
    """A translated statement: its text for psycopg and which parameters (by position) are JSON arrays
    to pass as lists (the ``= ANY`` rewrite)."""

    sql: str
    lists: frozenset[int]

    def bind(self, params: Sequence[Any] | dict[str, Any]) -> Sequence[Any] | dict[str, Any]:
        """``params`` as the translated text takes them."""
        if isinstance(params, dict):
            if self.lists:
                raise UnsupportedStatement("a json_each(?) list needs positional parameters")
            return params
        if not self.lists:
            return params
        return [_as_list(p) if i in self.lists else p for i, p in enumerate(params)]


def _as_list(value: Any) -> list[Any]:
    items = json.loads(value) if isinstance(value, str | bytes) else value
    if not isinstance(items, list):
        raise UnsupportedStatement(f"json_each(?) takes a JSON array, got {type(items).__name__}")
    return items


# ``PRAGMA table_info(t)``'s columns (name, notnull, dflt_value), from the information schema; the
# columns PostgreSQL adds for what SQLite has implicitly (``rowid``) are not the table's.
_TABLE_INFO = re.compile(r"^\s*PRAGMA\s+table_info\((\w+)\)\s*$", re.I)
_COLUMNS = (
    "SELECT column_name AS name, (is_nullable = 'NO') AS notnull, column_default AS dflt_value "
    "FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = '{table}' "
    "AND column_name <> 'rowid' ORDER BY ordinal_position"
)


@functools.lru_cache(maxsize=8192)
def translate(sql: str) -> Statement:
    """``sql`` (SQLite's spelling, ``?`` or ``:name`` placeholders) as PostgreSQL runs it. Raises
    UnsupportedStatement for a statement only SQLite can run."""
    info = _TABLE_INFO.match(sql)
    if info is not None:
        return Statement(_COLUMNS.format(table=info.group(1)), frozenset())
    parts = _LITERAL.split(sql)
    code = parts[0::2]
    if any(_SQLITE_ONLY.search(c) for c in code):
        raise UnsupportedStatement(f"SQLite-only statement reached PostgreSQL: {sql.strip()[:120]}")
    joined = "\0".join(code)  # literals out of the way; \0 marks where each one goes back
    joined, lists = _json_lists(joined)
    joined = _fulltext(joined)
    if _INSERT_IGNORE.search(joined):
        joined = _INSERT_IGNORE.sub("INSERT", joined)
        joined = _on_conflict_nothing(joined)
    joined = _IS_PARAM.sub(lambda m: "IS DISTINCT FROM ?" if m.group(1) else "IS NOT DISTINCT FROM ?", joined)
    joined = _ON_ONE.sub("ON TRUE", joined)
    joined = _CROSS_ON.sub(r"JOIN \1 ON", joined)
    joined = _UNARY_PLUS.sub(r"\1", joined)
    joined = _LIKE.sub("ILIKE", joined)
    joined = _AS_REAL.sub("AS DOUBLE PRECISION", joined)
    joined = _JSON_EACH.sub("hm_json_each(", joined)
    joined = joined.replace("%", "%%").replace("?", "%s")
    joined = re.sub(r"(?<![:\w]):([A-Za-z_]\w*)", r"%(\1)s", joined)
    pieces = joined.split("\0")
    literals = [p.replace("%", "%%") for p in parts[1::2]]
    out = [pieces[0]]
    for literal, piece in zip(literals, pieces[1:], strict=True):
        out.extend([literal, piece])
    return Statement("".join(out), frozenset(lists))


def _json_lists(code: str) -> tuple[str, list[int]]:
    """Rewrite ``[NOT] IN (SELECT value FROM json_each(?))``; returns the text and the positions of
    the parameters that become lists."""
    lists: list[int] = []

    def swap(m: re.Match[str]) -> str:
        lists.append(code.count("?", 0, m.start()))
        return "<> ALL(?)" if m.group(1) else "= ANY(?)"

    return _JSON_IN.sub(swap, code), lists


def _fulltext(code: str) -> str:
    """FTS5 tables become their ``_match`` functions (see the module docstring)."""
    for m in reversed(list(_FTS_FROM.finditer(code))):
        table = m.group(2)
        match = re.compile(rf"\b{table}\s+MATCH\s+\?", re.I).search(code, m.end())
        if match is None:
            raise UnsupportedStatement(f"{table} is read without a MATCH: {code.strip()[:120]}")
        if "?" in code[m.end() : match.start()]:
            raise UnsupportedStatement(f"a parameter between FROM {table} and MATCH: {code.strip()[:120]}")
        code = code[: match.start()] + "TRUE" + code[match.end() :]
        code = code[: m.start()] + f"{m.group(1)} {table}_match(?) AS {table}" + code[m.end() :]
    return _BM25.sub(lambda m: f"{m.group(1)}.bm", code)


def _on_conflict_nothing(code: str) -> str:
    """Append ``ON CONFLICT DO NOTHING`` at the end of the statement (before a RETURNING)."""
    body = code.rstrip().rstrip(";")
    found = _RETURNING.search(body)
    if found is None:
        return body + " ON CONFLICT DO NOTHING"
    return body[: found.start()] + "ON CONFLICT DO NOTHING " + body[found.start() :]


__all__ = ["Statement", "UnsupportedStatement", "translate"]
