"""Tier 2 schema: numbered migrations, each applied together with its record in one transaction."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass

from hermes_memory.errors import StorageError
from hermes_memory.tier2 import assistant_retire, verdicts
from hermes_memory.tier2.db import Database


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str
    # Runs after the SQL, in the same transaction (a data backfill the SQL cannot express).
    then: Callable[[sqlite3.Connection], object] | None = None


def _fts(table: str, columns: tuple[str, ...]) -> str:
    """An external-content FTS5 index over ``table`` kept in sync by triggers."""
    cols = ", ".join(columns)
    new = ", ".join(f"new.{c}" for c in columns)
    old = ", ".join(f"old.{c}" for c in columns)
    return f"""
CREATE VIRTUAL TABLE {table}_fts USING fts5(
    {cols}, content='{table}', content_rowid='id', tokenize='porter unicode61'
);
CREATE TRIGGER {table}_ai AFTER INSERT ON {table} BEGIN
    INSERT INTO {table}_fts(rowid, {cols}) VALUES (new.id, {new});
END;
CREATE TRIGGER {table}_ad AFTER DELETE ON {table} BEGIN
    INSERT INTO {table}_fts({table}_fts, rowid, {cols}) VALUES ('delete', old.id, {old});
END;
CREATE TRIGGER {table}_au AFTER UPDATE OF {cols} ON {table} BEGIN
    INSERT INTO {table}_fts({table}_fts, rowid, {cols}) VALUES ('delete', old.id, {old});
    INSERT INTO {table}_fts(rowid, {cols}) VALUES (new.id, {new});
END;
"""


_INITIAL = (
    """
CREATE TABLE facts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    uuid TEXT NOT NULL UNIQUE,
    content TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    category TEXT NOT NULL DEFAULT 'general',
    confidence REAL NOT NULL DEFAULT 1.0 CHECK (confidence >= 0.0 AND confidence <= 1.0),
    source_type TEXT NOT NULL,
    source_id TEXT,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    expires_at REAL,
    access_count INTEGER NOT NULL DEFAULT 0,
    last_accessed REAL,
    is_archived INTEGER NOT NULL DEFAULT 0,
    valid_from REAL,
    valid_to REAL,
    recorded_at REAL NOT NULL,
    superseded_at REAL,
    superseded_by TEXT,
    subject TEXT,
    predicate TEXT,
    object TEXT,
    source_episodes TEXT NOT NULL DEFAULT '[]',
    extractor TEXT NOT NULL DEFAULT 'manual',
    importance REAL NOT NULL DEFAULT 0.5,
    scope TEXT NOT NULL DEFAULT 'default'
);
CREATE INDEX idx_facts_category ON facts(category);
CREATE INDEX idx_facts_source ON facts(source_type, source_id);
CREATE INDEX idx_facts_created ON facts(created_at DESC);
CREATE INDEX idx_facts_hash ON facts(scope, content_hash);
CREATE INDEX idx_facts_confidence ON facts(confidence DESC);
CREATE INDEX idx_facts_subject ON facts(scope, subject, predicate);

CREATE TABLE entities (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    uuid TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    name_key TEXT NOT NULL,
    aliases TEXT NOT NULL DEFAULT '[]',
    entity_type TEXT NOT NULL,
    description TEXT,
    first_seen REAL NOT NULL,
    last_seen REAL NOT NULL,
    occurrence_count INTEGER NOT NULL DEFAULT 1,
    metadata TEXT NOT NULL DEFAULT '{}',
    scope TEXT NOT NULL DEFAULT 'default',
    UNIQUE (scope, name_key, entity_type)
);
CREATE INDEX idx_entities_name ON entities(name_key);
CREATE INDEX idx_entities_type ON entities(entity_type);

-- Case-insensitive lookup by canonical name or alias.
CREATE TABLE entity_aliases (
    alias_key TEXT NOT NULL,
    entity_uuid TEXT NOT NULL REFERENCES entities(uuid) ON DELETE CASCADE,
    PRIMARY KEY (alias_key, entity_uuid)
);
CREATE INDEX idx_entity_aliases_entity ON entity_aliases(entity_uuid);

