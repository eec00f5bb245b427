r"""The reads a forget plans with, and the write that carries the plan out (``ops.forget``,
``ops.mentions``): rows of one ``ScopeView`` that mention a name, or that belong by link to rows
already planned, all in the caller's transaction.

A mention is a match of a compiled pattern (``match``), bound on the connection as an SQL function, so
SQLite filters the rows and only the uuids come back. On PostgreSQL the same pattern (a case-insensitive
alternation of escaped literals between ``(?<!\w)`` and ``(?!\w)``, which the server's regular
expressions read alike) is a transaction setting the schema's functions of the same names match."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterable
from typing import Any

from hermes_memory.scoping import ScopeView
from hermes_memory.tier2.audit import visible_entries

_MATCH_FN = "hm_forget_match"
_MATCH_JSON_FN = "hm_forget_match_json"
# What a turn *says*: its words without who said them. A turn is never forgotten because its speaker
# is the name (every assistant turn would match the assistant's name, every user turn the user's).
_SAID_FN = "hm_forget_match_said"
_TURN_FN = "hm_forget_match_turn"
# "Speaker: " at the start of a line of an indexed turn text ("Hermes: ...", a window's two lines).
_SPEAKER_PREFIX = re.compile(r"(?m)^[^:\n]{1,80}: ")
# The text a row of each table is matched on when the forget preview counts related names.
_COUNTED_TEXT = {
    "episodes": "text",
    "facts": "content",
    "timeline": "title || ' ' || coalesce(description, '')",
}
_RECORD_TABLES = frozenset({"facts", "episodes", "timeline", "relations", "chunks"})


def _j(values: Iterable[str | int]) -> str:
    return json.dumps(sorted(values))


def _queued_in(view: ScopeView) -> tuple[str, list[str]]:
    """SQL selecting the queued turns of the view (a turn's scope is in its payload)."""
    if view.admin:
        return "1 = 1", []
    marks = ", ".join("?" * len(view.readable))
    return f"coalesce(json_extract(payload, '$.scope'), 'default') IN ({marks})", list(view.readable)


class MentionQueries:
    """Reads of one view's rows in the caller's transaction ``conn``. The ``*_mentioning`` reads match
    the pattern last given to ``match``; the others follow links. Only rows the view can read are
    returned: forgetting under one scope never touches another's."""

    def __init__(self, conn: sqlite3.Connection, view: ScopeView):
        self._conn = conn
        self._view = view

    @property
    def view(self) -> ScopeView:
        return self._view

    def match(self, pattern: re.Pattern[str] | None) -> None:
        """Match ``pattern`` from now on (None: nothing matches)."""

        if not hasattr(self._conn, "create_function"):
            # PostgreSQL: the schema's functions of these names match the transaction's setting, the
            # same pattern in the server's regular expressions (``pg.schema.FORGET_MATCH``).
            self._conn.execute(
                "SELECT set_config('hm.forget_re', ?, true)", ("" if pattern is None else pattern.pattern,)
            )
            return

        def match(value: object) -> int:
            return int(pattern is not None and isinstance(value, str) and pattern.search(value) is not None)

        def match_json(value: object) -> int:
            # Audit diffs are JSON; match the decoded text so an escaped name (\u00e9) is found too.
            if not isinstance(value, str):
                return 0
            try:
                decoded = json.dumps(json.loads(value), ensure_ascii=False)
            except ValueError:
                decoded = value
            return match(decoded)

        def match_said(value: object) -> int:
            return match(_SPEAKER_PREFIX.sub("", value)) if isinstance(value, str) else 0

        def match_turn(value: object) -> int:
            # A queued turn's payload: only its messages' texts count, never their speakers.
            try:
                messages = json.loads(value).get("messages") if isinstance(value, str) else None
            except (ValueError, AttributeError):
                return match(value)
            if not isinstance(messages, list):
                return match(value)
            return int(any(isinstance(m, dict) and match(m.get("text")) for m in messages))

        self._conn.create_function(_MATCH_FN, 1, match, deterministic=True)
        self._conn.create_function(_MATCH_JSON_FN, 1, match_json, deterministic=True)
        self._conn.create_function(_SAID_FN, 1, match_said, deterministic=True)
        self._conn.create_function(_TURN_FN, 1, match_turn, deterministic=True)

    def _ids(self, sql: str, params: Iterable[object] = ()) -> set[Any]:
        return {row[0] for row in self._conn.execute(sql, tuple(params)).fetchall()}

    def _scoped(self, column: str = "scope") -> tuple[str, list[str]]:
        return self._view.where(column)

    # -- looking up the target -----------------------------------------------------------------------
    def entities_with_alias(self, alias_key: str) -> set[str]:
        """Entities of the view with this alias key (``entities.name_key`` form)."""
        scoped, sp = self._scoped("e.scope")
        return self._ids(
            "SELECT a.entity_uuid FROM entity_aliases a JOIN entities e ON e.uuid = a.entity_uuid "
            f"WHERE a.alias_key = ? AND {scoped}",
            (alias_key, *sp),
        )

    def entity_names(self, uuids: Iterable[str]) -> list[str]:
        """The names and aliases of the entities ``uuids``, each entity's name before its aliases."""
        terms: list[str] = []
        for row in self._conn.execute(
            "SELECT name, aliases FROM entities WHERE uuid IN (SELECT value FROM json_each(?))", (_j(uuids),)
        ):
            terms.append(row["name"])
            terms.extend(str(a) for a in json.loads(row["aliases"] or "[]"))
        return terms

    def entity_name(self, uuid: str) -> str | None:
        """The name of the view's entity ``uuid``, None when the view has none."""
        scoped, sp = self._scoped()
        row = self._conn.execute(
            f"SELECT name FROM entities WHERE uuid = ? AND {scoped}", (uuid, *sp)
        ).fetchone()
        return None if row is None else str(row["name"])

    def has_record(self, table: str, uuid: str) -> bool:
        """Whether the view has a record ``uuid`` in ``table`` (facts, episodes, timeline, relations,
        chunks)."""
        if table not in _RECORD_TABLES:
            raise ValueError(f"not a table of records: {table!r}")
        scoped, sp = self._scoped()
        return (
            self._conn.execute(f"SELECT 1 FROM {table} WHERE uuid = ? AND {scoped}", (uuid, *sp)).fetchone()
            is not None
        )

    def record_texts(self, table: str, uuid: str) -> list[str]:
        """The text of the view's record ``uuid`` in ``table`` as it is shown (a turn's words, a fact's
        statement, an event's title and description); none for a relation or chunk."""
        column = _COUNTED_TEXT.get(table)
        if column is None:
            return []
        scoped, sp = self._scoped()
        row = self._conn.execute(
            f"SELECT {column} FROM {table} WHERE uuid = ? AND {scoped}", (uuid, *sp)
        ).fetchone()
        return [str(row[0]).strip()] if row is not None and str(row[0]).strip() else []

    # -- rows that mention the pattern ----------------------------------------------------------------
    def entities_mentioning(self) -> set[str]:
        """Entities whose name, aliases or description mention the pattern."""
        scoped, sp = self._scoped()
        return self._ids(
            f"SELECT uuid FROM entities WHERE {scoped} AND "
            f"{_MATCH_FN}(name || ' ' || aliases || ' ' || coalesce(description, ''))",
            sp,
        )

    def facts_mentioning(self, entities: Iterable[str]) -> set[str]:
        """Facts whose content, subject or object mention the pattern, or linked to one of ``entities``."""
        scoped, sp = self._scoped()
        m = _MATCH_FN
        return self._ids(
            f"SELECT uuid FROM facts WHERE {scoped} AND ({m}(content) OR {m}(coalesce(subject, ''))"
            f" OR {m}(coalesce(object, '')) OR uuid IN (SELECT fact_uuid FROM fact_entities"
            "   WHERE entity_uuid IN (SELECT value FROM json_each(?))))",
            (*sp, _j(entities)),
        )

    def relations_of(self, entities: Iterable[str]) -> set[str]:
        """Relations from or to one of ``entities``."""
        scoped, sp = self._scoped()
        ents = _j(entities)
        return self._ids(
            f"SELECT uuid FROM relations WHERE {scoped}"
            " AND (from_entity_id IN (SELECT value FROM json_each(?))"
            " OR to_entity_id IN (SELECT value FROM json_each(?)))",
            (*sp, ents, ents),
        )

    def episodes_mentioning(self) -> set[str]:
        """Episodes whose text mentions the pattern (never because of who spoke them)."""
        scoped, sp = self._scoped()
        return self._ids(f"SELECT uuid FROM episodes WHERE {scoped} AND {_MATCH_FN}(text)", sp)

    def events_mentioning(self, entities: Iterable[str], facts: Iterable[str]) -> set[str]:
        """Timeline events whose title or description mention the pattern, or that relate to one of
        ``entities`` or ``facts``."""
        scoped, sp = self._scoped()
        return self._ids(
            f"SELECT uuid FROM timeline WHERE {scoped}"
            f" AND ({_MATCH_FN}(title || ' ' || coalesce(description, ''))"
            " OR EXISTS (SELECT 1 FROM json_each(timeline.related_entities) je"
            "   WHERE je.value IN (SELECT value FROM json_each(?)))"
            " OR EXISTS (SELECT 1 FROM json_each(timeline.related_facts) jf"
            "   WHERE jf.value IN (SELECT value FROM json_each(?))))",
            (*sp, _j(entities), _j(facts)),
        )

    def chunks_mentioning(self) -> set[str]:
        """Chunks whose text mentions the pattern (a turn's chunks: in what it says, not its speaker)."""
        scoped, sp = self._scoped()
        return self._ids(
            f"SELECT uuid FROM chunks WHERE {scoped} AND CASE WHEN source_kind IN ('episode', "
            f"'episode_window') THEN {_SAID_FN}(text) ELSE {_MATCH_FN}(text) END",
            sp,
        )

    def queued_mentioning(self) -> set[int]:
        """Queued turns (ingest queue ids) whose payload mentions the pattern."""
        mine, mp = _queued_in(self._view)
        return self._ids(f"SELECT id FROM ingest_queue WHERE {mine} AND {_TURN_FN}(payload)", mp)

    def audit_mentioning(self) -> set[int]:
        """Audit entries the view reads whose diff mentions the pattern."""
        visible, vp = visible_entries(self._view)
        return self._ids(f"SELECT id FROM memory_audit_log WHERE {visible} AND {_MATCH_JSON_FN}(diff)", vp)

    def runs_mentioning(self) -> set[int]:
        """Maintenance runs whose result or error mentions the pattern: store-wide records (counts only,
        no scope), so only the admin view reads them; none for another view or an older schema."""
        if not self._view.admin or not self._ids(
            "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", ("maintenance_runs",)
        ):
            return set()
        return self._ids(
            f"SELECT id FROM maintenance_runs"
            f" WHERE {_MATCH_JSON_FN}(result) OR {_MATCH_FN}(coalesce(error, ''))"
        )

    # -- rows that belong by link ---------------------------------------------------------------------
    def chunks_of(self, sources: Iterable[str]) -> set[str]:
        """Chunks whose source is one of ``sources``."""
        scoped, sp = self._scoped("c.scope")
        return self._ids(
            f"SELECT c.uuid FROM chunks c WHERE {scoped}"
            " AND c.source_uuid IN (SELECT value FROM json_each(?))",
            (*sp, _j(sources)),
        )

    def window_chunks(self, episodes: Iterable[str]) -> set[str]:
        """The window chunk of the turn after each of ``episodes`` (it quotes the episode)."""
        scoped, sp = self._scoped("c.scope")
        return self._ids(
            "SELECT c.uuid FROM json_each(?) j JOIN episodes e ON e.uuid = j.value"
            " JOIN episodes n ON n.id = (SELECT n2.id FROM episodes n2 WHERE n2.session_id = e.session_id"
            "   AND n2.scope = e.scope AND n2.id > e.id ORDER BY n2.id LIMIT 1)"
            f" JOIN chunks c ON c.source_uuid = n.uuid AND c.source_kind = 'episode_window' WHERE {scoped}",
            (_j(episodes), *sp),
        )

    def audit_about(self, targets: Iterable[str]) -> set[int]:
        """Audit entries the view reads about one of ``targets``."""
        visible, vp = visible_entries(self._view)
        return self._ids(
            f"SELECT id FROM memory_audit_log WHERE {visible}"
            " AND target_uuid IN (SELECT value FROM json_each(?))",
            (*vp, _j(targets)),
        )

    # -- the forget preview's related names -----------------------------------------------------------
    def texts_mentioning(self, limit: int) -> list[str]:
        """Up to ``limit`` episode texts and fact contents that mention the pattern."""
        scoped, sp = self._scoped()
        return [
            r[0] for r in self._conn.execute(
                f"SELECT text FROM episodes WHERE {scoped} AND {_MATCH_FN}(text) UNION ALL "
                f"SELECT content FROM facts WHERE {scoped} AND {_MATCH_FN}(content) LIMIT ?",
                (*sp, *sp, limit),
            )
        ]  # fmt: skip

    def count_mentioning(self, table: str, exclude: Iterable[str]) -> int:
        """Rows of ``table`` (episodes, facts, timeline) that mention the pattern, but ``exclude``."""
        scoped, sp = self._scoped()
        row = self._conn.execute(
            f"SELECT count(*) FROM {table} WHERE {scoped} AND {_MATCH_FN}({_COUNTED_TEXT[table]})"
            " AND uuid NOT IN (SELECT value FROM json_each(?))",
            (*sp, _j(exclude)),
        ).fetchone()
        return int(row[0])

    def entities_named(self, exclude: Iterable[str], *, limit: int = 50) -> list[tuple[str, str]]:
        """(uuid, name) of up to ``limit`` entities whose name or aliases mention the pattern, but
        ``exclude``, by name."""
        scoped, sp = self._scoped()
        return [
            (r[0], r[1]) for r in self._conn.execute(
                f"SELECT uuid, name FROM entities WHERE {scoped} AND {_MATCH_FN}(name || ' ' || aliases)"
                " AND uuid NOT IN (SELECT value FROM json_each(?)) ORDER BY name LIMIT ?",
                (*sp, _j(exclude), limit),
            )
        ]  # fmt: skip


def delete_planned(
    conn: sqlite3.Connection,
    *,
    chunks: Iterable[str],
    events: Iterable[str],
    relations: Iterable[str],
    facts: Iterable[str],
    episodes: Iterable[str],
    entities: Iterable[str],
    ingest_ids: Iterable[int],
    audit_ids: Iterable[int],
    run_ids: Iterable[int],
    redacted: str,
) -> None:
    """In the caller's transaction: delete the planned rows (children first), clear ``superseded_by``
    pointers at a deleted fact, and replace the diff of the audit entries and the result of the
    maintenance runs ``audit_ids``/``run_ids`` with ``redacted``."""
    deletes: list[tuple[str, str, list[str] | list[int]]] = [
        ("chunks", "uuid", sorted(chunks)),
        ("timeline", "uuid", sorted(events)),
        ("relations", "uuid", sorted(relations)),
        ("facts", "uuid", sorted(facts)),
        ("episodes", "uuid", sorted(episodes)),
        ("entities", "uuid", sorted(entities)),
        ("ingest_queue", "id", sorted(ingest_ids)),
    ]
    for table, column, values in deletes:
        if values:
            conn.execute(
                f"DELETE FROM {table} WHERE {column} IN (SELECT value FROM json_each(?))",
                (json.dumps(values),),
            )
    fact_list = deletes[3][2]
    # Superseded facts may point at a removed fact; the pointer is an id, but it would dangle.
    if fact_list:
        conn.execute(
            "UPDATE facts SET superseded_by = NULL WHERE superseded_by IN (SELECT value FROM json_each(?))",
            (json.dumps(fact_list),),
        )
    audit = sorted(audit_ids)
    if audit:
        conn.execute(
            "UPDATE memory_audit_log SET diff = ? WHERE id IN (SELECT value FROM json_each(?))",
            (redacted, json.dumps(audit)),
        )
    runs = sorted(run_ids)
    if runs:
        conn.execute(
            "UPDATE maintenance_runs SET result = ?, error = NULL"
            " WHERE id IN (SELECT value FROM json_each(?))",
            (redacted, json.dumps(runs)),
        )


__all__ = ["MentionQueries", "delete_planned"]
