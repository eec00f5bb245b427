"""What one recall works with: what its embedding needs of the question (``Heard``), the question as
understood (``Query``), the other stores' candidates (``Others``) and what the keyword side found
(``Keywords``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from hermes_memory.records import Entity, Event


class Heard(NamedTuple):
    """What the question's embedding needs: the participants it names, the question without them, and
    whether it asks for a guess (``expand.is_inference``)."""

    names: list[str]
    stripped: str
    inference: bool


@dataclass
class Query:
    text: str
    terms: list[str]
    names: list[str]
    stripped: str
    span: tuple[float, float] | None
    past: bool = False
    present: bool = False
    listing: bool = False
    answer: str | None = None  # what kind of turn can answer it (``query.answer_type``)
    inference: bool = False  # it asks for a guess (``expand.is_inference``)
    across_time: bool = False  # it gathers what happened over time (``query.asks_across_time``)
    category: str | None = None  # what it asks instances of (``instances.category_of``), when asked for
    entities: list[str] | None = None  # the entities it names (``KeywordSide._named``), once looked up


@dataclass
class Others:
    """The candidates of the other stores (chunks indexed on their own, events, entities), by uuid:
    their fused scores and each score's share by the tier that found it."""

    chunks: dict[str, float] = field(default_factory=dict)
    chunk_parts: dict[str, dict[str, float]] = field(default_factory=dict)
    events: dict[str, float] = field(default_factory=dict)
    entities: dict[str, float] = field(default_factory=dict)
    # Their rows, read while the vectors are searched: ``TimelineStore.for_recall``, ``EntityStore.cards``.
    event_rows: dict[str, tuple[Event, tuple[str, ...], list[str]]] = field(default_factory=dict)
    cards: dict[str, tuple[Entity, list[tuple[str, str]]]] = field(default_factory=dict)
    named: set[str] = field(default_factory=set)  # the entities the question names


@dataclass
class Keywords:
    """What the keyword side found (``KeywordSide.search``): turn and fact scores (each fact's
    share by tier), whether a turn or fact shares a word with the question, the candidates' episode rows,
    whether the store is at scale, and the superseded turns on the question's topic."""

    turn_scores: dict[int, float] = field(default_factory=dict)
    fact_scores: dict[str, float] = field(default_factory=dict)
    fact_parts: dict[str, dict[str, float]] = field(default_factory=dict)
    matched: bool = False
    rows: list[tuple[int, str, int | None, int | None]] = field(default_factory=list)
    at_scale: bool = False
    stale: set[str] = field(default_factory=set)


__all__ = ["Heard", "Keywords", "Others", "Query"]