CREATE TABLE relations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    uuid TEXT NOT NULL UNIQUE,
    from_entity_id TEXT NOT NULL REFERENCES entities(uuid) ON DELETE CASCADE,
    to_entity_id TEXT NOT NULL REFERENCES entities(uuid) ON DELETE CASCADE,
    relation_type TEXT NOT NULL,
    strength REAL NOT NULL DEFAULT 1.0 CHECK (strength >= 0.0 AND strength <= 1.0),
    evidence_fact_id TEXT REFERENCES facts(uuid) ON DELETE SET NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    scope TEXT NOT NULL DEFAULT 'default',
    UNIQUE (from_entity_id, to_entity_id, relation_type)
);
CREATE INDEX idx_relations_from ON relations(from_entity_id);
CREATE INDEX idx_relations_to ON relations(to_entity_id);
CREATE INDEX idx_relations_type ON relations(relation_type);

-- Which entities a fact mentions: joins facts to the graph.
CREATE TABLE fact_entities (
    fact_uuid TEXT NOT NULL REFERENCES facts(uuid) ON DELETE CASCADE,
    entity_uuid TEXT NOT NULL REFERENCES entities(uuid) ON DELETE CASCADE,
    PRIMARY KEY (fact_uuid, entity_uuid)
);
CREATE INDEX idx_fact_entities_entity ON fact_entities(entity_uuid);

CREATE TABLE timeline (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    uuid TEXT NOT NULL UNIQUE,
    event_type TEXT NOT NULL,
    title TEXT NOT NULL,
    description TEXT,
    related_entities TEXT NOT NULL DEFAULT '[]',
    related_facts TEXT NOT NULL DEFAULT '[]',
    session_id TEXT,
    timestamp REAL NOT NULL,
    end_timestamp REAL,
    importance REAL NOT NULL DEFAULT 0.5 CHECK (importance >= 0.0 AND importance <= 1.0),
    source_episodes TEXT NOT NULL DEFAULT '[]',
    created_at REAL NOT NULL,
    scope TEXT NOT NULL DEFAULT 'default'
);
CREATE INDEX idx_timeline_time ON timeline(timestamp DESC);
CREATE INDEX idx_timeline_type ON timeline(event_type);

-- Raw turns, verbatim: the ground truth every other record can be re-derived from.
CREATE TABLE episodes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    uuid TEXT NOT NULL UNIQUE,
    session_id TEXT NOT NULL,
    role TEXT NOT NULL,
    speaker TEXT,
    text TEXT NOT NULL,
    timestamp REAL NOT NULL,
    metadata TEXT NOT NULL DEFAULT '{}',
    content_hash TEXT NOT NULL,
    created_at REAL NOT NULL,
    scope TEXT NOT NULL DEFAULT 'default'
);
CREATE INDEX idx_episodes_session ON episodes(session_id, timestamp);
CREATE INDEX idx_episodes_time ON episodes(timestamp DESC);

CREATE TABLE memory_audit_log (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    timestamp REAL NOT NULL,
    action TEXT NOT NULL,
    tier TEXT NOT NULL,
    actor TEXT NOT NULL,
    target_uuid TEXT,
    diff TEXT,
    success INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX idx_audit_target ON memory_audit_log(target_uuid);
CREATE INDEX idx_audit_time ON memory_audit_log(timestamp DESC);
"""
    + _fts("facts", ("content",))
    + _fts("entities", ("name", "aliases", "description"))
    + _fts("timeline", ("title", "description"))
    + _fts("episodes", ("speaker", "text"))
)

# Tier 3's source of truth lives here: every embedded text is a chunk row, and the durable embed queue
# says which vectors still have to be written (or deleted) in the vector backend.
_SEMANTIC = """
CREATE TABLE chunks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    uuid TEXT NOT NULL UNIQUE,
    source_kind TEXT NOT NULL,
    source_uuid TEXT,
    chunk_index INTEGER NOT NULL DEFAULT 0,
    text TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    source_type TEXT NOT NULL,
    session_id TEXT,
    message_id INTEGER,
    category TEXT,
    timestamp REAL NOT NULL,
    created_at REAL NOT NULL,
    scope TEXT NOT NULL DEFAULT 'default'
);
CREATE INDEX idx_chunks_source ON chunks(source_kind, source_uuid);
CREATE INDEX idx_chunks_session ON chunks(session_id, timestamp);

