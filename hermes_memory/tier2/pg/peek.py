"""Looks at a Tier 2 store on a PostgreSQL server without opening it (``tier2.peek`` for a server): one
read-only session that never creates, migrates or locks anything, for ``hermes-memory status``. It reads
the shared queues' depths, the failed turns, the maintenance runs and who holds each lease (the host and
program of its connection).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import psycopg
from psycopg import sql as pg_sql

from hermes_memory.tier2.engines import profile_schema, safe_url
from hermes_memory.tier2.leases import NAMES, Holder
from hermes_memory.tier2.peek import LAST_RUNS_SQL, QUEUE_FAILURES_SQL, Failures, LastRun
from hermes_memory.tier2.pg.dialect import translate

_CONNECT_TIMEOUT_S = 5


@dataclass
class ServerPeek:
    """What status shows of a store on a server; ``error`` says why it could not be read (the rest is
    then empty)."""

    schema_version: int | None = None
    queued_turns: int | None = None
    embeddings: int | None = None
    turns_behind: int | None = None
    chunks: int | None = None
    failures: Failures | None = None
    last_runs: dict[str, LastRun] = field(default_factory=dict)
    holders: dict[str, Holder] = field(default_factory=dict)
    error: str | None = None


def peek(url: str, profile: str) -> ServerPeek:
    """Read the store of ``profile`` (its schema, unless the URL names one) at ``url``. Never raises for
    the server: an unreachable server, refused credentials or a missing store go into ``error``."""
    from hermes_memory.tier2.chunks import CHUNKS_COLLECTION, TURNS_BEHIND_SQL
    from hermes_memory.tier2.pg.database import lease_holder, lease_holder_sql

    out = ServerPeek()
    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=_CONNECT_TIMEOUT_S) as conn:
            conn.execute("SET default_transaction_read_only = on")
            if "search_path" not in urlsplit(url).query:
                schema = pg_sql.Identifier(profile_schema(profile))
                conn.execute(pg_sql.SQL("SET search_path TO {}").format(schema))
            found = conn.execute("SELECT to_regclass('memory_schema_version') IS NOT NULL").fetchone()
            if found is None or not found[0]:
                out.error = f"no store at {safe_url(url)} yet (the first process to open it creates it)"
                return out
            row = conn.execute("SELECT max(version) FROM memory_schema_version").fetchone()
            out.schema_version = None if row is None or row[0] is None else int(row[0])
            out.queued_turns = _count(conn, "SELECT count(*) FROM ingest_queue")
            out.embeddings = _count(conn, "SELECT count(*) FROM embed_queue")
            out.chunks = _count(conn, "SELECT count(*) FROM chunks")
            out.turns_behind = _count(conn, translate(TURNS_BEHIND_SQL).sql, (CHUNKS_COLLECTION,))
            failed = conn.execute(QUEUE_FAILURES_SQL).fetchone()
            out.failures = Failures(int(failed[0]), failed[1]) if failed else Failures(0, None)
            out.last_runs = {r[0]: LastRun(*r) for r in conn.execute(LAST_RUNS_SQL).fetchall()}
            for name in NAMES:
                held = conn.execute(lease_holder_sql().encode(), (name,)).fetchone()
                if held is not None:
                    out.holders[name] = lease_holder(held)
    except psycopg.Error as exc:
        out.error = f"{safe_url(url)} cannot be read: {str(exc).strip() or type(exc).__name__}"
    return out


def _count(conn: psycopg.Connection[Any], sql: str, params: tuple[Any, ...] = ()) -> int:
    row = conn.execute(sql.encode(), params).fetchone()  # the text is this module's or the dialect's
    return int(row[0]) if row is not None else 0


__all__ = ["ServerPeek", "peek"]
