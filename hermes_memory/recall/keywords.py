"""Recall's keyword side (``KeywordSide``): the candidates found by words, dates and names."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any, TypeVar

from hermes_memory.errors import HermesMemoryError
from hermes_memory.graph.service import GraphService
from hermes_memory.recall._reads import ReadsSnapshot
from hermes_memory.recall.candidates import Keywords, Others, Query
from hermes_memory.recall.scoring import add, add_part, maxnorm, minmax
from hermes_memory.recall.settings import RecallSettings
from hermes_memory.records import RESTATEMENT
from hermes_memory.tier2 import Tier2

_Row = TypeVar("_Row")


class KeywordSide:
    """The keyword side of a recall, run on a recall thread while the calling thread embeds the question:
    BM25 over turns and facts, the period the question names, the other stores' candidates, the graph's
    facts, and the rows of what it found (``search``)."""

    def __init__(
        self,
        tier2: Tier2,
        graph: GraphService | None,
        settings: RecallSettings,
        load_turns: Callable[[dict[int, tuple[int | None, int | None]], ReadsSnapshot], Any],
    ):
        self._tier2 = tier2
        self._graph = graph
        self.settings = settings
        self.load_turns = load_turns

    def search(
        self,
        q: Query,
        texts: bool,
        others: Others,
        wanted: set[str],
        graph: bool,
        as_of: float | None,
        valid_at: float | None,
        current: bool,
        reads: ReadsSnapshot,
    ) -> tuple[Keywords, dict[str, float] | None, HermesMemoryError | None]:
        """On a recall thread: the turns' and facts' BM25 candidates (with the period the question
        names), their rows and turns, the superseded turns; then ``_entity_side``."""
        st = self.settings
        found = Keywords()
        turn_scores, fact_scores, fact_parts = found.turn_scores, found.fact_scores, found.fact_parts
        with self._tier2.db.reading():
            if "tier2" in wanted:
                # BM25 is 0 for a turn that matches nothing, so it is scaled by its maximum (min 0).
                bm25 = self._tier2.episodes.bm25_ranks(" ".join(q.terms), limit=st.candidates)
                add(turn_scores, maxnorm(bm25), st.w_bm25)
                found.matched = bool(bm25)
                if q.span is not None:  # the timeline: turns from the period a question names are candidates
                    speaker = q.names[0] if len(q.names) == 1 else None
                    in_period = self._tier2.episodes.in_range(
                        q.span[0], q.span[1] + 86400.0, speaker=speaker, limit=st.candidates
                    )
                    add(turn_scores, {row_id: 1.0 for row_id in in_period}, st.w_timeline)
                fact_bm25 = self._bm25_facts(q, as_of, valid_at)
                found.matched = found.matched or bool(fact_bm25)
                add_part(fact_scores, fact_parts, minmax(fact_bm25), st.w_fact, "tier2")
            # While the vectors are searched: the keyword candidates' rows and turns, the superseded turns.
            found.rows = reads.episode_rows(list(turn_scores), []) if turn_scores else []
            found.at_scale = reads.settled("last_row_id", self._tier2.episodes.last_row_id) > st.scale_turns
            if found.rows and not found.at_scale:
                self.load_turns({row_id: (prev_id, next_id) for row_id, _, prev_id, next_id in found.rows},
                                 reads)  # fmt: skip
            # Only a question about the present ranks replaced statements down and puts what replaced them
            # first; elsewhere ("when did I move?") they keep their place, marked.
            if current and q.present and "tier2" in wanted:
                found.stale = self._superseded_turns(q)
            if not graph and "tier2" not in wanted:
                return found, None, None
            return (found, *self._entity_side(q, texts, others, as_of, "tier2" in wanted, graph, reads))

    def _entity_side(
        self,
        q: Query,
        texts: bool,
        others: Others,
        as_of: float | None,
        tier2: bool,
        graph: bool,
        reads: ReadsSnapshot,
    ) -> tuple[dict[str, float] | None, HermesMemoryError | None]:
        """On a recall thread: the other stores' candidates into ``others`` (with ``tier2``) and the
        graph's facts (with ``graph``: the facts, or the error that kept the graph from answering)."""
        with self._tier2.db.reading():
            if tier2:
                self._lexical_others(q, texts, others, as_of, reads)
            if not graph:
                return None, None
            try:
                return self._graph_facts(q, reads), None
            except HermesMemoryError as exc:
                return None, exc

    def _lexical_others(
        self, q: Query, texts: bool, others: Others, as_of: float | None, reads: ReadsSnapshot
    ) -> None:
        """The Tier 2 candidates of the other stores: chunks indexed on their own by BM25, events by
        BM25 and by the period the question names, entities the question names or whose name, aliases
        or description match; the events' and entities' rows are read here too (while the vectors are
        searched, from the read cache when there is no ``as_of``), those of events recorded by ``as_of``."""
        st = self.settings
        terms = " ".join(q.terms)
        if texts and terms:
            found = self._tier2.chunks.bm25_of_kind(terms, "text", limit=st.chunk_candidates)
            add_part(others.chunks, others.chunk_parts, maxnorm(found), st.w_chunk_bm25, "tier2")
        if terms:
            add(others.events, maxnorm(self._tier2.timeline.bm25_scores(terms, limit=st.event_candidates)),
                 st.w_event_bm25)  # fmt: skip
        if q.span is not None:
            period = self._tier2.timeline.in_period(q.span[0], q.span[1] + 86400.0, limit=st.event_candidates)
            add(others.events, dict.fromkeys(period, 1.0), st.w_event_period)
        named = self._named(q, reads)[: st.entity_candidates]
        if terms:
            matched = maxnorm(self._tier2.entities.bm25_scores(terms, limit=st.entity_candidates))
            add(others.entities, matched, st.w_entity_bm25)
        for uuid in named:
            others.entities[uuid] = 1.0
        others.named.update(named)
        if others.events:
            others.event_rows = self._by_uuid(list(others.events), as_of, reads, "events",
                                              self._tier2.timeline.for_recall)  # fmt: skip
        if others.entities:
            cards = functools.partial(self._tier2.entities.cards, relations=st.entity_relations)
            others.cards = self._by_uuid(list(others.entities), as_of, reads, "cards", cards)

    @staticmethod
    def _by_uuid(
        uuids: list[str],
        as_of: float | None,
        reads: ReadsSnapshot,
        kind: str,
        read: Callable[..., dict[str, _Row]],
    ) -> dict[str, _Row]:
        """``read(uuids, recorded_by=as_of)`` (``TimelineStore.for_recall``, ``EntityStore.cards``). Without
        ``as_of`` each uuid's entry depends on its own rows only, so the read cache keeps it by uuid while
        nothing is committed; the entries come by uuid, the order the store's reads return them in."""
        if as_of is not None:
            return read(uuids, recorded_by=as_of)
        rows = reads.settled_rows(kind, uuids, read)
        return {uuid: rows[uuid] for uuid in sorted(rows)}

    def _bm25_facts(self, q: Query, as_of: float | None, valid_at: float | None = None) -> dict[str, float]:
        query = " ".join(q.terms)
        if not query:
            return {}
        # A fact that restates one of the user's clauses (kept so that a later statement can close it)
        # is no hit of its own: its turn is, with the same words.
        return self._tier2.facts.bm25_scores(
            query, limit=self.settings.fact_bm25_candidates, as_of=as_of, valid_at=valid_at,
            skip_extractor=RESTATEMENT,
        )  # fmt: skip

    def _graph_facts(self, q: Query, reads: ReadsSnapshot) -> dict[str, float]:
        assert self._graph is not None
        seeds = self._named(q, reads)
        if not seeds:
            return {}
        # Entities another process wrote may be missing from this process's graph until it refreshes.
        seeds = self._graph.present(seeds)
        if not seeds:
            return {}
        st = self.settings
        activation = self._graph.graph.spread(
            seeds, decay=st.graph_decay, max_hops=st.graph_hops, threshold=st.graph_threshold
        )
        strongest = sorted(activation.items(), key=lambda kv: kv[1], reverse=True)[: st.graph_entities]
        linked = functools.partial(self._tier2.facts.about_entities, per_entity=st.graph_facts_per_entity)
        about = reads.settled_rows("linked facts", [uuid for uuid, _ in strongest], linked)
        out: dict[str, float] = {}
        for entity_uuid, act in strongest:
            for fact_uuid in about.get(entity_uuid, ()):
                out[fact_uuid] = max(out.get(fact_uuid, 0.0), act)
        return out

    def _named(self, q: Query, reads: ReadsSnapshot) -> list[str]:
        """``_entities_in`` the question, looked up once per recall (the graph and the cards ask)."""
        if q.entities is None:
            q.entities = self._entities_in(q.text, reads)
        return q.entities

    def _entities_in(self, text: str, reads: ReadsSnapshot) -> list[str]:
        """Entities whose name or alias appears in the text as whole words (longest phrases win)."""
        words = re.findall(r"[\w'-]+", text)
        phrases: list[str] = []
        for size in (3, 2, 1):
            for i in range(len(words) - size + 1):
                phrase = " ".join(words[i : i + size])
                if size == 1 and (len(phrase) < 3 or not phrase[0].isupper()):
                    continue
                phrases.append(phrase)
        if not phrases:
            return []
        named = reads.settled_rows("entity names", phrases, self._tier2.entities.find_uuids)
        found: list[str] = []
        for phrase in phrases:
            for uuid in named.get(phrase, ()):
                if uuid not in found:
                    found.append(uuid)
        return found[: self.settings.graph_seeds]

    def _superseded_turns(self, q: Query) -> set[str]:
        """Source turns of superseded facts on the question's topic (none for a question about the past
        or a period)."""
        if q.past or q.span is not None or not q.terms or self.settings.superseded_penalty <= 0:
            return set()
        limit = self.settings.superseded_candidates
        old = self._tier2.facts.superseded_matching(" ".join(q.terms), limit=limit)
        return {uuid for fact in old for uuid in fact.source_episodes}


__all__ = ["KeywordSide"]