CREATE TABLE embed_queue (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    collection TEXT NOT NULL,
    item_uuid TEXT NOT NULL,
    op TEXT NOT NULL CHECK (op IN ('upsert', 'delete')),
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    enqueued_at REAL NOT NULL,
    UNIQUE (collection, item_uuid, op)
);
""" + _fts("chunks", ("text",))

# Durable turn ingestion: remember_turn() commits one row here and returns; the worker turns each row into
# episodes, extracted knowledge and chunks in ONE transaction that also deletes the row, so a crash at
# any step rolls back to "still queued" and the retry produces the same final state.
_INGEST = """
CREATE TABLE ingest_queue (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    turn_uuid TEXT NOT NULL UNIQUE,
    payload TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    enqueued_at REAL NOT NULL
);
"""

# Maintenance jobs (consolidate, embed_queue, graph_refresh, prune): one row per run, written when the run
# starts ('running') and closed when it ends, so the scheduler knows durably what ran last, and a run cut
# short by a crash stays visible (and is simply run again: every job is idempotent).
_MAINTENANCE = """
CREATE TABLE maintenance_runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    job TEXT NOT NULL,
    triggered_by TEXT NOT NULL DEFAULT 'manual' CHECK (triggered_by IN ('manual', 'schedule')),
    started_at REAL NOT NULL,
    finished_at REAL,
    status TEXT NOT NULL CHECK (status IN ('running', 'ok', 'failed')),
    result TEXT,
    error TEXT
);
CREATE INDEX idx_maintenance_runs_job ON maintenance_runs(job, started_at DESC);
"""

# The scope an audit entry belongs to (see ``hermes_memory.scoping``): a scoped view reads only its own
# entries. Entries written before scoping have NULL, which means "default" (the only scope then used).
_AUDIT_SCOPE = """
ALTER TABLE memory_audit_log ADD COLUMN scope TEXT;
CREATE INDEX idx_audit_scope ON memory_audit_log(scope, id);
"""

# Recall looks up each candidate turn's previous and next turn in its session (``EpisodeStore.neighbours``);
# with only (session_id, timestamp) that scanned and sorted the whole session per candidate (150 ms for 400
# candidates at 10k turns), with this index it is one seek each (3 ms).
_EPISODE_NEIGHBOURS = """
CREATE INDEX idx_episodes_neighbours ON episodes(session_id, scope, id);
"""

# Vectors are Tier 2 data: one row per (embedder model, hash of the normalised text), written in the
# transaction that completes the text's embed-queue rows; a chunk finds its vector by its content_hash, so a
# text is embedded once per model and reindex / backend switch / restore / import join instead of embedding.
# The ANN engine is an index over these rows: ``vector_sync`` records, per engine and collection, how far it
# has caught up (chunk id, vector id, tombstone id high-water marks); ``chunk_tombstones`` tells engines and
# the exact index of other processes which chunks were deleted. Existing stores re-embed once (every chunk
# and entity is queued) and pending chunk deletes become tombstones.
_DURABLE_VECTORS = """
CREATE TABLE vectors (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    model_id TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    created_at REAL NOT NULL,
    UNIQUE (model_id, text_hash)
);
CREATE INDEX idx_chunks_hash ON chunks(content_hash);
CREATE TABLE chunk_tombstones (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    chunk_uuid TEXT NOT NULL
);
CREATE TRIGGER chunks_tombstone AFTER DELETE ON chunks BEGIN
    INSERT INTO chunk_tombstones(chunk_uuid) VALUES (old.uuid);
END;
CREATE TABLE vector_sync (
    engine TEXT NOT NULL,
    collection TEXT NOT NULL,
    model_id TEXT NOT NULL,
    chunk_mark INTEGER NOT NULL DEFAULT 0,
    vector_mark INTEGER NOT NULL DEFAULT 0,
    tombstone_mark INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (engine, collection)
);
INSERT INTO chunk_tombstones(chunk_uuid)
    SELECT item_uuid FROM embed_queue WHERE collection = 'memory_chunks' AND op = 'delete' ORDER BY id;
INSERT OR IGNORE INTO embed_queue(collection, item_uuid, op, enqueued_at)
    SELECT 'memory_chunks', uuid, 'upsert', CAST(strftime('%s', 'now') AS REAL) FROM chunks ORDER BY id;
