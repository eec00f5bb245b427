"""`doctor`: integrity checks over one profile's stores and a repair for each mismatch that can be fixed.

Tier 2 is the source of truth; the FTS indexes, the vectors and the graph are derived from it, so every
repair of a derived store is a rebuild from Tier 2. Checks: SQLite ``integrity_check``; each FTS5 index
against its content table; vector counts against Tier 2 rows; the graph file and graph against
entities/relations; the ingest and embed queues; fact invariants (``superseded_by`` targets, two active
values of a single-valued predicate, ``fact_entities`` rows pointing nowhere).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from hermes_memory.errors import StorageError
from hermes_memory.extract.relations import EXCLUSIVE_PREDICATES
from hermes_memory.graph.nx_store import KnowledgeGraph
from hermes_memory.graph.persistence import LoadStatus
from hermes_memory.graph.service import GraphService
from hermes_memory.tier2 import Tier2, files, maintenance
from hermes_memory.tier2._util import content_hash
from hermes_memory.tier2.chunks import CHUNKS_COLLECTION, ENTITIES_COLLECTION
from hermes_memory.tier2.schema import current_version
from hermes_memory.tier3._indexer import entity_text
from hermes_memory.tier3.semantic import SemanticMemory

if TYPE_CHECKING:
    pass

Status = Literal["ok", "warn", "error"]
FTS_TABLES = files.FTS_TABLES
# Same limit the ingest worker and the embed drain use: a row tried this often is retired ("stuck").
MAX_ATTEMPTS = 5
DOCTOR_ACTOR = "doctor"
_VECTOR_TABLES = {CHUNKS_COLLECTION: "chunks", ENTITIES_COLLECTION: "entities"}


@dataclass(frozen=True)
class Finding:
    """One check's outcome; ``repair`` names the action ``--repair`` applies (None: nothing to apply)."""

    check: str
    status: Status
    detail: str
    repair: str | None = None

    @property
    def repairable(self) -> bool:
        return self.status != "ok" and self.repair is not None

    def to_dict(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "status": self.status,
            "detail": self.detail,
            "repairable": self.repairable,
        }


@dataclass(frozen=True)
class DoctorReport:
    """``findings``: the final state (after repairs, if any ran); ``initial``: what the first pass saw."""

    findings: list[Finding]
    initial: list[Finding] = field(default_factory=list)
    repairs: list[dict[str, Any]] = field(default_factory=list)

    @property
    def problems(self) -> list[Finding]:
        return [f for f in self.findings if f.status != "ok"]

    @property
    def clean(self) -> bool:
        return not self.problems

    def to_dict(self) -> dict[str, Any]:
        return {
            "clean": self.clean,
            "findings": [f.to_dict() for f in self.findings],
            "initial": [f.to_dict() for f in self.initial],
            "repairs": self.repairs,
        }


@dataclass
class _Stores:
    tier2: Tier2
    semantic: SemanticMemory | None
    graph: GraphService | None
    graph_dir: Path
    flush: Callable[[], Any]
    consolidate: Callable[[], Any]
    finish_erasures: Callable[[], Any] | None = None


# ---------------------------------------------------------------- checks


def _check_sqlite(s: _Stores) -> list[Finding]:
    db = s.tier2.db
    messages = files.integrity_messages(db)
    if db.engine != "sqlite":  # the server keeps its pages sound; what is checked is that it answers
        return [Finding(db.engine, "ok", f"{db.location} answers, schema v{current_version(db)}")]
    if messages == ["ok"]:
        return [Finding("sqlite", "ok", "integrity_check: ok")]
    # No safe automatic repair for a damaged B-tree: restore a backup (or export what still reads).
    return [Finding("sqlite", "error", "integrity_check: " + "; ".join(messages[:5]))]


