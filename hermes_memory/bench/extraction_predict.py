"""What the store keeps of a labelled conversation: ingested into a fresh memory and read back, or the
labels' own perfect prediction (the scorer's fixed point)."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from hermes_memory.bench.extraction_labels import Conversation


@dataclass(slots=True)
class StoredFact:
    subject: str
    predicate: str
    object: str | None
    content: str


@dataclass(slots=True)
class Prediction:
    """What the store holds after one conversation, facts and dates by turn index."""

    entities: list[tuple[str, str, tuple[str, ...]]] = field(default_factory=list)  # name, type, aliases
    relations: list[tuple[str, str, str]] = field(default_factory=list)
    facts: dict[int, list[StoredFact]] = field(default_factory=dict)
    dates: dict[int, set[tuple[str, str]]] = field(default_factory=dict)
    facts_all: list[StoredFact] = field(default_factory=list)
    #: turns no stored episode stands for (their facts and dates cannot be attributed)
    unmapped_turns: int = 0


def predict(conv: Conversation, overrides: dict[str, Any] | None = None) -> Prediction:
    """Ingest ``conv`` into a fresh temporary memory and read back what it stored."""
    from hermes_memory.api.memory_api import MemoryAPI

    settings = {"tier3.embedding_model": "hashing", "tier3.backend": "memory", **(overrides or {})}
    with (
        tempfile.TemporaryDirectory(prefix="hm-xbench-") as home,
        MemoryAPI(hermes_home=home, actor="bench", **settings) as api,
    ):
        _ingest(api, conv)
        flushed = api.flush(timeout=None)
        if not flushed["success"] or not flushed["data"]["drained"]:
            raise RuntimeError(f"flush failed: {flushed}")
        return _read_back(api, conv)


def _ingest(api: Any, conv: Conversation) -> None:
    session = f"bench-{conv.id}"
    turns = list(conv.turns)
    i = 0
    while i < len(turns):
        turn = turns[i]
        if conv.kind == "human":
            env = api.remember_message(turn.text, session, turn.time, role="user", speaker=turn.speaker,
                                       metadata={"bench_turn": {"user": turn.index}})  # fmt: skip
            i += 1
        else:
            user = turn if turn.role == "user" else None
            reply_at = i + 1 if user is not None else i
            reply = turns[reply_at] if reply_at < len(turns) and turns[reply_at].role == "assistant" else None
            indexes = {role: t.index for role, t in (("user", user), ("assistant", reply)) if t is not None}
            env = api.remember_turn(
                user.text if user else None, reply.text if reply else None, session,
                (user or turn).time, user_name=conv.user_name, assistant_name=conv.assistant_name,
                metadata={"bench_turn": indexes},
            )  # fmt: skip
            i += len(indexes)
        if not env["success"]:
            raise RuntimeError(f"ingest of {conv.id} turn {turn.index} failed: {env['error']}")


def _read_back(api: Any, conv: Conversation) -> Prediction:
    from hermes_memory.tier2.readback import all_episodes, all_facts, event_spans

    db, admin = api.tier2.db, api.tier2.admin()
    turn_of: dict[str, int] = {}
    for episode in all_episodes(db):
        index = (episode.metadata.get("bench_turn") or {}).get(episode.role)
        if isinstance(index, int):
            turn_of[episode.uuid] = index
    pred = Prediction(unmapped_turns=len({t.index for t in conv.turns} - set(turn_of.values())))
    names: dict[str, str] = {}
    for entity in admin.entities.all():
        names[entity.uuid] = entity.name
        pred.entities.append((entity.name, entity.entity_type, entity.aliases))
    for relation in admin.relations.all():
        src, dst = names.get(relation.from_entity_id), names.get(relation.to_entity_id)
        if src is not None and dst is not None:
            pred.relations.append((src, relation.relation_type, dst))
    for stored in all_facts(db):
        fact = StoredFact(stored.subject or "", stored.predicate or "", stored.object, stored.content)
        pred.facts_all.append(fact)
        for source in stored.source_episodes:
            if source in turn_of:
                pred.facts.setdefault(turn_of[source], []).append(fact)
    for span in event_spans(db, "event"):
        start = datetime.fromtimestamp(span.timestamp, tz=UTC)
        end = datetime.fromtimestamp(span.end_timestamp, tz=UTC) if span.end_timestamp else start
        end_day = (
            end.date() if end > start and end.time() == datetime.min.time() else end.date() + timedelta(1)
        )
        for source in span.source_episodes:
            if source in turn_of:
                pred.dates.setdefault(turn_of[source], set()).add(
                    (start.date().isoformat(), end_day.isoformat())
                )
    return pred


def prediction_from_labels(conv: Conversation) -> Prediction:
    """The prediction a perfect extractor would store for ``conv`` (the scorer's fixed point)."""
    pred = Prediction()
    seen: set[tuple[str, str]] = set()
    for turn in conv.turns:
        for name, etype in turn.entities:
            if (name, etype) not in seen:
                seen.add((name, etype))
                pred.entities.append((name, etype, ()))
        for subject, edge, obj in turn.relations:
            rel = (subject, edge, obj.split("|")[0])
            if rel not in pred.relations:
                pred.relations.append(rel)
        for subject, predicate, obj in turn.facts:
            first = obj.split("|")[0]
            fact = StoredFact(subject, predicate, None if predicate == "states" else first,
                              f"{subject} {predicate.replace('_', ' ')} {first}")  # fmt: skip
            pred.facts.setdefault(turn.index, []).append(fact)
            pred.facts_all.append(fact)
        if turn.dates:
            pred.dates[turn.index] = {(start, end) for _, start, end in turn.dates}
    return pred


__all__ = [
    "Prediction",
    "StoredFact",
    "predict",
    "prediction_from_labels",
]