INSERT OR IGNORE INTO embed_queue(collection, item_uuid, op, enqueued_at)
    SELECT 'entity_embeddings', uuid, 'upsert', CAST(strftime('%s', 'now') AS REAL) FROM entities ORDER BY id;
"""

# Threat verdicts stored with the rows recall shows (``tier2.verdicts``): scanned once when written, so the
# read path only escapes. NULL = never scanned (neutralised when read); existing rows are scanned here.
# Recall asks which of its candidate turns a superseded fact came from: only superseded facts are read.
_THREAT_VERDICTS = """
ALTER TABLE episodes ADD COLUMN threat INTEGER;
ALTER TABLE facts ADD COLUMN threat INTEGER;
CREATE INDEX idx_facts_superseded ON facts(superseded_at) WHERE superseded_at IS NOT NULL;
"""

# Erasures that finish (``ops.erasure``): a forget records what is left to purge (curated entries, vectors,
# the engine's files, graph files, compaction) in the transaction that deletes the Tier 2 rows; each step
# is struck off when done, and whatever a crash or a busy vector store left is finished on the next open,
# by ``doctor --repair`` or by the next forget. Holds ids and counts; curated entries only until removed.
_ERASURES = """
CREATE TABLE erasures (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    target TEXT NOT NULL,
    scope TEXT,
    actor TEXT NOT NULL,
    started_at REAL NOT NULL,
    finished_at REAL,
    steps TEXT NOT NULL,
    vector_ids TEXT NOT NULL DEFAULT '[]',
    curated TEXT
);
CREATE INDEX idx_erasures_open ON erasures(id) WHERE finished_at IS NULL;
"""

# Which detector the stored verdicts come from (``tier2.verdicts``): a newer one expires them and re-scans.
# Version 1 is the detector of migration 8; ``expire_stale`` then brings the store to the current one.
_THREAT_DETECTOR = """
CREATE TABLE threat_detector (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    version INTEGER NOT NULL,
    pending INTEGER NOT NULL DEFAULT 0
);
INSERT INTO threat_detector(id, version, pending) VALUES (1, 1, 0);
"""

# What recall reads, bounded at any size (``recall._reads``, ``FactStore.superseded_sources``):
# * ``fact_sources``: each fact's source turns (its ``source_episodes`` list as rows, kept by triggers), so
#   "which superseded facts came from these turns" reads those turns' links, not every superseded fact;
# * ``recall_generation``: a number bumped by every commit that changes a row recall reads (episodes; facts
#   except their access counts), so recall's read cache survives the commits that change nothing it reads
#   (the worker's access-count flushes, queue and vector bookkeeping). A column added to ``facts`` later
#   must be added to ``recall_generation_facts_au`` when recall reads it.
_RECALL_READS = """
CREATE TABLE fact_sources (
    episode_uuid TEXT NOT NULL,
    fact_id INTEGER NOT NULL,
    PRIMARY KEY (episode_uuid, fact_id)
) WITHOUT ROWID;
CREATE INDEX idx_fact_sources_fact ON fact_sources(fact_id);
INSERT OR IGNORE INTO fact_sources(episode_uuid, fact_id)
    SELECT j.value, f.id FROM facts f, json_each(f.source_episodes) j
    WHERE json_valid(f.source_episodes) AND j.type = 'text';
CREATE TRIGGER fact_sources_ai AFTER INSERT ON facts WHEN json_valid(new.source_episodes) BEGIN
    INSERT OR IGNORE INTO fact_sources(episode_uuid, fact_id)
        SELECT value, new.id FROM json_each(new.source_episodes) WHERE type = 'text';
END;
CREATE TRIGGER fact_sources_au AFTER UPDATE OF source_episodes ON facts BEGIN
    DELETE FROM fact_sources WHERE fact_id = old.id;
    INSERT OR IGNORE INTO fact_sources(episode_uuid, fact_id)
        SELECT value, new.id FROM json_each(CASE WHEN json_valid(new.source_episodes)
            THEN new.source_episodes ELSE '[]' END) WHERE type = 'text';
END;
CREATE TRIGGER fact_sources_ad AFTER DELETE ON facts BEGIN
    DELETE FROM fact_sources WHERE fact_id = old.id;