def _check_fts(s: _Stores) -> list[Finding]:
    out = []
    for table in FTS_TABLES:
        fts = f"{table}_fts"
        rows = _count(s, table)
        try:
            # Compares the index with the content table too, not only its own consistency.
            files.check_fts(s.tier2.db, table, with_content=True)
        except StorageError as exc:
            out.append(
                Finding(
                    f"fts:{table}",
                    "error",
                    f"{fts} disagrees with {table} ({rows} rows): {exc}",
                    f"rebuild:{table}",
                )
            )
            continue
        out.append(Finding(f"fts:{table}", "ok", f"{fts} matches {table} ({rows} rows)"))
    return out


def _count(s: _Stores, table: str) -> int:
    return maintenance.row_count(s.tier2.db, table)


def _check_vectors(s: _Stores) -> list[Finding]:
    if s.semantic is None:
        return [Finding("vectors", "ok", "tier3 disabled")]
    if not s.semantic.uses_engine():
        return _check_stored_vectors(s, s.semantic)
    reason = s.semantic.busy_reason()
    if reason is not None:
        # Not a fault: the process holding the store keeps it consistent; run doctor there or later.
        return [Finding("vectors", "ok", f"not checked here: {reason}")]
    out = []
    for collection, table in _VECTOR_TABLES.items():
        rows = _count(s, table)
        upserts = maintenance.queued(s.tier2.db, op="upsert", collection=collection)
        deletes = maintenance.queued(s.tier2.db, op="delete", collection=collection)
        vectors = s.semantic.backend(collection).count()
        # Pending queue rows explain a gap in either direction until the queue is drained.
        low, high = rows - upserts, rows + deletes
        detail = f"{vectors} vectors for {rows} {table} rows ({upserts} upserts, {deletes} deletes pending)"
        if low <= vectors <= high:
            out.append(Finding(f"vectors:{collection}", "ok", detail))
        else:
            what = "missing vectors" if vectors < low else "orphan vectors"
            out.append(Finding(f"vectors:{collection}", "error", f"{what}: {detail}", "reindex"))
    return out


def _check_stored_vectors(s: _Stores, semantic: SemanticMemory) -> list[Finding]:
    """Below ``tier3.engine_min_vectors`` the Tier 2 vectors are what search reads (exactly) and the
    engine stays closed: compare them with the rows they embed."""
    path = semantic.search_path()
    store, model = semantic.vector_store, semantic.model_id
    entities = s.tier2.admin().entities.all()
    hashes = [content_hash(entity_text(e)) for e in entities]
    counts = {
        CHUNKS_COLLECTION: store.chunk_vectors(model),
        ENTITIES_COLLECTION: _stored(store.missing(model, hashes), hashes),
    }
    out = []
    for collection, table in _VECTOR_TABLES.items():
        rows = _count(s, table)
        upserts = maintenance.queued(s.tier2.db, op="upsert", collection=collection)
        vectors = counts[collection]
        detail = f"{vectors} stored vectors for {rows} {table} rows ({upserts} upserts pending); {path}"
        if rows - upserts <= vectors <= rows:
            out.append(Finding(f"vectors:{collection}", "ok", detail))
        else:
            what = "missing vectors" if vectors < rows - upserts else "orphan vectors"
            out.append(Finding(f"vectors:{collection}", "error", f"{what}: {detail}", "reindex"))
    return out


def _stored(missing: set[str], hashes: list[str]) -> int:
    return sum(1 for h in hashes if h not in missing)


