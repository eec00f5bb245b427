"""Erasures that finish. A forget deletes its Tier 2 rows in one transaction that also records, in
``erasures`` (migration 9), what is left to purge outside that transaction: curated entries, the file
of what the agent saw, vectors, the vector engine's files, graph files and the compaction of the
database. Each step is struck off once done;
an erasure a crash interrupted (or whose engine step another process's open store blocked) is finished on
the next open, by the next forget or by ``doctor --repair``.

Steps are idempotent: running one twice (a crash after it and before it was struck off) changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_memory.errors import StorageError, VectorStoreBusyError
from hermes_memory.ops.erasure_words import ErasureWords
from hermes_memory.tier2 import Tier2, erasures, files
from hermes_memory.tier2.erasures import Erasure

if TYPE_CHECKING:
    import sqlite3

    from hermes_memory.graph.service import GraphService
    from hermes_memory.ops.forget import ForgetPlan
    from hermes_memory.tier1.curated_store import CuratedStore
    from hermes_memory.tier3.semantic import SemanticMemory

# In the order they run: curated entries and the seen file first (the row holds their entries and names
# until then), compaction last (it must see every other deletion, the row's dropped names too).
STEPS = ("curated", "seen", "vectors", "engine", "graph", "compact")
# Steps that work on one erasure's own record (the others are store-wide and run once for all).
_OWN = ("curated", "seen")
GRAPH_FILE = "knowledge_graph.pickle"


@dataclass
class Parts:
    """What the steps work on (the caller's open stores; any may be None when its tier is off)."""

    tier2: Tier2
    curated: CuratedStore | None
    semantic: SemanticMemory | None
    graph: GraphService | None
    graph_path: Path
    # The file of what the agent saw (``ops.seen_file``); None: there is none to scrub.
    seen_path: Path | None = None
    # Called after curated entries were removed (the API re-captures its snapshot).
    on_curated: Callable[[], None] | None = None


def record(conn: sqlite3.Connection, plan: ForgetPlan, *, actor: str, scope: str | None) -> int:
    """Record an erasure in the caller's transaction (the one deleting the plan's rows); returns its id."""
    curated = {store: list(entries) for store, entries in plan.curated.items() if entries}
    seen = plan.seen_match()
    steps = [s for s in STEPS if (s != "curated" or curated) and (s != "seen" or seen)]
    vector_ids = [f"chunk:{u}" for u in sorted(plan.chunks)] + [f"entity:{u}" for u in sorted(plan.entities)]
    words = ErasureWords.of([*plan.terms, *plan.texts], scope=plan.scope)  # for every other host
    return erasures.record(
        conn, target=plan.target, scope=scope, actor=actor, steps=steps, vector_ids=vector_ids,
        curated=curated, seen=seen, words=None if words.empty() else words.to_json(),
    )  # fmt: skip


def unfinished(tier2: Tier2) -> list[Erasure]:
    """Erasures with steps left, oldest first (any scope: the steps are store-wide). Raises StorageError."""
    return erasures.unfinished(tier2.db)


def finish(parts: Parts, *, on_step: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """Run the steps left of every unfinished erasure; returns per erasure the steps still left.

    The engine step waits while another process holds the vector store (it stays recorded, the other
    steps run). Raises StorageError (and what the stores raise) when a step fails; it stays recorded.
    """
    report: list[dict[str, Any]] = []
    pending = unfinished(parts.tier2)
    # Store-wide steps run once for all erasures; each erasure is struck off as its steps complete.
    done: dict[str, bool] = {}
    for erasure in pending:
        left = []
        for step in erasure.steps:
            if step in _OWN or step not in done:
                if on_step is not None:
                    on_step(step)
                if step in _OWN:
                    ok = _OWN_RUN[step](parts, erasure.id)
                else:
                    ok = done[step] = _RUN[step](parts)
            else:
                ok = done[step]
            if ok:
                erasures.strike(parts.tier2.db, erasure.id, step)
            else:
                left.append(step)
        report.append({"id": erasure.id, "target": erasure.target, "left": left})
    return report


def _curated(parts: Parts, erasure_id: int) -> bool:
    """Remove the recorded curated entries, then drop them from the record (compaction clears the page)."""
    entries = erasures.curated_entries(parts.tier2.db, erasure_id)
    if parts.curated is not None:
        for store, items in entries.items():
            for entry in items:
                if entry in parts.curated.entries(store):
                    parts.curated.remove(store, entry)
        if parts.on_curated is not None:
            parts.on_curated()
    erasures.drop_curated(parts.tier2.db, erasure_id)
    return True


def _seen(parts: Parts, erasure_id: int) -> bool:
    """Drop every record of what the agent saw that mentions a forgotten name (or quotes a forgotten
    record, or belongs to a forgotten scope), then the names from the record."""
    from hermes_memory.ops import seen_file

    match = erasures.seen_match(parts.tier2.db, erasure_id)
    if parts.seen_path is not None and match:
        try:
            seen_file.scrub(
                parts.seen_path, terms=match.get("terms", []), texts=match.get("texts", []),
                scope=match.get("scope"),
            )  # fmt: skip
        except OSError as exc:
            raise StorageError(f"cannot scrub {parts.seen_path}: {exc}") from exc
    erasures.drop_seen(parts.tier2.db, erasure_id)
    return True


def _vectors(parts: Parts) -> bool:
    """Apply queued vector deletes, delete every stored vector no chunk or entity holds any more, and the
    exact index's snapshot files (a forgotten chunk's vector would stay in them)."""
    sem = parts.semantic
    if sem is None:
        return True
    sem.drain()
    sem.prune_vectors()
    sem.drop_exact_snapshots()
    return True


def _engine(parts: Parts) -> bool:
    """Rewrite the engine's files from Tier 2 (deleted payloads stay in an engine's WAL and segments until
    a compaction we cannot force). False while another process holds the engine."""
    sem = parts.semantic
    if sem is None:
        return True
    try:
        sem.purge_engine()
    except VectorStoreBusyError:
        return False
    return True


def _graph(parts: Parts) -> bool:
    """Rebuild this view's graph and remove every other view's graph file (each rebuilds on its next load)."""
    kept: Path | None = None
    if parts.graph is not None:
        parts.graph.rebuild()
        kept = parts.graph.directory / GRAPH_FILE
    base = parts.graph_path
    for directory in [base, *sorted(base.parent.glob(f"{base.name}-*"))]:
        for path in (directory / GRAPH_FILE, directory / "knowledge_graph.graphml"):
            if path != kept and path.exists():
                try:
                    path.unlink()
                except OSError as exc:
                    raise StorageError(f"cannot remove graph file {path}: {exc}") from exc
    return True


def _compact(parts: Parts) -> bool:
    """Make removed text unrecoverable from the database files: merge the FTS segments, vacuum (rewrites
    every page, so no free page keeps old text), truncate the WAL; the same for the turn inbox; remove the
    temp files killed curated writes left. False when
    a reader of another process keeps the WAL from being truncated (the next try finishes it)."""
    tier2 = parts.tier2
    busy = not files.compact(tier2.db)
    inbox = tier2.inbox
    if inbox is not None:
        busy = not inbox.compact() or busy
    if parts.curated is not None:
        parts.curated.remove_stale_temp_files()  # a write killed mid-way left a full copy of a store
    return not busy


def run_local(parts: Parts, step: str) -> bool:
    """Run one store-wide step that works on this host's own files ("engine", "graph") for a host that
    follows an erasure recorded elsewhere (``ops.erasure_follow``); False as the step."""
    if step not in ("engine", "graph"):
        raise ValueError(f"{step!r} is not a step on a host's own files")
    return _RUN[step](parts)


_OWN_RUN: dict[str, Callable[[Parts, int], bool]] = {"curated": _curated, "seen": _seen}
_RUN: dict[str, Callable[[Parts], bool]] = {
    "vectors": _vectors,
    "engine": _engine,
    "graph": _graph,
    "compact": _compact,
}


__all__ = ["STEPS", "Erasure", "Parts", "finish", "record", "run_local", "unfinished"]
