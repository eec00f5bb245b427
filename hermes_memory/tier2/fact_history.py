"""Fact history: what a fact replaced and what replaced it (``superseded_by`` chains walked to the fact
believed now), a subject's facts over time, and the facts true at a world time as known at a system time."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace
from typing import Any

from hermes_memory.records import Event, Fact
from hermes_memory.tier2._util import content_hash, now
from hermes_memory.tier2.fact_reads import FactReads
from hermes_memory.tier2.fact_rows import row_to_fact, subject_names, true_at


class FactHistory(FactReads):
    """Reads across time: superseded facts, their chains, and the bitemporal views of a subject."""

    def superseded_by(self, uuid: str) -> list[Fact]:
        """Facts that ``uuid`` superseded (closed because it contradicted them)."""
        scoped, sp = self._in_view()
        rows = self._db.query(
            f"SELECT * FROM facts f WHERE f.superseded_by = ? AND {scoped} ORDER BY f.recorded_at, f.id",
            (uuid, *sp),
        )
        return [row_to_fact(r) for r in rows]

    def superseded_sources(self, episode_uuids: Sequence[str]) -> dict[str, Fact]:
        """For each of these turns whose statement the memory has since superseded: the superseded fact
        extracted from it (the most recently superseded one when there are several)."""
        if not episode_uuids:
            return {}
        scoped, sp = self._in_view()
        # Through ``fact_sources`` (migration 11): only the links of these turns are read, whatever the
        # number of superseded facts (CROSS JOIN: links first, as the planner may not guess). One statement
        # text whatever the count: prepared once, not per call.
        rows = self._db.query(
            "SELECT f.*, s.episode_uuid AS episode "
            "FROM fact_sources s CROSS JOIN facts f ON f.id = s.fact_id "
            "WHERE s.episode_uuid IN (SELECT value FROM json_each(?)) AND f.superseded_at IS NOT NULL "
            f"AND f.is_archived = 0 AND {scoped} ORDER BY f.superseded_at, f.id",
            (json.dumps(list(dict.fromkeys(episode_uuids))), *sp),
        )
        return {row["episode"]: row_to_fact(row) for row in rows}

    def superseded_entries(self, texts: Sequence[str]) -> dict[str, Fact]:
        """For each of these curated entries whose statement the memory has since superseded: the fact
        mirrored from it (source ``memory``, or ``curated`` when read at first activation; found by its
        text), the most recently superseded one. An entry with a mirrored fact that still stands (written
        again since) is none of them."""
        if not texts:
            return {}
        text_of = {content_hash(t): t for t in texts}
        scoped, sp = self._in_view()
        rows = self._db.query(
            "SELECT * FROM facts f WHERE f.content_hash IN (SELECT value FROM json_each(?)) "
            f"AND f.source_type IN ('memory', 'curated') AND f.is_archived = 0 AND {scoped} "
            "ORDER BY f.superseded_at IS NULL, f.superseded_at, f.id",
            (json.dumps(list(text_of)), *sp),
        )
        out: dict[str, Fact] = {}
        for row in rows:  # superseded first, then those that stand: a standing one takes the entry back
            text = text_of[row["content_hash"]]
            if row["superseded_at"] is None:
                out.pop(text, None)
            else:
                out[text] = row_to_fact(row)
        return out

    def mark_replaced(self, events: Sequence[Event]) -> list[Event]:
        """The events, an event taken from facts that were all superseded since marked: it says what was
        true then, not now. ``superseded_at``: when the last of them stopped being true (its ``valid_to``,
        the replacing statement's time, else when the memory recorded the replacement); ``superseded_by``:
        the statement believed now in its place."""
        related = self.get_many(sorted({u for e in events for u in e.related_facts}))
        ends: dict[str, Fact] = {}
        for event in events:
            facts = [related[u] for u in event.related_facts if u in related]
            if facts and len(facts) == len(event.related_facts) and all(f.superseded_at for f in facts):
                ends[event.uuid] = max(facts, key=lambda f: f.superseded_at or 0.0)
        currents = self.current_of_many(list({f.uuid: f for f in ends.values()}.values())) if ends else {}
        out = []
        for event in events:
            last = ends.get(event.uuid)
            if last is not None:
                current = currents.get(last.uuid)
                ended = last.valid_to if last.valid_to is not None else last.superseded_at
                event = replace(event, superseded_at=ended,
                                superseded_by=None if current is None else current.content)  # fmt: skip
            out.append(event)
        return out

    def current_of(self, fact: Fact, *, max_steps: int = 20) -> Fact | None:
        """The fact believed now that (directly or through a chain) superseded ``fact``; None when the
        chain ends in a fact that is no longer believed (archived, expired) or leaves the view."""
        seen = {fact.uuid}
        current = fact
        for _ in range(max_steps):
            if current.superseded_by is None:
                break
            nxt = self.get_many([current.superseded_by]).get(current.superseded_by)
            if nxt is None or nxt.uuid in seen:
                return None
            seen.add(nxt.uuid)
            current = nxt
        if current.uuid == fact.uuid or not self.active_uuids([current.uuid]):
            return None
        return current

    def current_of_many(self, facts: Sequence[Fact], *, max_steps: int = 20) -> dict[str, Fact | None]:
        """``current_of`` of each fact, by its uuid: the chains are walked side by side, one query per
        step for all of them (recall marks up to 30 hits at once)."""
        return current_facts(facts, self.get_many, self.active_uuids, max_steps=max_steps)

    def believed_about(self, names: Sequence[str], *, limit: int = 200) -> list[Fact]:
        """Believed facts whose subject is one of ``names`` or one of their things ("user's phone"), newest
        first."""
        scoped, sp = self._in_view()
        spelled = [n for name in names for n in subject_names(name)]
        if not spelled:
            return []
        marks = ",".join("?" * len(spelled))
        likes = " OR ".join(["lower(f.subject) LIKE ?"] * len(spelled))
        rows = self._db.query(
            f"SELECT * FROM facts f WHERE {scoped} AND f.is_archived = 0 AND f.superseded_at IS NULL "
            f"AND f.valid_to IS NULL AND (lower(f.subject) IN ({marks}) OR {likes}) "
            "ORDER BY coalesce(f.valid_from, f.recorded_at) DESC, f.id DESC LIMIT ?",
            (*sp, *spelled, *[f"{n}'s %" for n in spelled], limit),
        )
        return [row_to_fact(r) for r in rows]

    def speaks_of(self, name: str) -> bool:
        """Whether a fact in view has ``name`` for its subject, in any case (closed and archived facts
        too): the memory has been told about it."""
        scoped, sp = self._in_view()
        # the uuid is in no index on the subject: SQLite then probes the index on lower(subject) instead of
        # reading every entry of the scope in the (scope, subject, predicate) index
        row = self._db.query_one(
            f"SELECT f.uuid FROM facts f WHERE {scoped} AND lower(f.subject) = ? LIMIT 1",
            (*sp, name.casefold()),
        )
        return row is not None

    def superseded(self, *, limit: int = 50) -> list[Fact]:
        """Facts closed by a contradicting newer fact, most recently superseded first."""
        scoped, sp = self._in_view()
        rows = self._db.query(
            f"SELECT * FROM facts f WHERE {scoped} AND f.superseded_at IS NOT NULL AND f.is_archived = 0 "
            "ORDER BY f.superseded_at DESC, f.id DESC LIMIT ?",
            (*sp, limit),
        )
        return [row_to_fact(r) for r in rows]

    def history(
        self, subject: str, *, known: float | None = None, valid_at: float | None = None
    ) -> list[Fact]:
        """Every fact about a subject, superseded ones included, oldest first; with ``known``, only
        those recorded by then; with ``valid_at``, only those true then as known at ``known`` (default
        now; ``true_at``)."""
        scoped, sp = self._in_view()
        when, wp = "1 = 1", list[Any]()
        if valid_at is not None:
            when, wp = true_at(valid_at, known if known is not None else now())
        elif known is not None:
            when, wp = "f.recorded_at <= ?", [known]
        rows = self._db.query(
            f"SELECT * FROM facts f WHERE {scoped} AND lower(f.subject) = lower(?) AND {when} "
            "ORDER BY f.recorded_at, f.id",
            (*sp, subject, *wp),
        )
        return [row_to_fact(r) for r in rows]

    def true_at_uuids(self, uuids: Sequence[str], valid_at: float, known: float | None) -> set[str]:
        """The subset of ``uuids`` true at ``valid_at`` as known at ``known`` (default now; ``true_at``)."""
        if not uuids:
            return set()
        when, wp = true_at(valid_at, known if known is not None else now())
        scoped, sp = self._in_view(by_key=True)
        rows = self._db.query(
            f"SELECT f.uuid FROM facts f WHERE f.uuid IN (SELECT value FROM json_each(?)) AND {when} "
            f"AND {scoped}",
            (json.dumps(list(dict.fromkeys(uuids))), *wp, *sp),
        )
        return {str(r[0]) for r in rows}


def current_facts(
    facts: Sequence[Fact],
    fetch: Callable[[list[str]], Mapping[str, Fact]],
    believed: Callable[[list[str]], Collection[str]],
    *,
    max_steps: int = 20,
) -> dict[str, Fact | None]:
    """The believed fact at the end of each fact's ``superseded_by`` chain (None when the chain breaks,
    loops or ends in a fact not believed, or the fact was never replaced), by uuid: the chains walked side
    by side, ``fetch`` reading each step's next facts at once, ``believed`` checking the ends."""
    walking: dict[str, tuple[Fact, set[str]]] = {f.uuid: (f, {f.uuid}) for f in facts}
    out: dict[str, Fact | None] = {}
    for _ in range(max_steps):
        moving = {u: walked for u, walked in walking.items() if walked[0].superseded_by is not None}
        if not moving:
            break
        found = fetch(list(dict.fromkeys(str(c.superseded_by) for c, _ in moving.values())))
        for uuid, (current, seen) in moving.items():
            nxt = found.get(str(current.superseded_by))
            if nxt is None or nxt.uuid in seen:
                out[uuid] = None
                del walking[uuid]
                continue
            seen.add(nxt.uuid)
            walking[uuid] = (nxt, seen)
    ends = [current.uuid for uuid, (current, _) in walking.items() if current.uuid != uuid]
    active = believed(ends) if ends else ()
    for uuid, (current, _) in walking.items():
        out[uuid] = current if current.uuid != uuid and current.uuid in active else None
    return out


__all__ = ["FactHistory", "current_facts"]