def _check_graph(s: _Stores) -> list[Finding]:
    if s.graph is None:
        return [Finding("graph", "ok", "graph disabled")]
    # The graph holds the agent's view of Tier 2 (each view has its own graph file), so it is
    # compared with that view's rows, not with the whole store.
    entities, relations = s.graph.tier2_counts()
    loaded = s.graph.last_load is not None
    if loaded:
        s.graph.save()  # persist pending incremental changes so the file can be compared
    # A separate, read-only load of the file: the service's own graph may be in memory already.
    result = KnowledgeGraph(s.graph_dir).load(s.graph.fingerprint())
    out: list[Finding] = []
    if result.status is LoadStatus.LOADED:
        out.append(
            Finding(
                "graph:file",
                "ok",
                f"{result.path}: {result.entities} entities, {result.relations} relations, current",
            )
        )
    elif result.status in (LoadStatus.MISSING, LoadStatus.STALE) and not loaded:
        # Not opened in this process: the service rebuilds a missing or stale file on first use.
        out.append(Finding("graph:file", "ok", f"{result.status.value}; rebuilt from Tier 2 on first use"))
    else:
        detail = f"graph file {result.status.value}: {result.detail or result.path}"
        out.append(
            Finding(
                "graph:file",
                "error" if result.status is LoadStatus.CORRUPT else "warn",
                detail,
                "graph_rebuild",
            )
        )
    if loaded:
        kg = s.graph.graph
        if kg.entity_count != entities or kg.relation_count != relations:
            out.append(
                Finding(
                    "graph:tier2",
                    "error",
                    f"graph has {kg.entity_count} entities / "
                    f"{kg.relation_count} relations, Tier 2 {entities} / {relations}",
                    "graph_rebuild",
                )
            )
        else:
            out.append(Finding("graph:tier2", "ok", f"{entities} entities, {relations} relations"))
    return out


def _check_queues(s: _Stores) -> list[Finding]:
    out = []
    for name, table in (("queue:ingest", "ingest_queue"), ("queue:embed", "embed_queue")):
        total = _count(s, table)
        stuck = maintenance.stuck(s.tier2.db, table, MAX_ATTEMPTS)
        error = maintenance.last_error(s.tier2.db, table)
        last = f"; last error: {error[:200]}" if error is not None else ""
        if total == 0:
            out.append(Finding(name, "ok", "empty"))
        elif stuck:
            out.append(
                Finding(
                    name,
                    "error",
                    f"{total} pending, {stuck} stuck after {MAX_ATTEMPTS} attempts{last}",
                    "retry_queues",
                )
            )
        else:
            out.append(Finding(name, "warn", f"{total} pending{last}", "drain"))
    return out


def _check_facts(s: _Stores) -> list[Finding]:
    out = []
    dangling = maintenance.dangling_superseded(s.tier2.db)
    out.append(
        Finding(
            "facts:superseded_by",
            "error",
            f"{dangling} facts point to a missing superseding fact",
            "clear_dangling_superseded_by",
        )
        if dangling
        else Finding("facts:superseded_by", "ok", "every superseded_by points to a fact")
    )
    conflicts = maintenance.exclusive_conflicts(s.tier2.db, EXCLUSIVE_PREDICATES)
    out.append(
        Finding(
            "facts:exclusive",
            "warn",
            f"{conflicts} subjects hold two active values of a single-valued predicate",
            "consolidate",
        )
        if conflicts
        else Finding("facts:exclusive", "ok", "single-valued predicates have one active value")
    )
    orphans = maintenance.orphan_fact_entities(s.tier2.db)
    out.append(
        Finding(
            "facts:fact_entities",
            "error",
            f"{orphans} fact_entities rows point nowhere",
            "delete_orphan_fact_entities",
        )
        if orphans
        else Finding("facts:fact_entities", "ok", "every fact_entities row joins a fact and an entity")
    )
    return out


def _check_erasures(s: _Stores) -> list[Finding]:
    """A forget whose purge a crash interrupted (or a busy vector store held up) is not finished: its
    text may still be in the vector engine's files, a graph file or free database pages."""
    from hermes_memory.ops.erasure import unfinished

    open_ = unfinished(s.tier2)
    if not open_:
        return [Finding("erasures", "ok", "every forget finished")]
    steps = sorted({step for e in open_ for step in e.steps})
    return [Finding(
        "erasures", "error",
        f"{len(open_)} forget(s) not finished; left to purge: {', '.join(steps)}",
        repair="finish_erasures",
    )]  # fmt: skip


