"""The SQL of migrations 1 to 10: the tables and indexes they create or change, and the FTS5
external-content indexes kept in sync by triggers (applied by ``schema.migrate``)."""

from __future__ import annotations

import sqlite3


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


INITIAL = (
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
SEMANTIC = """
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
INGEST = """
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
MAINTENANCE = """
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
AUDIT_SCOPE = """
ALTER TABLE memory_audit_log ADD COLUMN scope TEXT;
CREATE INDEX idx_audit_scope ON memory_audit_log(scope, id);
"""

# Recall looks up each candidate turn's previous and next turn in its session (``EpisodeStore.neighbours``);
# with only (session_id, timestamp) that scanned and sorted the whole session per candidate (150 ms for 400
# candidates at 10k turns), with this index it is one seek each (3 ms).
EPISODE_NEIGHBOURS = """
CREATE INDEX idx_episodes_neighbours ON episodes(session_id, scope, id);
"""

# Vectors are Tier 2 data: one row per (embedder model, hash of the normalised text), written in the
# transaction that completes the text's embed-queue rows; a chunk finds its vector by its content_hash, so a
# text is embedded once per model and reindex / backend switch / restore / import join instead of embedding.
# The ANN engine is an index over these rows: ``vector_sync`` records, per engine and collection, how far it
# has caught up (chunk id, vector id, tombstone id high-water marks); ``chunk_tombstones`` tells engines and
# the exact index of other processes which chunks were deleted. Existing stores re-embed once (every chunk
# and entity is queued) and pending chunk deletes become tombstones.
DURABLE_VECTORS = """
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
THREAT_VERDICTS = """
ALTER TABLE episodes ADD COLUMN threat INTEGER;
ALTER TABLE facts ADD COLUMN threat INTEGER;
CREATE INDEX idx_facts_superseded ON facts(superseded_at) WHERE superseded_at IS NOT NULL;
"""

# Erasures that finish (``ops.erasure``): a forget records what is left to purge (curated entries, vectors,
# the engine's files, graph files, compaction) in the transaction that deletes the Tier 2 rows; each step
# is struck off when done, and whatever a crash or a busy vector store left is finished on the next open,
# by ``doctor --repair`` or by the next forget. Holds ids and counts; curated entries only until removed.
ERASURES = """
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
THREAT_DETECTOR = """
CREATE TABLE threat_detector (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    version INTEGER NOT NULL,
    pending INTEGER NOT NULL DEFAULT 0
);
INSERT INTO threat_detector(id, version, pending) VALUES (1, 1, 0);
"""


# What a forget scrubs from the file of what the agent saw (``ops.seen_file``): the forgotten names, the
# forgotten records' texts or the forgotten scope, as JSON; held only until the file is scrubbed.
def add_erasure_seen(conn: sqlite3.Connection) -> None:
    """Add ``erasures.seen`` (once: a store whose version rows were rolled back keeps its column)."""
    if "seen" not in {row[1] for row in conn.execute("PRAGMA table_info(erasures)")}:
        conn.execute("ALTER TABLE erasures ADD COLUMN seen TEXT")


# PostgreSQL only (migration 16): an entity's newest links by one index probe (SQLite's index on
# entity_uuid holds its rows in rowid order already).
FACT_ENTITIES_IN_ORDER = """
CREATE INDEX IF NOT EXISTS idx_fact_entities_entity_rowid ON fact_entities(entity_uuid, rowid);
"""

# A view's speakers one index probe each (``EpisodeStore.speakers``): recall asks for them every 30 s, and
# ``SELECT DISTINCT speaker`` read every turn (19-20 ms at 100k turns). Led by the speaker: an index led by
# the scope would be chosen for every query with a scope term and scan all of the scope's turns. ``id`` is
# SQLite's row id, in every index already; named, so a PostgreSQL index finds a pair's first turn too.
EPISODE_SPEAKERS = """
CREATE INDEX IF NOT EXISTS idx_episodes_speaker_scope ON episodes(speaker, scope, id);
"""


# What every host matches its own files against after a forget (``ops.erasure_words``): the forgotten names'
# and records' words as keyed hashes, kept for hosts that follow the erasure later (never the names).
def add_erasure_words(conn: sqlite3.Connection) -> None:
    """Add ``erasures.words`` (once, as ``add_erasure_seen``)."""
    if "words" not in {row[1] for row in conn.execute("PRAGMA table_info(erasures)")}:
        conn.execute("ALTER TABLE erasures ADD COLUMN words TEXT")


__all__ = [
    "AUDIT_SCOPE",
    "DURABLE_VECTORS",
    "EPISODE_NEIGHBOURS",
    "EPISODE_SPEAKERS",
    "ERASURES",
    "FACT_ENTITIES_IN_ORDER",
    "INGEST",
    "INITIAL",
    "MAINTENANCE",
    "SEMANTIC",
    "THREAT_DETECTOR",
    "THREAT_VERDICTS",
    "add_erasure_seen",
    "add_erasure_words",
]