END;
CREATE TABLE recall_generation (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    n INTEGER NOT NULL
);
INSERT INTO recall_generation(id, n) VALUES (1, 0);
CREATE TRIGGER recall_generation_episodes_ai AFTER INSERT ON episodes BEGIN
    UPDATE recall_generation SET n = n + 1 WHERE id = 1;
END;
CREATE TRIGGER recall_generation_episodes_au AFTER UPDATE ON episodes BEGIN
    UPDATE recall_generation SET n = n + 1 WHERE id = 1;
END;
CREATE TRIGGER recall_generation_episodes_ad AFTER DELETE ON episodes BEGIN
    UPDATE recall_generation SET n = n + 1 WHERE id = 1;
END;
CREATE TRIGGER recall_generation_facts_ai AFTER INSERT ON facts BEGIN
    UPDATE recall_generation SET n = n + 1 WHERE id = 1;
END;
CREATE TRIGGER recall_generation_facts_au AFTER UPDATE OF uuid, content, content_hash, category, confidence,
    source_type, source_id, created_at, updated_at, expires_at, is_archived, valid_from, valid_to,
    recorded_at, superseded_at, superseded_by, subject, predicate, object, source_episodes, extractor,
    importance, scope, threat ON facts BEGIN
    UPDATE recall_generation SET n = n + 1 WHERE id = 1;
END;
CREATE TRIGGER recall_generation_facts_ad AFTER DELETE ON facts BEGIN
    UPDATE recall_generation SET n = n + 1 WHERE id = 1;
