"""Cross-tier recall: candidates from every tier, fused into one ranked list of typed hits.

Design (measured on LoCoMo with bench/locomo_research.py; constants in ``recall.settings``):
  * turns (episodes): BM25 over the turn (question function words dropped) plus vectors — the turn's
    best sentence and the turn with the message before it, each view its own vector search — BM25
    scaled by its maximum, cosines from 0 (unrelated) to the best hit, summed with weights
    ("weighted score fusion": plain reciprocal-rank fusion of BM25 and vectors was worse than BM25);
  * participants' names are removed from the lexical terms and from the embedded query (they match
    half of all turns) and used instead as a prior: turns by the one person a question names rank up;
  * a time anchored question ("in May 2023", "last week") ranks up turns from that period (timeline);
  * a strong turn pulls in its neighbours (evidence often spans a question and its answer), and the
    same speaker's turn two away, after the other's reply (``recall.expand``);
  * the other turns of the sessions the best turns come from rank up, below the first hits (session
    cohesion, ``recall.expand``), unless the question gathers what happened over time ("how many",
    "both", "Where has X camped?");
  * a question asking for a guess ("Would X likely…") is embedded without its frame (``recall.expand``);
  * facts: BM25 and vectors over extracted facts, plus graph spreading activation from the entities the
    query names; curated (Tier 1) entries by term overlap;
  * the other stores (issue 16): texts indexed with ``semantic_index`` (chunks with no episode; BM25
    and a vector view of their own), timeline events (BM25, the period named; an event recorded for a
    fact that is a candidate is left to the fact, and one whose facts are all closed is left out) and
    entity cards (name, type, aliases, description, strongest relations: an entity the question names,
    or a BM25 match; never a participant), each kind scaled by its ``*_scale``; when no turn or fact
    shares a word with the question, turns and facts count for their best cosine (``confident_cosine``),
    so the nearest chatter does not outrank what the question names. Every hit says its kind and source
    (``Hit.source``); its ``tier`` is the tier whose search gave it the larger share of its score;
  * importance and recency act as small priors; near-duplicate texts are dropped;
  * turns marked at ingestion as chatter (only a question, greeting, acknowledgement, or the AI echoing
    the user) are never hits, though their neighbours keep their pull — except a person's question to
    another person beside it (two people talking: LoCoMo evidence); the AI agent's turns rank down;
  * cues from ``recall.query``: a turn that mostly asks a question ranks down (its neighbours keep its
    pull), a question asking for a name or title ranks up turns that name something, a turn whose
    statement the memory has since superseded ranks down (unless the question is about the past), and a
    question asking for several things spreads its hits over sessions;
  * speaker-centred priors from ``recall.aggregate``: a question naming two participants, one as its
    subject, ranks the subject's turns up; a list question about one person ranks the other
    participant's turns down once they have lent their neighbours their pull.
  * category -> instance matching (``recall.instances``): for a question naming a category ("What
    martial arts has John done?"), the turns among the first hits whose short phrases lie near the
    category (context-free word-piece vectors of the embedder; phrases saying the category word itself
    left to BM25) rank up behind the first few, after the diversity pass.
Sources run side by side: the calling thread embeds the question and searches the vectors while a recall
thread does the keyword side and finds the curated entries (its SQLite reads overlap the model, which
releases the interpreter lock);
reads go through Tier 2's read connection (``Database.reading``), so a recall never waits for a write
transaction and writes nothing. Loads are batched and bounded: the candidates' ids and neighbours in one
query, turns by id from a cache (a turn row never changes and its id is never reused), facts ranked from a
few columns and loaded only when they make the list; hits are built only for the best of them.
Hits carry safe strings: a row scanned clean when written (``tier2.verdicts``) is shown as stored, any
other is neutralised here (``metadata.neutralised`` says so).
"""

from __future__ import annotations

import heapq
import logging
import re
import threading
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from operator import itemgetter
from typing import Any

