"""What recall's read cache watches: the ``recall_generation`` counter and the ``recall_changes`` log
(migrations 11 and 12), the triggers that keep them, and their readers."""

from __future__ import annotations

from hermes_memory.errors import StorageError
from hermes_memory.tier2.db import Database

# What recall reads, bounded at any size (``recall._reads``, ``FactStore.superseded_sources``):
# * ``fact_sources``: each fact's source turns (its ``source_episodes`` list as rows, kept by triggers), so
#   "which superseded facts came from these turns" reads those turns' links, not every superseded fact;
# * ``recall_generation``: a number bumped by every commit that changes a row recall reads (episodes; facts
#   except their access counts), so recall's read cache survives the commits that change nothing it reads
#   (the worker's access-count flushes, queue and vector bookkeeping). A column added to ``facts`` later
#   must be added to ``recall_generation_facts_au`` when recall reads it.
RECALL_READS = """
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


RECALL_CHANGES = (
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
    + _logging_trigger(
        "recall_generation_episodes_ai", "AFTER INSERT ON episodes", _turn_and_neighbours("new")
    )
    + _logging_trigger(
        "recall_generation_episodes_au",
        "AFTER UPDATE ON episodes",
        "SELECT 'episode' AS kind, old.id AS key UNION ALL SELECT 'episode', new.id "
        "UNION ALL SELECT 'turn', old.uuid UNION ALL SELECT 'turn', new.uuid "
        "UNION ALL SELECT 'all', 0 WHERE old.id != new.id OR old.session_id IS NOT new.session_id "
        "OR old.scope IS NOT new.scope",
        keep_null=True,
    )
    + _logging_trigger(
        "recall_generation_episodes_ad", "AFTER DELETE ON episodes", _turn_and_neighbours("old")
    )
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


def recall_generation(db: Database) -> int:
    """The number ``RECALL_READS`` bumps whenever a row recall reads changes (through the read connection).
    Raises StorageError when Tier 2 cannot be read."""
    row = db.query_one("SELECT n FROM recall_generation WHERE id = 1")
    if row is None:
        raise StorageError(f"memory database {db.path} has no recall_generation row")
    return int(row["n"])


#: A change ``recall_changes`` logs: (kind, key); see ``RECALL_CHANGES``.
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


__all__ = ["RECALL_CHANGES", "RECALL_READS", "RecallChange", "recall_changes", "recall_generation"]