END;
"""

# What changed, not only that something did (issue 13, recall while the agent writes): every bump of
# ``recall_generation`` also logs the rows it changed in ``recall_changes`` (the generation after the bump,
# a kind, a key), so recall's read cache drops those rows only and keeps the rest across a live agent's
# turns. Kinds: ``episode`` (a turn's row id: the turn itself and the turns next to it in its session, whose
# neighbour ids move), ``turn`` (a turn's uuid), ``fact`` (a fact's uuid), ``source`` (a turn uuid whose
# superseded facts changed: logged only when the fact is or was superseded, so reinforcing a current fact
# does not log its whole source list) and ``all`` (a turn moved to another session or scope: start over).
# The oldest rows go once 10,000 generations are newer (a few hundred turns); a reader that far behind
# starts over (it would anyway: more than ``recall._reads._MAX_CHANGES`` rows).
# Also: a new fact's single-valued conflicts are looked up by subject and predicate in any spelling
# (``lower``); without an index on those expressions the lookup read every fact of the scope (7-10 ms per
# stored fact at 50k facts, on the background worker's write path).
def _logging_trigger(name: str, event: str, rows: str, keep_null: bool = False) -> str:
    """A trigger that bumps ``recall_generation`` and logs ``rows`` (a SELECT of (kind, key) over the
    trigger's ``new``/``old`` row) at the new generation, pruning the log to the newest 10,000."""
    null = "" if keep_null else " AND c.key IS NOT NULL"
    return f"""CREATE TRIGGER {name} {event} BEGIN
    UPDATE recall_generation SET n = n + 1 WHERE id = 1;
    INSERT INTO recall_changes(gen, kind, key)
        SELECT g.n, c.kind, c.key FROM recall_generation g, ({rows}) c WHERE g.id = 1{null};
    DELETE FROM recall_changes WHERE gen <= (SELECT n FROM recall_generation WHERE id = 1) - 10000;
END;
"""


def _turn_and_neighbours(row: str) -> str:
    """Turn ``row`` (``new``/``old``) by row id and uuid, and the turns before and after it in its
    session by row id (NULL where there is none)."""
    return (
        f"SELECT 'episode' AS kind, {row}.id AS key UNION ALL SELECT 'turn', {row}.uuid "
        f"UNION ALL SELECT 'episode', (SELECT p.id FROM episodes p WHERE p.session_id = {row}.session_id "
        f"AND p.scope = {row}.scope AND p.id < {row}.id ORDER BY p.id DESC LIMIT 1) "
        f"UNION ALL SELECT 'episode', (SELECT x.id FROM episodes x WHERE x.session_id = {row}.session_id "
        f"AND x.scope = {row}.scope AND x.id > {row}.id ORDER BY x.id LIMIT 1)"
    )


def _superseded_sources(row: str) -> str:
    """The source turns of fact ``row`` when it is superseded."""
    return (
        f"SELECT 'source', j.value FROM json_each(CASE WHEN {row}.superseded_at IS NOT NULL "
        f"AND json_valid({row}.source_episodes) THEN {row}.source_episodes ELSE '[]' END) j "
        "WHERE j.type = 'text'"
    )


_RECALL_CHANGES = (
    """
CREATE INDEX idx_facts_subject_key ON facts(scope, lower(subject), lower(predicate));
CREATE TABLE recall_changes (
    gen INTEGER NOT NULL,
    kind TEXT NOT NULL,
    key NOT NULL
);
CREATE INDEX idx_recall_changes_gen ON recall_changes(gen);
DROP TRIGGER recall_generation_episodes_ai;
DROP TRIGGER recall_generation_episodes_au;
DROP TRIGGER recall_generation_episodes_ad;
DROP TRIGGER recall_generation_facts_ai;
DROP TRIGGER recall_generation_facts_au;
DROP TRIGGER recall_generation_facts_ad;
"""
    + _logging_trigger("recall_generation_episodes_ai", "AFTER INSERT ON episodes",
                       _turn_and_neighbours("new"))
    + _logging_trigger(
        "recall_generation_episodes_au",
        "AFTER UPDATE ON episodes",
        "SELECT 'episode' AS kind, old.id AS key UNION ALL SELECT 'episode', new.id "
        "UNION ALL SELECT 'turn', old.uuid UNION ALL SELECT 'turn', new.uuid "
        "UNION ALL SELECT 'all', 0 WHERE old.id != new.id OR old.session_id IS NOT new.session_id "
        "OR old.scope IS NOT new.scope",
        keep_null=True,
    )
    + _logging_trigger("recall_generation_episodes_ad", "AFTER DELETE ON episodes",
                       _turn_and_neighbours("old"))
    + _logging_trigger(
        "recall_generation_facts_ai",
        "AFTER INSERT ON facts",
        f"SELECT 'fact' AS kind, new.uuid AS key UNION ALL {_superseded_sources('new')}",
        keep_null=True,
    )
    + _logging_trigger(
        "recall_generation_facts_au",
        "AFTER UPDATE OF uuid, content, content_hash, category, confidence, source_type, source_id, "
        "created_at, updated_at, expires_at, is_archived, valid_from, valid_to, recorded_at, superseded_at, "
        "superseded_by, subject, predicate, object, source_episodes, extractor, importance, scope, threat "
        "ON facts",
        "SELECT 'fact' AS kind, old.uuid AS key "
        "UNION ALL SELECT 'fact', new.uuid WHERE new.uuid IS NOT old.uuid "
        f"UNION ALL {_superseded_sources('old')} UNION ALL {_superseded_sources('new')}",
        keep_null=True,
    )
    + _logging_trigger(
        "recall_generation_facts_ad",
        "AFTER DELETE ON facts",
        f"SELECT 'fact' AS kind, old.uuid AS key UNION ALL {_superseded_sources('old')}",
        keep_null=True,
    )
)

MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "initial", _INITIAL),
    Migration(2, "semantic_chunks_and_embed_queue", _SEMANTIC),
    Migration(3, "ingest_queue", _INGEST),
    Migration(4, "maintenance_runs", _MAINTENANCE),
    Migration(5, "audit_scope", _AUDIT_SCOPE),
    Migration(6, "episode_neighbours_index", _EPISODE_NEIGHBOURS),
    Migration(7, "durable_vectors", _DURABLE_VECTORS),
    Migration(8, "threat_verdicts", _THREAT_VERDICTS, then=verdicts.backfill),
    Migration(9, "erasures", _ERASURES),
    Migration(10, "threat_detector_version", _THREAT_DETECTOR, then=verdicts.expire_stale),
    Migration(11, "recall_reads", _RECALL_READS),
    Migration(12, "recall_changes_subject_key", _RECALL_CHANGES),
    # Data only: what earlier releases learned from the assistant's own words (``assistant_retire``).
    Migration(13, "retire_assistant_knowledge", "", then=assistant_retire.retire),
)