from hermes_memory.errors import HermesMemoryError
from hermes_memory.extract import find_temporal
from hermes_memory.graph.service import GraphService
from hermes_memory.recall import availability, expand, instances, present, signals
from hermes_memory.recall import query as cues
from hermes_memory.recall._reads import ReadsSnapshot, RecallReads
from hermes_memory.recall._threads import in_background, run_here
from hermes_memory.recall.candidates import Heard, Keywords, Others, Query
from hermes_memory.recall.foreground import RECALLS
from hermes_memory.recall.hits import Turn, build_hits, current_first, mark_superseded
from hermes_memory.recall.keywords import KeywordSide
from hermes_memory.recall.others import OtherStores
from hermes_memory.recall.scoring import (
    RecencyAt,
    add_part,
    believed_then,
    clip,
    diversified,
    floornorm,
    minmax,
    tier_of,
)
from hermes_memory.recall.settings import RecallSettings
from hermes_memory.recall.turns import TurnRanker
from hermes_memory.recall.vector_turns import TurnViews, Unread, vector_turns
from hermes_memory.records import Fact, Hit
from hermes_memory.tier1.curated_store import CuratedStore
from hermes_memory.tier2 import Tier2
from hermes_memory.tier2.search import fts_terms
from hermes_memory.tier3.semantic import SemanticMemory

log = logging.getLogger(__name__)

TIERS = ("tier1", "tier2", "tier3", "graph")
# The curated entries' hits and, by hit id, the statements since replaced of those superseded (with no
# ``as_of``): ``OtherStores.curated_hits``, found on the keyword side's thread.
Curated = tuple[list[Hit], dict[str, Fact] | None] | None
# What the keyword side's thread gives: the question understood, what the keywords found, the graph's facts
# (or the error that kept the graph from answering) and the curated entries.
KeywordFound = tuple[Query, Keywords, dict[str, float] | None, HermesMemoryError | None, Curated]
# The turns' phrase vectors kept for category -> instance matching (``instances.PhraseCache``, a memory
# bound: about 18 KB for a LoCoMo turn, so some 900 turns; a turn dropped is worked out again, ~0.1 ms).
_PHRASE_BYTES = 16 * 1024 * 1024