_CHECKS = (
    _check_sqlite, _check_fts, _check_vectors, _check_graph, _check_queues, _check_facts, _check_erasures,
)  # fmt: skip


def _check_all(s: _Stores) -> list[Finding]:
    return [finding for check in _CHECKS for finding in check(s)]


# ---------------------------------------------------------------- repairs


def _repair(s: _Stores, action: str) -> dict[str, Any]:
    t2 = s.tier2
    if action.startswith("rebuild:"):
        table = action.split(":", 1)[1]
        if table not in FTS_TABLES:
            raise StorageError(f"unknown FTS table {table!r}")
        maintenance.rebuild_fts(t2.db, t2.audit, table, actor=DOCTOR_ACTOR)
        return {"rebuilt": f"{table}_fts"}
    if action == "reindex":
        assert s.semantic is not None
        return s.semantic.reindex().to_dict()
    if action == "graph_rebuild":
        assert s.graph is not None
        return s.graph.rebuild()
    if action == "retry_queues":
        maintenance.retry_stuck(t2.db, MAX_ATTEMPTS)
        return {"flush": s.flush()}
    if action == "drain":
        return {"flush": s.flush()}
    if action == "finish_erasures":
        if s.finish_erasures is None:
            raise StorageError("finishing a forget needs the memory API (run doctor --repair from the CLI)")
        return {"erasures": s.finish_erasures()}
    if action == "clear_dangling_superseded_by":
        return {"cleared": _clear_dangling(t2)}
    if action == "consolidate":
        return {"consolidate": s.consolidate()}
    if action == "delete_orphan_fact_entities":
        return {"deleted": maintenance.delete_orphan_fact_entities(t2.db)}
    raise StorageError(f"unknown doctor repair {action!r}")


def _clear_dangling(t2: Tier2) -> int:
    """The superseding fact is gone; the fact stays closed (the contradiction was real), only the
    pointer that leads nowhere is removed. Each change is audited."""
    return maintenance.clear_dangling_superseded(t2.db, t2.audit, actor=DOCTOR_ACTOR)


def check_and_repair(
    tier2: Tier2,
    semantic: SemanticMemory | None,
    graph: GraphService | None,
    *,
    graph_dir: Path,
    flush: Callable[[], Any],
    consolidate: Callable[[], Any],
    repair: bool = False,
    finish_erasures: Callable[[], Any] | None = None,
    progress: Callable[[str], None] | None = None,
) -> DoctorReport:
    """Run every check (and with ``repair`` each distinct repair once, then check again).
    ``progress`` is told each step as it starts (a repair can take many seconds).

    Raises StorageError when the store cannot be read or a repair fails.
    """
    say = progress or (lambda _: None)
    stores = _Stores(tier2, semantic, graph, graph_dir, flush, consolidate, finish_erasures)
    tier2.ingest_queue.absorb()  # the queue check then sees turns still in the inbox too
    say("checking")
    findings = _check_all(stores)
    if not repair:
        return DoctorReport(findings)
    repairs: list[dict[str, Any]] = []
    # The queues are drained first: a drain may itself close a vector or graph gap.
    ordered = sorted(
        {f.repair for f in findings if f.repairable and f.repair},
        key=lambda a: (a not in ("retry_queues", "drain"), a == "finish_erasures", a),
    )
    for number, action in enumerate(ordered, 1):
        say(f"repair {number}/{len(ordered)}: {action}")
        try:
            repairs.append({"action": action, "ok": True, "result": _repair(stores, action)})
        except (StorageError, sqlite3.DatabaseError) as exc:
            repairs.append({"action": action, "ok": False, "error": str(exc)})
    say("checking again")
    return DoctorReport(_check_all(stores), initial=findings, repairs=repairs)


__all__ = ["DoctorReport", "Finding", "check_and_repair"]
