"""Recall's hits from the other stores: chunks indexed on their own, events, entity cards, curated
entries."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hermes_memory.recall.candidates import Others, Query
from hermes_memory.recall.hits import entity_card, neutralised
from hermes_memory.recall.scoring import clip, recency_factor, tier_of
from hermes_memory.recall.settings import RecallSettings
from hermes_memory.records import SESSION_EVENT, Fact, Hit
from hermes_memory.security.threats import neutralise
from hermes_memory.tier1.curated_store import CuratedStore
from hermes_memory.tier2 import Tier2
from hermes_memory.tier2.search import fts_terms


class OtherStores:
    """The hits of the stores beside turns and facts: chunks indexed on their own, timeline events,
    entity cards (``other_hits``) and curated entries (``curated_hits``)."""

    def __init__(
        self,
        tier2: Tier2,
        curated: CuratedStore | None,
        settings: RecallSettings,
        participants: Callable[[], list[str]],
    ):
        self._tier2 = tier2
        self._curated = curated
        self.settings = settings
        self._participants = participants

    def other_hits(self, others: Others, now: float, facts: set[str], as_of: float | None) -> list[Hit]:
        """The other stores' candidates as hits, each kind scaled by its ``*_scale`` against its best
        possible score; their text was never scanned when written, so it is neutralised here. An event
        recorded for a fact that is a candidate itself (a dated statement) is left to the fact. With
        ``as_of``, only what was known then: chunks of that time, events recorded and entities first
        seen by then."""
        st = self.settings
        out: list[Hit] = []
        if others.chunks:
            best = st.w_chunk_bm25 + st.w_chunk_vector
            rows = self._tier2.chunks.get_many(list(others.chunks))
            for uuid, score in others.chunks.items():
                chunk = rows.get(uuid)
                if chunk is None or (as_of is not None and chunk.timestamp > as_of):
                    continue
                meta = {"session_id": chunk.session_id, "source_type": chunk.source_type,
                        "category": chunk.category, "chunk_index": chunk.chunk_index}  # fmt: skip
                shown = clip(st.chunk_scale * score / best * recency_factor(chunk.timestamp, now, st) /
                              (1.0 + st.recency_weight))  # fmt: skip
                out.append(neutralised(Hit(
                    id=f"chunk:{uuid}", score=shown, text=chunk.text, tier=tier_of(others.chunk_parts[uuid]),
                    kind="chunk", timestamp=chunk.timestamp, source_ids=(f"chunk:{uuid}",), metadata=meta,
                )))  # fmt: skip
        if others.event_rows:
            best = st.w_event_bm25 or 1.0  # a full BM25 match; the period adds to it (clipped at 1)
            for uuid, (event, sources, names) in others.event_rows.items():
                if facts.intersection(event.related_facts):
                    continue
                kept = st.session_event_scale if event.event_type == SESSION_EVENT else 1.0
                if kept <= 0:
                    continue  # the provider's record of a session restates turns that are candidates
                text = event.title + (f" — {event.description}" if event.description else "")
                about: dict[str, Any] = {"session_id": event.session_id, "event_type": event.event_type,
                                         "entities": names}  # fmt: skip
                score = others.events[uuid] / best * ((1.0 - st.importance_weight)
                                                       + st.importance_weight * event.importance)  # fmt: skip
                out.append(neutralised(Hit(
                    id=f"event:{uuid}", score=clip(st.event_scale * kept * score), text=text, tier="tier2",
                    kind="event", timestamp=event.timestamp, source_ids=sources, metadata=about,
                )))  # fmt: skip
        if others.cards:
            people = {n.casefold() for n in self._participants()}
            for uuid, (entity, links) in others.cards.items():
                if as_of is not None and entity.first_seen > as_of:
                    continue
                if people.intersection(n.casefold() for n in (entity.name, *entity.aliases)):
                    continue  # a participant of the conversation is its subject, not a topic
                if not (entity.aliases or entity.description or links or uuid in others.named):
                    continue  # "Greta (person)", found by a role she no longer has: says nothing
                text = entity_card(entity.name, entity.entity_type, entity.aliases, entity.description, links)
                card: dict[str, Any] = {"entity_type": entity.entity_type, "aliases": list(entity.aliases)}
                out.append(neutralised(Hit(
                    id=f"entity:{uuid}", score=clip(st.entity_scale * others.entities[uuid]), text=text,
                    tier="tier2", kind="entity", timestamp=entity.last_seen, metadata=card,
                )))  # fmt: skip
        return out

    def curated_hits(self, q: Query, stale: dict[str, Fact] | None = None) -> list[Hit]:
        """The curated entries sharing a word with the question; with ``stale``, each entry whose
        statement the memory has since superseded (its mirrored fact, ``superseded_entries``) is put
        there by hit id, to be marked as a replaced turn is."""
        assert self._curated is not None
        terms = set(q.terms)
        out: list[Hit] = []
        if not terms:
            return out
        entries: dict[str, str] = {}  # hit id -> the entry as written
        for store in ("memory", "user"):
            for i, entry in enumerate(self._curated.entries(store)):
                words = set(fts_terms(entry))
                overlap = len(terms & words) / len(terms)
                if overlap > 0:
                    entries[f"curated:{store}:{i}"] = entry
                    # Curated files can be edited outside memory: their text is neutralised as read.
                    shown = neutralise(entry)
                    meta: dict[str, Any] = {"store": store}
                    if shown != entry:
                        meta["neutralised"] = True
                    out.append(
                        Hit(
                            id=f"curated:{store}:{i}",
                            score=clip(self.settings.w_curated * overlap),
                            text=shown,
                            tier="tier1",
                            kind="curated",
                            metadata=meta,
                        )
                    )
        if stale is not None and entries:
            replaced = self._tier2.facts.superseded_entries(list(entries.values()))
            stale.update((uuid, replaced[entry]) for uuid, entry in entries.items() if entry in replaced)
        return out


__all__ = ["OtherStores"]