class RecallEngine:
    def __init__(
        self,
        tier2: Tier2,
        semantic: SemanticMemory | None,
        graph: GraphService | None,
        curated: CuratedStore | None,
        settings: RecallSettings | None = None,
    ):
        self._tier2 = tier2
        self._semantic = semantic
        self._graph = graph
        self._curated = curated
        self.settings = settings or RecallSettings()
        self._speakers: tuple[float, list[str]] | None = None
        self._lock = threading.Lock()
        self._reads = RecallReads(tier2)
        phrases = instances.PhraseCache(_PHRASE_BYTES)
        self._turns = TurnRanker(tier2, semantic, self.settings, self._participants, phrases)
        self._keywords = KeywordSide(tier2, graph, self.settings, self._turns.load_turns)
        self._others = OtherStores(tier2, curated, self.settings, self._participants)

    # -- query understanding --------------------------------------------------------------------
    def _participants(self) -> list[str]:
        with self._lock:
            if self._speakers is None or time.monotonic() - self._speakers[0] > 30.0:
                self._speakers = (time.monotonic(), self._tier2.episodes.speakers())
            return self._speakers[1]

    def _heard(self, query: str) -> Heard:
        """What the question's embedding needs, worked out before the model runs: the participants it
        names, the question without them, and whether it asks for a guess."""
        names = [n for n in self._participants() if re.search(rf"\b{re.escape(n)}\b", query, re.I)]
        stripped = query
        for name in names:
            stripped = re.sub(rf"\b{re.escape(name)}(?:'s)?\b", " ", stripped, flags=re.I)
        stripped = re.sub(r"\s+", " ", stripped).strip() or query
        return Heard(names, stripped, expand.is_inference(query))

    def _understand(self, query: str, now: float, heard: Heard, reads: ReadsSnapshot) -> Query:
        """The question understood (``heard``: its ``_heard``). Recall does this on the keyword side's
        thread while the calling thread embeds the question."""
        names, stripped, inference = heard
        name_words = {w.casefold() for n in names for w in n.split()}
        terms = [t for t in fts_terms(query) if t not in name_words] or fts_terms(query)
        terms = [t for t in terms if t not in present.FUNCTION_WORDS] or terms
        span = None
        # Relative dates ("last May") are read against the present conversation: the newest memory,
        # which is "now" for a live agent and the right anchor for an imported history.
        anchor = min(now, reads.settled("latest_time", self._tier2.episodes.latest_time) or now)
        mentions = find_temporal(query, datetime.fromtimestamp(anchor, tz=UTC))
        if mentions:
            first = mentions[0]
            span = (first.start.timestamp(), first.end.timestamp())
        return Query(
            query,
            terms,
            names,
            stripped,
            span,
            cues.asks_about_past(query),
            cues.asks_about_present(query),
            cues.asks_for_list(query),
            cues.answer_type(query),
            inference,
            across_time=cues.asks_across_time(query),
            category=instances.category_of(query, names) if self.settings.instance_prior > 0 else None,
        )

    # -- the recall -----------------------------------------------------------------------------
    def recall(
        self,
        query: str,
        *,
        limit: int = 10,
        limit_per_tier: int | None = None,
        tiers: Sequence[str] | None = None,
        as_of: float | None = None,
        session_id: str | None = None,
        unavailable: dict[str, str] | None = None,
        valid_at: float | None = None,
    ) -> list[Hit]:
        """Ranked hits across the requested tiers (default: all that are enabled), from the scope view
        the stores are bound to. Reads only (through Tier 2's read connection), writes nothing.

        ``limit`` hits in all, or with ``limit_per_tier`` up to that many of each tier asked (``limit``
        is then ignored), still in the one fused order. A hit's ``tier`` is the tier whose search gave
        it the larger share of its score: ``tier2`` full-text (BM25) and the timeline, ``tier3``
        vectors, ``graph`` spreading activation, ``tier1`` curated entries; a turn that only its
        neighbour pulled in counts as ``tier2`` (its session's order is a Tier 2 read).

        A failing vector or graph tier does not fail the recall: with ``unavailable`` given, the tier is
        recorded there (tier -> why, in words) and the other tiers answer; without it the error is
        raised. Tier 2 errors (StorageError) are always raised: it is the ground truth.

        ``valid_at`` (bitemporal, with ``as_of`` the system time, default now): only facts that were
        true at that world time as known then (``tier2.facts.true_at``)."""
        with RECALLS.running(), self._tier2.db.reading():  # the background worker steps aside meanwhile
            return self._recall(query, limit, limit_per_tier, set(tiers or TIERS), as_of, session_id,
                                unavailable, valid_at)  # fmt: skip

    def _recall(
        self,
        query: str,
        limit: int,
        per_tier: int | None,
        wanted: set[str],
        as_of: float | None,
        session_id: str | None,
        unavailable: dict[str, str] | None,
        valid_at: float | None = None,
    ) -> list[Hit]:
        now = time.time()
        current = as_of is None and valid_at is None  # the present as known now (not a bitemporal query)
        reads = self._reads.snapshot()
        heard = self._heard(query)
        st = self.settings
        if per_tier is not None:
            limit = per_tier * len(wanted)
        # Chunks indexed on their own (``semantic_index``).
        texts = reads.settled("texts", lambda: self._tier2.chunks.has_kind("text"))
        others = Others()
        # The keyword side (the question understood: its terms, the period it names, its cues; BM25 over
        # turns and facts, the other stores' candidates, the graph's facts) runs on a recall thread while
        # this one embeds the question and searches the vectors: the embedding starts at once (a thread
        # handed it would first wait for the interpreter lock) and releases that lock while the model
        # runs, so the keyword side overlaps it.
        graph = "graph" in wanted and self._graph is not None
        curated = "tier1" in wanted and self._curated is not None

        def keyword_side() -> KeywordFound:
            with self._tier2.db.reading():  # this thread's reads never wait for a write transaction
                q = self._understand(query, now, heard, reads)
                found = self._keywords.search(q, texts, others, wanted, graph, as_of, valid_at, current,
                                              reads)  # fmt: skip
                if q.category is not None and "tier3" in wanted and self._semantic is not None:
                    self._turns.prepare_phrases(found[0].turn_scores, reads)
                # The curated entries depend on the question alone: found here, beside the embedding. The
                # superseded statements of those since replaced are kept apart, to be put after the turns'.
                entries: Curated = None
                if curated:
                    replaced_entries: dict[str, Fact] | None = {} if current else None
                    entries = (self._others.curated_hits(q, replaced_entries), replaced_entries)
            return (q, *found, entries)

        side = in_background(keyword_side) if graph or "tier2" in wanted else run_here(keyword_side)
        views: dict[str, dict[str, float]] | None = None
        vector_error: HermesMemoryError | None = None
        if "tier3" in wanted and self._semantic is not None:
            try:
                views = self._vectors(heard, texts, reads)
            except HermesMemoryError as exc:
                vector_error = exc
        q, keywords, graph_facts, graph_error, entries = side.result()
        turn_scores, fact_scores, fact_parts = keywords.turn_scores, keywords.fact_scores, keywords.fact_parts
        turn_vectors: dict[int, float] = {}  # the vectors' share of ``turn_scores`` (the hit's tier)
        matched, rows, at_scale, stale = keywords.matched, keywords.rows, keywords.at_scale, keywords.stale
        if graph_error is not None:
            _unavailable(unavailable, "graph", graph_error)
        elif graph_facts is not None:
            matched = matched or bool(graph_facts)
            add_part(fact_scores, fact_parts, minmax(graph_facts), st.w_graph, "graph")
        if vector_error is not None:
            _unavailable(unavailable, "tier3", vector_error)
        unread = Unread()  # at scale: turns the vectors found that cannot be among the best candidates
        if views is not None:
            floor = st.vector_floor
            turn_views = TurnViews(views, {"episode": st.w_sentence, "episode_window": st.w_window}, floor)
            cut = st.scale_candidates if at_scale else None
            rows, unread = vector_turns(turn_views, rows, turn_scores, turn_vectors, cut, reads)
            add_part(fact_scores, fact_parts, floornorm(views["fact"], floor), st.w_fact, "tier3")
            if "text" in views:
                add_part(others.chunks, others.chunk_parts, floornorm(views["text"], floor),
                          st.w_chunk_vector, "tier3")  # fmt: skip
        # Turns and facts are scaled against their best candidate, so the best is worth 1 even when it
        # has nothing to do with the question. Without a shared word, their best cosine says how sure
        # that best is: below ``confident_cosine`` they count for that much less beside the other kinds.
        sure = 1.0
        if not matched and views is not None:
            tops = [max(views[v].values()) for v in ("episode", "episode_window", "fact") if views[v]]
            nearest = max(tops) if tops else 0.5
            sure = clip((2.0 * nearest - 1.0) / st.confident_cosine)
        ranked: list[tuple[float, int, str, Any, str]] = []  # (score, order, kind, key, tier): hits to be
        # turn uuid (curated entry: hit id) -> the superseded fact extracted from it
        replaced_turns: dict[str, Fact] = {}
        turns: dict[int, Turn] = {}
        scored: dict[int, float] = {}  # the turns' scores after their priors
        if turn_scores:
            neighbours = {row_id: (prev_id, next_id) for row_id, _, prev_id, next_id in rows}
            if at_scale and len(neighbours) > st.scale_candidates:
                keep = set(heapq.nlargest(st.scale_candidates, neighbours,
                                          key=lambda r: turn_scores.get(r, 0.0)))  # fmt: skip
                neighbours = {row_id: pair for row_id, pair in neighbours.items() if row_id in keep}
            if st.thread_pull > 0:  # the strongest candidates' turns two away are read (and loaded)
                seeds = heapq.nlargest(st.thread_seeds, neighbours, key=lambda r: turn_scores.get(r, 0.0))
                neighbours.update(self._turns.thread_rows(seeds, neighbours, reads))
            turns = self._turns.load_turns(neighbours, reads)
            # A question about the present leaves out turns superseded on its topic, so every turn's
            # superseded statement is read here; otherwise only the hits chosen are marked (below).
            if current and "tier2" in wanted and q.present:
                replaced_turns = reads.superseded_sources([t.uuid for t in turns.values()])
            dropped = present.off_the_present(replaced_turns, q.present, q.terms)
            stand_ins: dict[int, list[int]] = {}
            hit_turns = turns  # the turns that can be hits: those loaded before any stand-in
            if dropped:
                hit_turns = dict(turns)
                dropped, stand_ins = self._turns.stand_ins(dropped, replaced_turns, neighbours, turns, reads)
            # A turn left unread that came back as a neighbour (two away from a seed, a stand-in) counts.
            if unread.uuids:
                uuid_of = {row_id: turns[row_id].uuid for row_id in neighbours if row_id in turns}
                unread.restore(uuid_of, turn_scores, turn_vectors)
            # The candidates kept (at scale, the best of them): most often all of them (``turn_priors``
            # copies what it is given).
            own_scores = (turn_scores if turn_scores.keys() <= neighbours.keys()
                          else {k: v for k, v in turn_scores.items() if k in neighbours})  # fmt: skip
            scored = self._turns.turn_priors(
                own_scores, turns, neighbours, q, as_of, session_id, stale, dropped, stand_ins
            )  # fmt: skip
            if not q.across_time:  # gathered over time: its evidence spans sessions
                scored = expand.session_cohesion(
                    scored, turns, st.cohesion_seeds, st.cohesion_keep, st.session_cohesion
                )
            top = max(scored.values(), default=0.0) or 1.0
            # ``_episode_score`` of each, inlined (a few hundred turns per recall): the same arithmetic.
            scale = 1.0 + st.recency_weight
            pulled_only = "tier2" if "tier2" in wanted else "tier3"  # a turn only a neighbour pulled in
            own_of, vector_of, append = turn_scores.get, turn_vectors.get, ranked.append
            turn_of = hit_turns.get
            recency_at = RecencyAt(now, st)  # most candidates come from a few sessions
            for row_id, score in scored.items():
                turn = turn_of(row_id)
                if turn is None or score <= 0:
                    continue
                shown = score / top * recency_at[turn.timestamp] / scale  # > 0: clipped at 1 only
                own = own_of(row_id, 0.0)
                if own > 0:
                    vector = vector_of(row_id, 0.0)
                    tier = "tier3" if vector > own - vector else "tier2"
                else:
                    tier = pulled_only
                append(((shown if shown < 1.0 else 1.0) * sure, len(ranked), "episode", row_id, tier))
        facts_ranked: dict[str, float] = {}
        top_fact = max(fact_scores.values(), default=0.0)
        if top_fact > 0:
            scaled = (top_fact, st.fact_scale, sure)
            facts_ranked = self._fact_scores(fact_scores, scaled, as_of, now, reads, valid_at)
            ranked.extend((score, len(ranked) + i, "fact", uuid, tier_of(fact_parts[uuid]))
                          for i, (uuid, score) in enumerate(facts_ranked.items()))  # fmt: skip
        built = self._others.other_hits(others, now, set(fact_scores), as_of)  # chunks, events, entity cards
        if entries is not None:  # an entry since superseded is marked too
            curated_hits, replaced_entries = entries
            built.extend(curated_hits)
            if replaced_entries:
                replaced_turns.update(replaced_entries)
        ranked.extend((hit.score, len(ranked) + i, "built", i, hit.tier) for i, hit in enumerate(built))
        # Best first, ties in the order added (a stable sort reversed keeps equal keys in place).
        ranked.sort(key=itemgetter(0), reverse=True)
        caps: dict[str, int] | None = None
        if per_tier is not None:  # each tier's best hit_pool * per_tier only, in the fused order
            caps = dict.fromkeys(wanted, per_tier)
            taken: dict[str, int] = {}
            kept = []
            for item in ranked:
                taken[item[4]] = taken.get(item[4], 0) + 1
                if taken[item[4]] <= st.hit_pool * per_tier:
                    kept.append(item)
            ranked = kept
        # Every later step looks at the best hit_pool * limit distinct candidates only, and only those the
        # diversity pass chooses are made hits.
        pool, rows_of = build_hits(ranked, st.hit_pool * limit, turns, built, reads)
        # Category -> instance matching reorders the list after the diversity pass, so it is built deeper.
        category = q.category if views is not None and caps is None and turns else None
        deep = max(limit, st.instance_depth) if category is not None else limit
        if st.diversity <= 0 and caps is None:
            picked = [(i, pool.scores[i]) for i in range(min(deep, len(pool)))]
        else:
            picked = diversified(pool.texts, pool.scores, pool.sessions, pool.tiers, st.diversity, deep,
                                 st.list_sessions if q.listing else 0.0, caps)  # fmt: skip
        chosen = [pool.hit(i, score) for i, score in picked]
        if category is not None:
            chosen = self._turns.instance_prior(chosen, turns, rows_of, category)[:limit]
        replaced: dict[str, Fact] = {}
        threats: dict[str, int | None] = {}
        if current and "tier2" in wanted and not q.present and turns:
            replaced_turns.update(_superseded_chosen(chosen, turns, reads))
        if replaced_turns:  # the statements superseded since, marked on the hits chosen
            chosen, replaced, threats = mark_superseded(chosen, replaced_turns, reads)
        if replaced and q.present:
            chosen = current_first(chosen, replaced, threats, limit)
        return signals.explain(
            chosen, fact_parts=fact_parts, chunk_parts=others.chunk_parts, rows=rows_of,
            turn_scores=turn_scores, turn_vectors=turn_vectors, turn_priors=scored,
        )  # fmt: skip

    def _vectors(self, heard: Heard, texts: bool, reads: ReadsSnapshot) -> dict[str, dict[str, float]]:
        assert self._semantic is not None
        st = self.settings
        limits = {"episode": st.vector_candidates, "episode_window": st.window_candidates,
                  "fact": st.fact_candidates}  # fmt: skip
        if texts:
            limits["text"] = st.chunk_candidates
        # One search per view (in a shared top-k the many sentence chunks crowd out windows and facts),
        # all from one query embedding, as {source uuid: best score} without loading chunk text; which
        # facts are believed now comes from the read cache.
        with self._tier2.db.reading():
            query = expand.embedded_query(heard.stripped, heard.inference, st)
            return self._semantic.source_scores(
                query, limits, lambda uuids: reads.believed_ranks(uuids).keys()
            )

    def _fact_scores(
        self,
        scores: dict[str, float],
        scaled: tuple[float, float, float],
        as_of: float | None,
        now: float,
        reads: ReadsSnapshot,
        valid_at: float | None = None,
    ) -> dict[str, float]:
        """Each candidate fact's hit score (its score divided by the best, times the scale and how sure
        recall is: ``scaled``; then prior and recency applied), for those believed now (or at ``as_of``;
        with ``valid_at`` those true then as known at ``as_of``); read from a few columns, the facts
        themselves load only when they make the list."""
        st = self.settings
        if valid_at is not None:
            true = self._tier2.facts.true_at_uuids(list(scores), valid_at, as_of)
            rows = self._tier2.facts.ranking_rows([u for u in scores if u in true], now)
            as_of = None  # believed-then is what ``true_at`` checked
        elif as_of is None:
            rows = reads.believed_ranks(list(scores))
        else:
            rows = self._tier2.facts.ranking_rows(list(scores), as_of)
        top, scale, sure = scaled
        kept, weight = 1.0 - st.importance_weight, st.importance_weight
        out: dict[str, float] = {}
        row_of = rows.get
        recency_at = RecencyAt(now, st)
        for uuid, raw in scores.items():
            row = row_of(uuid)
            if row is None:
                continue
            importance, when, recorded_at, superseded_at, _ = row
            if as_of is not None and not believed_then(recorded_at, superseded_at, as_of):
                continue
            prior = kept + weight * importance
            value = raw / top * scale * sure * prior * recency_at[when]
            value = value if value < 1.0 else 1.0  # ``clip``, inlined
            out[uuid] = value if value > 0.0 else 0.0
        return out


def _superseded_chosen(chosen: list[Hit], turns: dict[int, Turn], reads: ReadsSnapshot) -> dict[str, Fact]:
    """``reads.superseded_sources`` of the loaded turns among the ``chosen`` turn hits: all that
    ``mark_superseded`` looks up when no turn was left out (a dozen turns read instead of every one
    loaded)."""
    wanted = [hit.source_ids[0] for hit in chosen if hit.kind == "episode" and hit.source_ids]
    if not wanted:
        return {}
    loaded = {turn.uuid for turn in turns.values()}
    return reads.superseded_sources([uuid for uuid in wanted if uuid in loaded])


def _unavailable(into: dict[str, str] | None, tier: str, exc: HermesMemoryError) -> None:
    """Record why a tier could not answer; without a place to record it, the error propagates."""
    if into is None:
        raise exc
    log.warning("recall without %s: %s", tier, exc)
    into[tier] = availability.reason_for(exc)


__all__ = ["TIERS", "RecallEngine", "RecallSettings"]
