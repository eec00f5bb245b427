"""The ``consolidate`` job: merge duplicate and near-duplicate facts, resolve conflicting facts about a
single-valued predicate, and merge entities that are aliases of one another.

Each merge or supersession is decided from a snapshot, then re-checked and written inside a transaction
(one per batch of facts, one per entity merge), together with its audit row. A run cut short leaves every
item either fully merged or untouched, and the next run picks up what is left: running twice equals once.
"""

from __future__ import annotations

import math
import sqlite3
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from hermes_memory.cron.context import JobContext, Progress, batches, report
from hermes_memory.cron.entity_merge import merge_alias_entities
from hermes_memory.extract import EXCLUSIVE_PREDICATES
from hermes_memory.extract.dedup import NEAR_DUPLICATE_THRESHOLD, content_tokens, is_near_duplicate
from hermes_memory.tier2.upkeep import FactRow, replace_in_timeline

_EPS = 1e-9  # float slack in threshold arithmetic, always on the side of comparing more pairs


@dataclass(frozen=True, slots=True)
class Merge:
    """Archive ``duplicate`` into ``kept`` (the older fact). ``kind`` is 'exact' or 'near'."""

    duplicate: str
    kept: str
    kind: str


@dataclass(frozen=True, slots=True)
class Supersession:
    """Close ``old`` because ``new`` states another value of a single-valued predicate."""

    old: str
    new: str
    valid_to: float | None


def _fold(text: str | None) -> str:
    return (text or "").strip().casefold()


def active_facts(ctx: JobContext, now: float) -> list[FactRow]:
    """Every fact believed at ``now``, oldest first (by recorded_at, then id)."""
    return ctx.upkeep.active(now)


def _may_merge(kept: FactRow, other: FactRow) -> bool:
    """Vetoes on top of the wording test: facts about different subjects, or different values of the
    same predicate, are different facts however similar their words (the latter are conflicts)."""
    if kept.subject and other.subject and _fold(kept.subject) != _fold(other.subject):
        return False
    return not (
        kept.predicate
        and _fold(kept.predicate) == _fold(other.predicate)
        and kept.object
        and other.object
        and _fold(kept.object) != _fold(other.object)
    )


def find_duplicates(facts: Sequence[FactRow], threshold: float = NEAR_DUPLICATE_THRESHOLD) -> list[Merge]:
    """Which facts duplicate an older one (same normalised content, or near-duplicate wording).

    ``facts`` must be oldest first; every duplicate maps to the oldest fact of its group. Near-duplicates
    are found by prefix filtering with positions (PPJoin) instead of comparing all pairs: with tokens in a
    global rare-first order, two sets with Jaccard >= t always share one of the first |x| - ceil(t·|x|) + 1
    tokens of each, and the positions of the first shared token bound their overlap. No pair above the
    threshold is missed; most others are never compared.
    """
    merges: list[Merge] = []
    by_scope: dict[str, list[FactRow]] = defaultdict(list)
    for fact in facts:
        by_scope[fact.scope].append(fact)
    for items in by_scope.values():
        tokens = [content_tokens(f.content) for f in items]
        frequency = Counter(t for toks in tokens for t in toks)
        exact: dict[str, int] = {}
        index: dict[str, list[tuple[int, int]]] = defaultdict(list)
        for i, fact in enumerate(items):
            kept = exact.get(fact.content_hash)
            if kept is not None:
                merges.append(Merge(fact.uuid, items[kept].uuid, "exact"))
                continue
            ordered = sorted(tokens[i], key=lambda t: (frequency[t], t))
            prefix = ordered[: len(ordered) - math.ceil(threshold * len(ordered) - _EPS) + 1]
            match = _best_match(items, tokens, index, prefix, i, threshold)
            if match is not None:
                merges.append(Merge(fact.uuid, items[match].uuid, "near"))
                exact.setdefault(fact.content_hash, match)
                continue
            exact[fact.content_hash] = i
            for position, tok in enumerate(prefix):
                index[tok].append((i, position))
    return merges


def _best_match(
    items: Sequence[FactRow],
    tokens: Sequence[frozenset[str]],
    index: dict[str, list[tuple[int, int]]],
    prefix: Sequence[str],
    i: int,
    threshold: float,
) -> int | None:
    """The oldest indexed (kept) fact that ``items[i]`` near-duplicates, or None."""
    mine = tokens[i]
    size = len(mine)
    if size == 0:
        return None  # nothing but filler words: only an exact match can say it is the same
    best: int | None = None
    seen: set[int] = set()
    for p, tok in enumerate(prefix):
        for j, q in index.get(tok, ()):
            if j in seen or (best is not None and j >= best):
                continue
            seen.add(j)
            other = len(tokens[j])
            # Jaccard >= t needs t·|a| <= |b| <= |a|/t, and an overlap of at least t/(1+t)·(|a|+|b|), of
            # which at most 1 + the tokens after the first shared one (at p and q) are possible.
            if other < threshold * size - _EPS or size < threshold * other - _EPS:
                continue
            needed = math.ceil(threshold / (1 + threshold) * (size + other) - _EPS)
            if 1 + min(size - p - 1, other - q - 1) < needed:
                continue
            overlap = len(mine & tokens[j])
            if overlap < needed:
                continue
            # the full test (number and negation vetoes) only for pairs whose words already agree
            if _may_merge(items[j], items[i]) and is_near_duplicate(
                items[j].content, items[i].content, threshold
            ):
                best = j
    return best