_VERSION_TABLE = """
CREATE TABLE IF NOT EXISTS memory_schema_version (
    version INTEGER NOT NULL PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at REAL NOT NULL
)
"""


def current_version(db: Database) -> int:
    db.execute(_VERSION_TABLE)
    row = db.query_one("SELECT max(version) AS v FROM memory_schema_version")
    return int(row["v"]) if row is not None and row["v"] is not None else 0


def migrate(db: Database, migrations: tuple[Migration, ...] = MIGRATIONS) -> list[int]:
    """Apply every migration newer than the DB's version; returns the versions applied.

    Each migration and its version row commit together, so a crash leaves the DB at a version boundary.
    Raises StorageError if the DB was written by a newer release.
    """
    applied: list[int] = []
    latest = migrations[-1].version if migrations else 0
    with db.atomic() as conn:
        conn.execute(_VERSION_TABLE)
    found = current_version(db)
    if found > latest:
        raise StorageError(
            f"memory database {db.path} has schema version {found}, newer than this release "
            f"supports ({latest}); upgrade hermes-memory"
        )
    for migration in migrations:
        with db.atomic() as conn:
            # Re-read inside the write lock: another process may have migrated meanwhile.
            row = conn.execute("SELECT max(version) FROM memory_schema_version").fetchone()
            version = int(row[0]) if row[0] is not None else 0
            if migration.version <= version:
                continue
            for statement in _split(migration.sql):
                conn.execute(statement)
            if migration.then is not None:
                migration.then(conn)
            conn.execute(
                "INSERT INTO memory_schema_version(version, name, applied_at) VALUES (?, ?, ?)",
                (migration.version, migration.name, time.time()),
            )
            applied.append(migration.version)
    return applied


def recall_generation(db: Database) -> int:
    """The number ``_RECALL_READS`` bumps whenever a row recall reads changes (through the read connection).
    Raises StorageError when Tier 2 cannot be read."""
    row = db.query_one("SELECT n FROM recall_generation WHERE id = 1")
    if row is None:
        raise StorageError(f"memory database {db.path} has no recall_generation row")
    return int(row["n"])


#: A change ``recall_changes`` logs: (kind, key); see ``_RECALL_CHANGES``.
RecallChange = tuple[str, "int | str"]


def recall_changes(db: Database, since: int, limit: int) -> tuple[int, list[RecallChange] | None]:
    """The current ``recall_generation`` and what changed after generation ``since`` (one read, through
    the read connection): None instead of the changes when they cannot be told row by row — more than
    ``limit`` of them, some already pruned, ``since`` ahead of the store (another file), or a change
    of kind ``all``. Raises StorageError when Tier 2 cannot be read."""
    rows = db.query(
        "SELECT g.n, c.gen, c.kind, c.key FROM recall_generation g LEFT JOIN "
        "(SELECT gen, kind, key FROM recall_changes WHERE gen > ? ORDER BY gen LIMIT ?) c ON 1 "
        "WHERE g.id = 1",
        (since, limit + 1),
    )
    if not rows:
        raise StorageError(f"memory database {db.path} has no recall_generation row")
    current = int(rows[0][0])
    changes = [(str(r[2]), r[3]) for r in rows if r[1] is not None]
    if current == since and not changes:
        return current, []
    gens = {int(r[1]) for r in rows if r[1] is not None}
    complete = len(changes) <= limit and current > since and len(gens) == current - since
    if not complete or any(kind == "all" for kind, _ in changes):
        return current, None
    return current, changes


def _split(script: str) -> list[str]:
    """Split a migration into statements; trigger bodies keep their inner semicolons."""
    statements: list[str] = []
    buf: list[str] = []
    in_trigger = False
    for line in script.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("--"):
            continue
        buf.append(line)
        upper = stripped.upper()
        if upper.startswith("CREATE TRIGGER"):
            in_trigger = True
        if in_trigger:
            if upper == "END;":
                statements.append("\n".join(buf))
                buf, in_trigger = [], False
        elif stripped.endswith(";"):
            statements.append("\n".join(buf))
            buf = []
    if buf:
        statements.append("\n".join(buf))
    return statements


__all__ = [
    "MIGRATIONS",
    "Migration",
    "RecallChange",
    "current_version",
    "migrate",
    "recall_changes",
    "recall_generation",
]
