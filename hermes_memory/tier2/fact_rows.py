"""How a fact row reads: the ``Fact`` record of a row, the results of a store or search, a subject's
spellings, and the SQL predicates for "believed now / then" and "true at"."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from hermes_memory.records import Fact
from hermes_memory.tier2._util import loads_list


@dataclass(frozen=True)
class StoredFact:
    fact: Fact
    created: bool
    superseded: tuple[str, ...] = ()


@dataclass(frozen=True)
class ScoredFact:
    fact: Fact
    score: float


def row_to_fact(row: sqlite3.Row) -> Fact:
    return Fact(
        uuid=row["uuid"],
        content=row["content"],
        content_hash=row["content_hash"],
        category=row["category"],
        confidence=row["confidence"],
        source_type=row["source_type"],
        source_id=row["source_id"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        expires_at=row["expires_at"],
        access_count=row["access_count"],
        last_accessed=row["last_accessed"],
        is_archived=bool(row["is_archived"]),
        valid_from=row["valid_from"],
        valid_to=row["valid_to"],
        recorded_at=row["recorded_at"],
        superseded_at=row["superseded_at"],
        superseded_by=row["superseded_by"],
        subject=row["subject"],
        predicate=row["predicate"],
        object=row["object"],
        source_episodes=loads_list(row["source_episodes"]),
        extractor=row["extractor"],
        importance=row["importance"],
        scope=row["scope"],
    )


def subject_names(subject: str) -> tuple[str, ...]:
    """The lower-cased spellings of one subject: with and without a leading "the"."""
    name = " ".join(subject.casefold().split())
    bare = name.removeprefix("the ")
    return tuple(dict.fromkeys((name, bare, f"the {bare}")))


def visible_where(as_of: float | None, at: float, valid: float | None = None) -> tuple[str, list[Any]]:
    """SQL (on alias f) selecting facts that are believed now, or were believed at ``as_of``; with
    ``valid`` (bitemporal): facts that were TRUE at ``valid`` according to what was known at ``as_of``
    (default now) — see ``true_at``."""
    if valid is not None:
        return true_at(valid, as_of if as_of is not None else at)
    if as_of is None:
        return (
            "f.is_archived = 0 AND f.superseded_at IS NULL AND f.valid_to IS NULL "
            "AND (f.expires_at IS NULL OR f.expires_at > ?)",
            [at],
        )
    return (
        "f.is_archived = 0 AND f.recorded_at <= ? AND (f.superseded_at IS NULL OR f.superseded_at > ?)",
        [as_of, as_of],
    )


def true_at(valid: float, known: float) -> tuple[str, list[Any]]:
    """SQL (on alias f) selecting the facts true at world time ``valid`` as known at system time
    ``known``: recorded by ``known``, not archived, valid from at or before ``valid`` and not ended by
    then. A fact's end (``valid_to``) counts only once it was known: a fact closed by a supersession
    recorded after ``known`` was still open-ended then; an end given when the fact was stated (a
    ``valid_to`` without supersession) was known from the start."""
    return (
        "f.is_archived = 0 AND f.recorded_at <= ? AND coalesce(f.valid_from, f.recorded_at) <= ? "
        "AND (f.valid_to IS NULL OR f.valid_to > ? OR f.superseded_at > ?)",
        [known, valid, valid, known],
    )


__all__ = ["ScoredFact", "StoredFact", "row_to_fact", "subject_names", "true_at", "visible_where"]