def merge_fact(conn: sqlite3.Connection, ctx: JobContext, merge: Merge, now: float) -> bool:
    """Archive one duplicate into the fact it repeats (caller's transaction); False if no longer applicable.

    The kept fact gains the duplicate's source episodes, entity links, the higher confidence and salience,
    and one use: a restatement is a rehearsal (see importance.py). References to the duplicate (relation
    evidence, timeline events) move to the kept fact; the duplicate's chunks leave the vector index (its
    meaning is the kept fact's), and it stays archived with ``superseded_by`` pointing at the kept fact.
    """
    if not ctx.upkeep.merge_duplicate(conn, merge.duplicate, merge.kept, now):
        return False
    replace_in_timeline(conn, "related_facts", merge.duplicate, merge.kept)
    ctx.tier2.chunks.remove_source(conn, "fact", merge.duplicate)
    ctx.tier2.audit.record(
        conn,
        action="fact_merge",
        tier="tier2",
        actor=ctx.actor,
        target_uuid=merge.duplicate,
        diff={"merged_into": merge.kept, "kind": merge.kind},
    )
    return True


def find_conflicts(facts: Sequence[FactRow]) -> list[Supersession]:
    """Active facts giving different values of a single-valued predicate (lives_in, works_at, ...) for one
    subject: the newest by valid_from (then recorded_at) stays, every other value is superseded by it."""
    groups: dict[tuple[str, str, str], list[FactRow]] = defaultdict(list)
    for fact in facts:
        if fact.subject and fact.object and _fold(fact.predicate) in EXCLUSIVE_PREDICATES:
            groups[(fact.scope, _fold(fact.subject), _fold(fact.predicate))].append(fact)
    out: list[Supersession] = []
    for group in groups.values():
        if len({_fold(f.object) for f in group}) < 2:
            continue
        newest = max(
            group,
            key=lambda f: (f.valid_from if f.valid_from is not None else f.recorded_at, f.recorded_at, f.id),
        )
        for fact in group:
            if _fold(fact.object) != _fold(newest.object):
                out.append(Supersession(fact.uuid, newest.uuid, newest.valid_from))
    return out


def supersede_fact(conn: sqlite3.Connection, ctx: JobContext, item: Supersession, now: float) -> bool:
    """Close one conflicting older fact (bitemporal: never deleted); False if no longer applicable."""
    if not ctx.upkeep.close_superseded(conn, item.old, item.new, item.valid_to, now):
        return False
    ctx.tier2.audit.record(
        conn,
        action="fact_supersede",
        tier="tier2",
        actor=ctx.actor,
        target_uuid=item.old,
        diff={"superseded_by": item.new, "reason": "conflicting value of a single-valued predicate"},
    )
    return True


def run(ctx: JobContext, *, now: float, progress: Progress | None = None) -> dict[str, Any]:
    """Run the whole job; returns counts. Raises StorageError if Tier 2 fails (done batches stay done)."""
    facts = active_facts(ctx, now)
    merges = find_duplicates(facts)
    total = len(merges)
    done = 0
    report(progress, done, total)
    counts: Counter[str] = Counter()
    for part in batches(merges):
        with ctx.tier2.db.atomic() as conn:
            for merge in part:
                if merge_fact(conn, ctx, merge, now):
                    counts[merge.kind] += 1
        done += len(part)
        report(progress, done, total)
    # Conflicts are looked for among what survived the merges (a merged duplicate is no candidate).
    conflicts = find_conflicts(active_facts(ctx, now)) if merges else find_conflicts(facts)
    total += len(conflicts)
    resolved = 0
    for chunk in batches(conflicts):
        with ctx.tier2.db.atomic() as conn:
            resolved += sum(supersede_fact(conn, ctx, item, now) for item in chunk)
        done += len(chunk)
        report(progress, done, total)
    entities = merge_alias_entities(ctx, now)
    report(progress, total, total)
    return {
        "facts_scanned": len(facts),
        "duplicates_merged": counts["exact"],
        "near_duplicates_merged": counts["near"],
        "conflicts_resolved": resolved,
        **entities,
    }


__all__ = [
    "FactRow",
    "Merge",
    "Supersession",
    "active_facts",
    "find_conflicts",
    "find_duplicates",
    "merge_fact",
    "run",
    "supersede_fact",
]
