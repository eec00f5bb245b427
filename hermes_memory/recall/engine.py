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
    fact that is a candidate is left to the fact) and entity cards (name, type, aliases, description,
    strongest relations: an entity the question names, or a BM25 match; never a participant), each
    kind scaled by its ``*_scale``; when no turn or fact shares a word with the question, turns and
    facts count for their best cosine (``confident_cosine``), so the nearest chatter does not outrank
    what the question names. Every hit says its kind and source (``Hit.source``); its ``tier`` is the
    tier whose search gave it the larger share of its score;
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
thread does the keyword side (its SQLite reads overlap the model, which releases the interpreter lock);
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
import queue
import re
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import lru_cache
from operator import itemgetter
from typing import Any

from hermes_memory.errors import HermesMemoryError
from hermes_memory.extract import find_temporal
from hermes_memory.extract.wording import render
from hermes_memory.graph.service import GraphService
from hermes_memory.recall import aggregate, availability, expand, instances, present, signals
from hermes_memory.recall import query as cues
from hermes_memory.recall._reads import ReadsSnapshot, RecallReads
from hermes_memory.recall.foreground import RECALLS
from hermes_memory.recall.settings import RecallSettings
from hermes_memory.records import RESTATEMENT, SESSION_EVENT, Entity, Episode, Event, Fact, Hit
from hermes_memory.security.threats import neutralise, neutralise_data
from hermes_memory.tier1.curated_store import CuratedStore
from hermes_memory.tier2 import Tier2
from hermes_memory.tier2._util import normalise
from hermes_memory.tier2.search import fts_terms
from hermes_memory.tier2.verdicts import CLEAN
from hermes_memory.tier3.embedder import StaticVectors
from hermes_memory.tier3.semantic import SemanticMemory

log = logging.getLogger(__name__)

TIERS = ("tier1", "tier2", "tier3", "graph")
# The keyword side runs beside the embedding, on one of this many long-lived daemon threads (not a
# ThreadPoolExecutor: Python joins an executor's threads at exit, so a one-shot Hermes process would wait
# for a search nobody needs any more; and not a new thread per recall: starting one waits for it to be
# scheduled). Several recalls (the prefetch's jobs) may run at once.
_RECALL_THREADS = 3
# The turns' phrase vectors kept for category -> instance matching (``instances.PhraseCache``, a memory
# bound: about 18 KB for a LoCoMo turn, so some 900 turns; a turn dropped is worked out again, ~0.1 ms).
_PHRASE_BYTES = 16 * 1024 * 1024
_jobs: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]]] = queue.SimpleQueue()
_started: list[threading.Thread] = []
_start_lock = threading.Lock()


def _serve() -> None:
    while True:
        fn, future = _jobs.get()
        if not future.set_running_or_notify_cancel():
            continue
        try:
            future.set_result(fn())
        except BaseException as exc:  # noqa: BLE001 - handed to the caller through the future
            future.set_exception(exc)


def _in_background(fn: Callable[[], Any]) -> Future[Any]:
    """Run ``fn`` on a daemon thread; its result (or exception) in the returned future."""
    if len(_started) < _RECALL_THREADS:
        with _start_lock:
            while len(_started) < _RECALL_THREADS:
                thread = threading.Thread(target=_serve, name="hermes-memory-recall", daemon=True)
                thread.start()
                _started.append(thread)
    future: Future[Any] = Future()
    _jobs.put((fn, future))
    return future


def _done(fn: Callable[[], Any]) -> Future[Any]:
    """``fn`` run here, as a finished future (nothing to overlap: no thread hand-off)."""
    future: Future[Any] = Future()
    future.set_result(fn())
    return future


class _Turn:
    """A cached turn and what recall reads from it, worked out once per version of its row (the read
    cache, ``_reads``, drops it when a commit changes the row). Its hit
    (with its strings neutralised unless scanned clean when written) is built on first use: only the few
    turns that make a recall's list need one, and neutralising a turn costs more than ranking it."""

    __slots__ = ("_hit", "_key", "answers", "chatter", "episode", "question", "threat")

    def __init__(self, episode: Episode, threat: int | None):
        self.episode = episode
        self.threat = threat
        self.chatter: str | None = cues.chatter_of(episode)
        self.question: bool = cues.is_question_turn(episode.text)
        self.answers: tuple[bool, tuple[str, ...]] = cues.answer_cues(episode.text)
        self._hit: Hit | None = None
        self._key: str | None = None

    @property
    def hit(self) -> Hit:
        """The turn as a hit (score 0). Two threads may build it side by side: both build the same."""
        hit = self._hit
        if hit is None:
            hit = self._hit = _episode_hit(self.episode, 0.0, self.threat)
        return hit

    @property
    def key(self) -> str:
        """``normalise`` of the hit's text: near-duplicates share it."""
        key = self._key
        if key is None:
            key = self._key = normalise(self.hit.text)
        return key


def _scored(hit: Hit, score: float, tier: str) -> Hit:
    """``hit`` with another score and tier (``dataclasses.replace`` without its generic field walk) and
    its own copy of the metadata (a cached hit's dict is never handed out)."""
    return Hit(hit.id, score, hit.text, tier, hit.kind, hit.timestamp, hit.source_ids, dict(hit.metadata))


@dataclass
class _Query:
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
    entities: list[str] | None = None  # the entities it names (``RecallEngine._named``), once looked up


@dataclass
class _Others:
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
class _Keywords:
    """What the keyword side found (``RecallEngine._keyword_side``): turn and fact scores (each fact's
    share by tier), whether a turn or fact shares a word with the question, the candidates' episode rows,
    whether the store is at scale, and the superseded turns on the question's topic."""

    turn_scores: dict[int, float] = field(default_factory=dict)
    fact_scores: dict[str, float] = field(default_factory=dict)
    fact_parts: dict[str, dict[str, float]] = field(default_factory=dict)
    matched: bool = False
    rows: list[tuple[int, str, int | None, int | None]] = field(default_factory=list)
    at_scale: bool = False
    stale: set[str] = field(default_factory=set)


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
        self._phrases = instances.PhraseCache(_PHRASE_BYTES)

    # -- query understanding --------------------------------------------------------------------
    def _participants(self) -> list[str]:
        with self._lock:
            if self._speakers is None or time.monotonic() - self._speakers[0] > 30.0:
                self._speakers = (time.monotonic(), self._tier2.episodes.speakers())
            return self._speakers[1]

    def _understand(self, query: str, now: float) -> _Query:
        names = [n for n in self._participants() if re.search(rf"\b{re.escape(n)}\b", query, re.I)]
        stripped = query
        for name in names:
            stripped = re.sub(rf"\b{re.escape(name)}(?:'s)?\b", " ", stripped, flags=re.I)
        stripped = re.sub(r"\s+", " ", stripped).strip() or query
        name_words = {w.casefold() for n in names for w in n.split()}
        terms = [t for t in fts_terms(query) if t not in name_words] or fts_terms(query)
        terms = [t for t in terms if t not in present.FUNCTION_WORDS] or terms
        span = None
        # Relative dates ("last May") are read against the present conversation: the newest memory,
        # which is "now" for a live agent and the right anchor for an imported history.
        anchor = min(now, self._tier2.episodes.latest_time() or now)
        mentions = find_temporal(query, datetime.fromtimestamp(anchor, tz=UTC))
        if mentions:
            first = mentions[0]
            span = (first.start.timestamp(), first.end.timestamp())
        return _Query(
            query,
            terms,
            names,
            stripped,
            span,
            cues.asks_about_past(query),
            cues.asks_about_present(query),
            cues.asks_for_list(query),
            cues.answer_type(query),
            expand.is_inference(query),
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
        q = self._understand(query, now)
        st = self.settings
        if per_tier is not None:
            limit = per_tier * len(wanted)
        texts = self._tier2.chunks.has_kind("text")  # chunks indexed on their own (``semantic_index``)
        others = _Others()
        # The keyword side (BM25 over turns and facts, the other stores' candidates, the graph's facts)
        # runs on a recall thread while this one embeds the question and searches the vectors: the
        # embedding starts at once (a thread handed it would first wait for the interpreter lock) and
        # releases that lock while the model runs, so the keyword side's reads overlap it.
        graph = "graph" in wanted and self._graph is not None

        def keyword_side() -> tuple[_Keywords, dict[str, float] | None, HermesMemoryError | None]:
            return self._keyword_side(q, texts, others, wanted, graph, as_of, valid_at, current, reads)

        side = _in_background(keyword_side) if graph or "tier2" in wanted else _done(keyword_side)
        views: dict[str, dict[str, float]] | None = None
        vector_error: HermesMemoryError | None = None
        if "tier3" in wanted and self._semantic is not None:
            try:
                views = self._vectors(q, texts, reads)
            except HermesMemoryError as exc:
                vector_error = exc
        keywords, graph_facts, graph_error = side.result()
        turn_scores, fact_scores, fact_parts = keywords.turn_scores, keywords.fact_scores, keywords.fact_parts
        turn_vectors: dict[int, float] = {}  # the vectors' share of ``turn_scores`` (the hit's tier)
        matched, rows, at_scale, stale = keywords.matched, keywords.rows, keywords.at_scale, keywords.stale
        if graph_error is not None:
            _unavailable(unavailable, "graph", graph_error)
        elif graph_facts is not None:
            matched = matched or bool(graph_facts)
            _add_part(fact_scores, fact_parts, _minmax(graph_facts), st.w_graph, "graph")
        if vector_error is not None:
            _unavailable(unavailable, "tier3", vector_error)
        if views is not None:
            known = {uuid for _, uuid, _, _ in rows}
            fresh = [u for u in {*views["episode"], *views["episode_window"]} if u not in known]
            if fresh:
                rows += reads.episode_rows([], fresh)
        if views is not None:
            ids = {uuid: row_id for row_id, uuid, _, _ in rows}
            floor = st.vector_floor
            for view, weight in (("episode", st.w_sentence), ("episode_window", st.w_window)):
                scaled = _floornorm({ids[u]: s for u, s in views[view].items() if u in ids}, floor)
                _add(turn_scores, scaled, weight)
                _add(turn_vectors, scaled, weight)
            _add_part(fact_scores, fact_parts, _floornorm(views["fact"], floor), st.w_fact, "tier3")
            if "text" in views:
                _add_part(others.chunks, others.chunk_parts, _floornorm(views["text"], floor),
                          st.w_chunk_vector, "tier3")  # fmt: skip
        # Turns and facts are scaled against their best candidate, so the best is worth 1 even when it
        # has nothing to do with the question. Without a shared word, their best cosine says how sure
        # that best is: below ``confident_cosine`` they count for that much less beside the other kinds.
        sure = 1.0
        if not matched and views is not None:
            nearest = max((s for view in ("episode", "episode_window", "fact") for s in views[view].values()),
                          default=0.5)  # fmt: skip
            sure = _clip((2.0 * nearest - 1.0) / st.confident_cosine)
        ranked: list[tuple[float, int, str, Any, str]] = []  # (score, order, kind, key, tier): hits to be
        replaced_turns: dict[str, Fact] = {}  # turn uuid -> the superseded fact extracted from it
        turns: dict[int, _Turn] = {}
        scored: dict[int, float] = {}  # the turns' scores after their priors
        if turn_scores:
            neighbours = {row_id: (prev_id, next_id) for row_id, _, prev_id, next_id in rows}
            if at_scale and len(neighbours) > st.scale_candidates:
                keep = set(heapq.nlargest(st.scale_candidates, neighbours,
                                          key=lambda r: turn_scores.get(r, 0.0)))  # fmt: skip
                neighbours = {row_id: pair for row_id, pair in neighbours.items() if row_id in keep}
            if st.thread_pull > 0:  # the strongest candidates' turns two away are read (and loaded)
                seeds = heapq.nlargest(st.thread_seeds, neighbours, key=lambda r: turn_scores.get(r, 0.0))
                neighbours.update(self._thread_rows(seeds, neighbours, reads))
            turns = self._load_turns(neighbours, reads)
            episodes = {row_id: turn.episode for row_id, turn in turns.items()}
            if current and "tier2" in wanted:
                replaced_turns = reads.superseded_sources([e.uuid for e in episodes.values()])
            dropped = present.off_the_present(replaced_turns, q.present, q.terms)
            stand_ins: dict[int, list[int]] = {}
            if dropped:
                dropped, stand_ins = self._stand_ins(dropped, replaced_turns, neighbours, turns, reads)
            scored = self._turn_priors(
                {k: v for k, v in turn_scores.items() if k in neighbours}, turns, neighbours, q, as_of,
                session_id, stale, dropped, stand_ins,
            )  # fmt: skip
            if not q.across_time:  # gathered over time: its evidence spans sessions
                scored = expand.session_cohesion(
                    scored, turns, st.cohesion_seeds, st.cohesion_keep, st.session_cohesion
                )
            top = max(scored.values(), default=0.0) or 1.0
            # ``_episode_score`` of each, inlined (a few hundred turns per recall): the same arithmetic.
            weight, half_life, scale = st.recency_weight, st.recency_half_life_days, 1.0 + st.recency_weight
            for row_id, score in scored.items():
                episode = episodes.get(row_id)
                if episode is not None and score > 0:
                    age_days = max(0.0, (now - episode.timestamp) / 86400.0)
                    recency = 1.0 + weight * 0.5 ** (age_days / half_life)
                    shown = max(0.0, min(1.0, score / top * recency / scale)) * sure
                    vector = turn_vectors.get(row_id, 0.0)
                    own = turn_scores.get(row_id, 0.0)
                    if own > 0:
                        tier = "tier3" if vector > own - vector else "tier2"
                    else:  # pulled in by a neighbour only
                        tier = "tier2" if "tier2" in wanted else "tier3"
                    ranked.append((shown, len(ranked), "episode", row_id, tier))
        facts_ranked: dict[str, float] = {}
        top_fact = max(fact_scores.values(), default=0.0)
        if top_fact > 0:
            facts_ranked = self._fact_scores(
                {k: v / top_fact * st.fact_scale * sure for k, v in fact_scores.items()},
                as_of,
                now,
                reads,
                valid_at,
            )
            ranked.extend((score, len(ranked) + i, "fact", uuid, _tier_of(fact_parts[uuid]))
                          for i, (uuid, score) in enumerate(facts_ranked.items()))  # fmt: skip
        built = self._other_hits(others, now, set(fact_scores), as_of)  # chunks, events, entity cards
        if "tier1" in wanted and self._curated is not None:
            built.extend(self._curated_hits(q))
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
        # Every later step looks at the best hit_pool * limit distinct hits only: only those are built.
        best = self._build_hits(ranked, st.hit_pool * limit, turns, built, reads)
        replaced: dict[str, Fact] = {}
        threats: dict[str, int | None] = {}
        if replaced_turns:
            best, replaced, threats = self._mark_superseded(best, replaced_turns, reads)
        # Category -> instance matching reorders the list after the diversity pass, so it is built deeper.
        category = q.category if views is not None and caps is None and turns else None
        deep = max(limit, st.instance_depth) if category is not None else limit
        if st.diversity <= 0 and caps is None:
            chosen = best[:deep]
        else:
            chosen = _diversify(
                best, st.diversity, deep, st.list_sessions if q.listing else 0.0, caps, depth=st.hit_pool
            )
        if category is not None:
            chosen = self._instance_prior(chosen, turns, category)[:limit]
        if replaced and q.present:
            chosen = _current_first(chosen, replaced, threats, limit)
        return signals.explain(
            chosen, fact_parts=fact_parts, chunk_parts=others.chunk_parts, turns=turns,
            turn_scores=turn_scores, turn_vectors=turn_vectors, turn_priors=scored,
        )  # fmt: skip

    @staticmethod
    def _thread_rows(
        seeds: list[int], neighbours: dict[int, tuple[int | None, int | None]], reads: ReadsSnapshot
    ) -> dict[int, tuple[int | None, int | None]]:
        """The neighbours (with theirs) of the ``seeds`` that are not candidates themselves: one read,
        bounded by the seeds, so the turns two away from the seeds load too (``expand.thread_pulls``)."""
        beside = {n for r in seeds for n in neighbours[r] if n is not None and n not in neighbours}
        if not beside:
            return {}
        rows = reads.episode_rows(list(beside), [])
        return {row_id: (prev_id, next_id) for row_id, _, prev_id, next_id in rows}

    def _stand_ins(
        self,
        dropped: set[str],
        stale: dict[str, Fact],
        neighbours: dict[int, tuple[int | None, int | None]],
        turns: dict[int, _Turn],
        reads: ReadsSnapshot,
    ) -> tuple[set[str], dict[int, list[int]]]:
        """The turns left out after all, and by row id the turns that stand in for each: those stating
        what replaced its statement (``present.replacing_turns``), loaded into ``neighbours`` and
        ``turns`` when they are not candidates. A turn that states a replacement itself stays in ("not
        Hamburg any more: Berlin")."""
        replacing = present.replacing_turns(dropped, stale, reads)
        rows = {turn.episode.uuid: row_id for row_id, turn in turns.items()}
        missing = list({u for uuids in replacing.values() for u in uuids if u not in rows})
        if missing:
            found = {row: (prev, after) for row, _, prev, after in reads.episode_rows([], missing)}
            neighbours.update(found)
            turns.update(self._load_turns(found, reads))
            rows.update({turns[row_id].episode.uuid: row_id for row_id in found if row_id in turns})
        stating = {u for uuids in replacing.values() for u in uuids}
        stand_ins = {
            rows[uuid]: [rows[u] for u in replacing[uuid] if u in rows]
            for uuid in replacing if uuid in rows and uuid not in stating
        }  # fmt: skip
        return dropped - stating, stand_ins

    def _load_turns(
        self, neighbours: dict[int, tuple[int | None, int | None]], reads: ReadsSnapshot
    ) -> dict[int, _Turn]:
        """The candidates and their neighbours, from the read cache or (those not in it) one query."""
        wanted = set(neighbours)
        wanted.update(n for pair in neighbours.values() for n in pair if n is not None)

        def load(missing: list[int]) -> dict[int, _Turn]:
            checked = self._tier2.episodes.by_ids_checked(missing)
            return {row_id: _Turn(episode, threat) for row_id, (episode, threat) in checked.items()}

        return reads.turns(list(wanted), load)

    def _build_hits(
        self,
        ranked: list[tuple[float, int, str, Any, str]],
        count: int,
        turns: dict[int, _Turn],
        built: list[Hit],
        reads: ReadsSnapshot,
    ) -> list[Hit]:
        """The first ``count`` hits of ``ranked`` with distinct texts (near-duplicates dropped), built
        from the turns, the facts (loaded in batches as they are reached) and the hits built already."""
        out: list[Hit] = []
        seen: set[str] = set()
        facts: dict[str, tuple[Fact, int | None]] = {}
        start = 0
        while start < len(ranked) and len(out) < count:
            batch = ranked[start : start + count + 10]
            start += len(batch)
            wanted = [key for _, _, kind, key, _ in batch if kind == "fact" and key not in facts]
            if wanted:
                facts.update(reads.facts_checked(wanted))
            for score, _, kind, key, tier in batch:
                if kind == "episode":
                    turn = turns[key]
                    text = turn.key
                    if text in seen:
                        continue
                    hit = _scored(turn.hit, score, tier)
                else:
                    if kind == "fact":
                        found = facts.get(key)
                        if found is None or found[0].extractor == RESTATEMENT:
                            continue  # gone, or a restatement found by its vector (a store of before)
                        hit = _fact_hit(found[0], score, found[1], tier)
                    else:
                        hit = built[key]
                    text = _dedupe_key(hit.text)
                    if text in seen:
                        continue
                seen.add(text)
                out.append(hit)
                if len(out) == count:
                    break
        return out

    # -- sources --------------------------------------------------------------------------------
    def _bm25_facts(self, q: _Query, as_of: float | None, valid_at: float | None = None) -> dict[str, float]:
        query = " ".join(q.terms)
        if not query:
            return {}
        # A fact that restates one of the user's clauses (kept so that a later statement can close it)
        # is no hit of its own: its turn is, with the same words.
        return self._tier2.facts.bm25_scores(
            query, limit=self.settings.fact_bm25_candidates, as_of=as_of, valid_at=valid_at,
            skip_extractor=RESTATEMENT,
        )  # fmt: skip

    def _graph_facts(self, q: _Query) -> dict[str, float]:
        assert self._graph is not None
        seeds = self._named(q)
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
        about = self._tier2.facts.about_entities(
            [uuid for uuid, _ in strongest], per_entity=st.graph_facts_per_entity
        )
        out: dict[str, float] = {}
        for entity_uuid, act in strongest:
            for fact_uuid in about.get(entity_uuid, ()):
                out[fact_uuid] = max(out.get(fact_uuid, 0.0), act)
        return out

    def _named(self, q: _Query) -> list[str]:
        """``_entities_in`` the question, looked up once per recall (the graph and the cards ask)."""
        if q.entities is None:
            q.entities = self._entities_in(q.text)
        return q.entities

    def _entities_in(self, text: str) -> list[str]:
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
        named = self._tier2.entities.find_uuids(phrases)
        found: list[str] = []
        for phrase in phrases:
            for uuid in named.get(phrase, ()):
                if uuid not in found:
                    found.append(uuid)
        return found[: self.settings.graph_seeds]

    def _vectors(self, q: _Query, texts: bool, reads: ReadsSnapshot) -> dict[str, dict[str, float]]:
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
            query = expand.embedded_query(q.stripped, q.inference, st)
            return self._semantic.source_scores(
                query, limits, lambda uuids: reads.believed_ranks(uuids).keys()
            )

    # -- priors and expansion -------------------------------------------------------------------
    def _turn_priors(
        self,
        scores: dict[int, float],
        turns: dict[int, _Turn],
        neighbours: dict[int, tuple[int | None, int | None]],
        q: _Query,
        as_of: float | None,
        session_id: str | None,
        stale: set[str],
        dropped: set[str],
        stand_ins: dict[int, list[int]],
    ) -> dict[int, float]:
        st = self.settings
        boosted = dict(scores)
        lent: dict[int, float] = {}  # what the turns left out leave their stand-ins
        # Whose turns answer it: the one person it names, or the subject of two (``recall.aggregate``).
        speaker, sole = aggregate.question_speaker(q.text, q.names)
        speaker_boost = st.speaker_boost if sole else st.subject_boost
        for row_id in list(boosted) if speaker or q.span is not None or stale or dropped else ():
            turn = turns.get(row_id)
            if turn is None:
                continue
            episode = turn.episode
            if speaker and (episode.speaker or "").casefold() == speaker:
                boosted[row_id] *= 1.0 + speaker_boost
            if q.span is not None and q.span[0] <= episode.timestamp < q.span[1] + 86400.0:
                boosted[row_id] *= 1.0 + st.date_boost
            if episode.uuid in dropped:
                # A turn left out (superseded, the question about the present) lends its neighbours
                # nothing: the acknowledgement after "I live in Hamburg" is not news about where one
                # lives. What replaced its statement answers in its place, with its score.
                score = boosted.pop(row_id)
                for other in stand_ins.get(row_id, ()):
                    lent[other] = max(lent.get(other, 0.0), score)
            elif episode.uuid in stale:
                boosted[row_id] *= 1.0 - st.superseded_penalty
        for row_id, score in lent.items():
            boosted[row_id] = max(boosted.get(row_id, 0.0), score)
        # Neighbour expansion: s'(i) = s(i) + w * max(s(i-1), s(i+1)), same session, pre-expansion scores.
        final = dict(boosted)
        pulled: dict[int, float] = {}
        for row_id, (prev_id, next_id) in neighbours.items():
            score = boosted.get(row_id, 0.0)
            if prev_id is not None and prev_id in turns:
                pulled[prev_id] = max(pulled.get(prev_id, 0.0), score)
            if next_id is not None and next_id in turns:
                pulled[next_id] = max(pulled.get(next_id, 0.0), score)
        for row_id, best in pulled.items():
            final[row_id] = final.get(row_id, 0.0) + st.neighbour * best
        # The same speaker two turns away, after the other's reply (``recall.expand``).
        _add(final, expand.thread_pulls(boosted, neighbours, turns, st.thread_pull), 1.0)
        beside = _Beside(neighbours, turns)
        people = set(self._participants()) if q.answer else set()
        # A list question about one person: the other participant's turns rank down once they have lent
        # their neighbours their pull (their replies fill the list, the person's instances are the answer).
        other_speaker = 1.0 - st.list_other_speaker_penalty if q.listing and speaker else 1.0
        for row_id in list(final):
            turn = turns.get(row_id)
            if (
                turn is None
                or (as_of is not None and turn.episode.timestamp > as_of)
                or (turn.episode.uuid in dropped)
            ):
                final.pop(row_id, None)
                continue
            episode = turn.episode
            if turn.chatter is not None and not _asked_between_people(turn, beside, row_id, turns):
                # A turn that only asks, greets, acknowledges or echoes is no knowledge: it has lent its
                # pull to its neighbours above and is no hit itself.
                final.pop(row_id, None)
                continue
            if episode.role == "assistant":
                final[row_id] *= 1.0 - st.assistant_turn_penalty
            if session_id is not None and episode.session_id == session_id:
                final[row_id] *= 1.0 + st.session_boost
            if turn.question:
                final[row_id] *= 1.0 - st.question_turn_penalty
            if other_speaker != 1.0 and (episode.speaker or "").casefold() != speaker:
                final[row_id] *= other_speaker
            if q.answer and cues.can_answer_with(turn.answers, q.answer, people):
                final[row_id] *= 1.0 + st.answer_type_boost
        return final

    def _instance_prior(self, ranked: list[Hit], turns: dict[int, _Turn], category: str) -> list[Hit]:
        """``ranked`` reordered by ``instances.instance_order``: turns among the ``instance_depth`` first
        hits whose phrases name an instance of the question's category rank up (behind the first
        ``instance_keep``); scores still descend. Unchanged for an embedder without context-free vectors."""
        assert self._semantic is not None
        embedder = self._semantic.embedder
        st = self.settings
        if not isinstance(embedder, StaticVectors) or len(ranked) <= st.instance_keep:
            return ranked
        qvec = instances.query_vector(category, embedder)
        if qvec is None:
            return ranked
        by_uuid = {turn.episode.uuid: turn for turn in turns.values()}
        found = [(i, turn) for i, hit in enumerate(ranked[: st.instance_depth])
                 if hit.kind == "episode" and hit.source_ids
                 and (turn := by_uuid.get(hit.source_ids[0])) is not None]  # fmt: skip
        window, words = st.instance_window, st.instance_words
        turn_phrases = [self._phrases.get(turn.episode.uuid, turn.episode.text, embedder, window, words)
                        for _, turn in found]  # fmt: skip
        best = instances.best_matches(turn_phrases, qvec, instances.stems(category))
        matches = {i: m for (i, _), m in zip(found, best, strict=True) if m is not None}
        scores = instances.instance_order(
            [h.score for h in ranked], matches, st.instance_keep, st.instance_prior
        )
        order = sorted(range(len(ranked)), key=lambda i: -scores[i])  # stable: ties keep their order
        out: list[Hit] = []
        for i in order:
            hit = ranked[i]
            score = min(scores[i], out[-1].score) if out else scores[i]
            out.append(hit if score == hit.score else _scored(hit, score, hit.tier))
        return out

    def _superseded_turns(self, q: _Query) -> set[str]:
        """Source turns of superseded facts on the question's topic (none for a question about the past
        or a period)."""
        if q.past or q.span is not None or not q.terms or self.settings.superseded_penalty <= 0:
            return set()
        limit = self.settings.superseded_candidates
        old = self._tier2.facts.superseded_matching(" ".join(q.terms), limit=limit)
        return {uuid for fact in old for uuid in fact.source_episodes}

    def _mark_superseded(
        self, ranked: list[Hit], stale: dict[str, Fact], reads: ReadsSnapshot
    ) -> tuple[list[Hit], dict[str, Fact], dict[str, int | None]]:
        """Mark turns whose statement the memory has since superseded (``metadata.superseded_*``: by
        what, since when). Returns the hits and, by uuid, the current facts that replaced them and
        their threat verdicts."""
        out: list[Hit] = []
        replaced: dict[str, Fact] = {}
        marks: list[tuple[int, Fact, Fact | None]] = []
        olds = [(i, stale.get(h.source_ids[0])) for i, h in enumerate(ranked)
                if h.kind == "episode" and h.source_ids]  # fmt: skip
        found = [(i, old) for i, old in olds if old is not None]
        currents = reads.current_of_many([old for _, old in found]) if found else {}
        for index, old in found:
            current = currents[old.uuid]
            marks.append((index, old, current))
            if current is not None:
                replaced[current.uuid] = current
        out.extend(ranked)
        threats = (
            {u: threat for u, (_, threat) in reads.facts_checked(list(replaced)).items()} if replaced else {}
        )
        for index, old, current in marks:
            hit = out[index]
            # When it stopped being true (the replacing statement's time) and when the memory learned it.
            meta = {**hit.metadata, "superseded_at": old.superseded_at, "valid_to": old.valid_to}
            if current is not None:
                shown = current.content
                if threats.get(current.uuid) != CLEAN:
                    shown = neutralise(shown)
                    if shown != current.content:
                        meta["neutralised"] = True
                meta["superseded_by"] = shown
                meta["superseded_by_id"] = f"fact:{current.uuid}"
            out[index] = replace(hit, metadata=meta)
        return out, replaced, threats

    def _fact_scores(
        self,
        scores: dict[str, float],
        as_of: float | None,
        now: float,
        reads: ReadsSnapshot,
        valid_at: float | None = None,
    ) -> dict[str, float]:
        """Each candidate fact's hit score (prior and recency applied), for those believed now (or at
        ``as_of``; with ``valid_at`` those true then as known at ``as_of``); read from a few columns,
        the facts themselves load only when they make the list."""
        st = self.settings
        if valid_at is not None:
            true = self._tier2.facts.true_at_uuids(list(scores), valid_at, as_of)
            rows = self._tier2.facts.ranking_rows([u for u in scores if u in true], now)
            as_of = None  # believed-then is what ``true_at`` checked
        elif as_of is None:
            rows = reads.believed_ranks(list(scores))
        else:
            rows = self._tier2.facts.ranking_rows(list(scores), as_of)
        out: dict[str, float] = {}
        for uuid, score in scores.items():
            row = rows.get(uuid)
            if row is None:
                continue
            importance, when, recorded_at, superseded_at, _ = row
            if as_of is not None and not _believed_then(recorded_at, superseded_at, as_of):
                continue
            prior = (1.0 - st.importance_weight) + st.importance_weight * importance
            out[uuid] = _clip(score * prior * _recency(when, now, st))
        return out

    def _keyword_side(
        self,
        q: _Query,
        texts: bool,
        others: _Others,
        wanted: set[str],
        graph: bool,
        as_of: float | None,
        valid_at: float | None,
        current: bool,
        reads: ReadsSnapshot,
    ) -> tuple[_Keywords, dict[str, float] | None, HermesMemoryError | None]:
        """On a recall thread: the turns' and facts' BM25 candidates (with the period the question
        names), their rows and turns, the superseded turns; then ``_entity_side``."""
        st = self.settings
        found = _Keywords()
        turn_scores, fact_scores, fact_parts = found.turn_scores, found.fact_scores, found.fact_parts
        with self._tier2.db.reading():
            if "tier2" in wanted:
                # BM25 is 0 for a turn that matches nothing, so it is scaled by its maximum (min 0).
                bm25 = self._tier2.episodes.bm25_ranks(" ".join(q.terms), limit=st.candidates)
                _add(turn_scores, _maxnorm(bm25), st.w_bm25)
                found.matched = bool(bm25)
                if q.span is not None:  # the timeline: turns from the period a question names are candidates
                    speaker = q.names[0] if len(q.names) == 1 else None
                    in_period = self._tier2.episodes.in_range(
                        q.span[0], q.span[1] + 86400.0, speaker=speaker, limit=st.candidates
                    )
                    _add(turn_scores, {row_id: 1.0 for row_id in in_period}, st.w_timeline)
                fact_bm25 = self._bm25_facts(q, as_of, valid_at)
                found.matched = found.matched or bool(fact_bm25)
                _add_part(fact_scores, fact_parts, _minmax(fact_bm25), st.w_fact, "tier2")
            # While the vectors are searched: the keyword candidates' rows and turns, the superseded turns.
            found.rows = reads.episode_rows(list(turn_scores), []) if turn_scores else []
            found.at_scale = self._tier2.episodes.last_row_id() > st.scale_turns
            if found.rows and not found.at_scale:
                self._load_turns({row_id: (prev_id, next_id) for row_id, _, prev_id, next_id in found.rows},
                                 reads)  # fmt: skip
            # Only a question about the present ranks replaced statements down and puts what replaced them
            # first; elsewhere ("when did I move?") they keep their place, marked.
            if current and q.present and "tier2" in wanted:
                found.stale = self._superseded_turns(q)
            if not graph and "tier2" not in wanted:
                return found, None, None
            return (found, *self._entity_side(q, texts, others, as_of, "tier2" in wanted, graph))

    def _entity_side(
        self, q: _Query, texts: bool, others: _Others, as_of: float | None, tier2: bool, graph: bool
    ) -> tuple[dict[str, float] | None, HermesMemoryError | None]:
        """On a recall thread: the other stores' candidates into ``others`` (with ``tier2``) and the
        graph's facts (with ``graph``: the facts, or the error that kept the graph from answering)."""
        with self._tier2.db.reading():
            if tier2:
                self._lexical_others(q, texts, others, as_of)
            if not graph:
                return None, None
            try:
                return self._graph_facts(q), None
            except HermesMemoryError as exc:
                return None, exc

    def _lexical_others(self, q: _Query, texts: bool, others: _Others, as_of: float | None) -> None:
        """The Tier 2 candidates of the other stores: chunks indexed on their own by BM25, events by
        BM25 and by the period the question names, entities the question names or whose name, aliases
        or description match; the events' and entities' rows are read here too (while the vectors are
        searched), those of events recorded by ``as_of``."""
        st = self.settings
        terms = " ".join(q.terms)
        if texts and terms:
            found = self._tier2.chunks.bm25_of_kind(terms, "text", limit=st.chunk_candidates)
            _add_part(others.chunks, others.chunk_parts, _maxnorm(found), st.w_chunk_bm25, "tier2")
        if terms:
            _add(others.events, _maxnorm(self._tier2.timeline.bm25_scores(terms, limit=st.event_candidates)),
                 st.w_event_bm25)  # fmt: skip
        if q.span is not None:
            period = self._tier2.timeline.in_period(q.span[0], q.span[1] + 86400.0, limit=st.event_candidates)
            _add(others.events, dict.fromkeys(period, 1.0), st.w_event_period)
        named = self._named(q)[: st.entity_candidates]
        if terms:
            matched = _maxnorm(self._tier2.entities.bm25_scores(terms, limit=st.entity_candidates))
            _add(others.entities, matched, st.w_entity_bm25)
        for uuid in named:
            others.entities[uuid] = 1.0
        others.named.update(named)
        if others.events:
            others.event_rows = self._tier2.timeline.for_recall(list(others.events), recorded_by=as_of)
        if others.entities:
            others.cards = self._tier2.entities.cards(
                list(others.entities), relations=st.entity_relations, recorded_by=as_of
            )

    def _other_hits(self, others: _Others, now: float, facts: set[str], as_of: float | None) -> list[Hit]:
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
                shown = _clip(st.chunk_scale * score / best * _recency(chunk.timestamp, now, st) /
                              (1.0 + st.recency_weight))  # fmt: skip
                out.append(_neutralised(Hit(
                    id=f"chunk:{uuid}", score=shown, text=chunk.text, tier=_tier_of(others.chunk_parts[uuid]),
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
                out.append(_neutralised(Hit(
                    id=f"event:{uuid}", score=_clip(st.event_scale * kept * score), text=text, tier="tier2",
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
                text = _card(entity.name, entity.entity_type, entity.aliases, entity.description, links)
                card: dict[str, Any] = {"entity_type": entity.entity_type, "aliases": list(entity.aliases)}
                out.append(_neutralised(Hit(
                    id=f"entity:{uuid}", score=_clip(st.entity_scale * others.entities[uuid]), text=text,
                    tier="tier2", kind="entity", timestamp=entity.last_seen, metadata=card,
                )))  # fmt: skip
        return out

    def _curated_hits(self, q: _Query) -> list[Hit]:
        assert self._curated is not None
        terms = set(q.terms)
        out: list[Hit] = []
        if not terms:
            return out
        for store in ("memory", "user"):
            for i, entry in enumerate(self._curated.entries(store)):
                words = set(fts_terms(entry))
                overlap = len(terms & words) / len(terms)
                if overlap > 0:
                    # Curated files can be edited outside memory: their text is neutralised as read.
                    shown = neutralise(entry)
                    meta: dict[str, Any] = {"store": store}
                    if shown != entry:
                        meta["neutralised"] = True
                    out.append(
                        Hit(
                            id=f"curated:{store}:{i}",
                            score=_clip(self.settings.w_curated * overlap),
                            text=shown,
                            tier="tier1",
                            kind="curated",
                            metadata=meta,
                        )
                    )
        return out


class _Beside:
    """The loaded turns next to a turn in its session, by row id: both neighbours of a candidate, and
    the candidates a neighbour-only turn is next to (that map built once, on first need)."""

    def __init__(self, neighbours: dict[int, tuple[int | None, int | None]], turns: dict[int, _Turn]):
        self._neighbours = neighbours
        self._turns = turns
        self._candidates: dict[int, list[int]] | None = None

    def __call__(self, row_id: int) -> set[int]:
        turns = self._turns
        out = {other for other in self._neighbours.get(row_id, ()) if other is not None and other in turns}
        if self._candidates is None:
            self._candidates = {}
            for candidate, pair in self._neighbours.items():
                for other in pair:
                    if other is not None and other in turns:
                        self._candidates.setdefault(other, []).append(candidate)
        out.update(self._candidates.get(row_id, ()))
        return out


def _asked_between_people(turn: _Turn, beside: Callable[[int], Iterable[int]], row_id: int,
                          turns: dict[int, _Turn]) -> bool:  # fmt: skip
    """Whether a chatter turn is a person's question to another person beside it in the session.

    In a conversation between people the question is part of what they told each other (it carries the
    topic its answer leans on: LoCoMo evidence is sometimes the question, and dropping those turns cost
    0.0067 recall@10 on one conversation), so it stays a candidate (ranked down as any question). In a
    chat with the AI the user's neighbours are the AI's turns: the question is a request, never recalled.
    ``beside(row_id)``: the loaded turns next to it.
    """
    episode = turn.episode
    if episode.role == "assistant" or turn.chatter != "question":
        return False
    for other_id in beside(row_id):
        other = turns.get(other_id)
        if (
            other is not None
            and other.episode.role != "assistant"
            and (other.episode.speaker != episode.speaker)
        ):
            return True
    return False


def _episode_hit(episode: Episode, score: float, threat: int | None) -> Hit:
    """A turn as a hit; a turn not scanned clean when written has its strings neutralised."""
    meta = {"speaker": episode.speaker, "session_id": episode.session_id, "role": episode.role,
            **{k: v for k, v in episode.metadata.items() if k in ("dia_id", "chatter") and v}}  # fmt: skip
    hit = Hit(
        id=f"episode:{episode.uuid}", score=score, text=episode.text, tier="tier2", kind="episode",
        timestamp=episode.timestamp, source_ids=(episode.uuid,), metadata=meta,
    )  # fmt: skip
    return hit if threat == CLEAN else _neutralised(hit)


def _unavailable(into: dict[str, str] | None, tier: str, exc: HermesMemoryError) -> None:
    """Record why a tier could not answer; without a place to record it, the error propagates."""
    if into is None:
        raise exc
    log.warning("recall without %s: %s", tier, exc)
    into[tier] = availability.reason_for(exc)


def _fact_hit(fact: Fact, score: float, threat: int | None, tier: str = "tier2") -> Hit:
    """A fact as a hit; a fact not scanned clean when written has its strings neutralised (its source
    turn ids are ids: scanned when written, never per hit)."""
    when = fact.valid_from if fact.valid_from is not None else fact.created_at
    hit = Hit(
        id=f"fact:{fact.uuid}", score=score, text=fact.content, tier=tier, kind="fact", timestamp=when,
        source_ids=fact.source_episodes,
        metadata={"category": fact.category, "confidence": fact.confidence, "source_type": fact.source_type,
                  "session_id": fact.source_id if fact.source_type == "session" else None},
    )  # fmt: skip
    return hit if threat == CLEAN else _neutralised(hit)


def _card(name: str, kind: str, aliases: Sequence[str], description: str | None,
          links: Sequence[tuple[str, str]]) -> str:  # fmt: skip
    """An entity card: ``Name (type; also: a, b): description; Name relation Other; Other relation Name``,
    each relation worded as a fact is ("the user has Biscuit", "Alice is working on Orion")."""
    head = f"{name} ({kind}" + (f"; also: {', '.join(aliases)}" if aliases else "") + ")"
    parts = [description] if description else []
    for relation, other in links:
        if relation.startswith("<-"):
            parts.append(render(other, relation.removeprefix("<-"), name, False, kind))
        else:
            parts.append(render(name, relation, other, False, ""))
    return head + (": " + "; ".join(parts) if parts else "")


def _neutralised(hit: Hit) -> Hit:
    """``hit`` with every string in it neutralised; ``metadata.neutralised`` when that changed any."""
    text = neutralise(hit.text)
    meta: dict[str, Any] = neutralise_data(hit.metadata)
    sources = tuple(neutralise(s) for s in hit.source_ids)
    if text != hit.text or meta != hit.metadata or sources != hit.source_ids:
        meta["neutralised"] = True
    return replace(hit, text=text, metadata=meta, source_ids=sources)


def _current_first(
    hits: list[Hit], replaced: dict[str, Fact], threats: dict[str, int | None], limit: int
) -> list[Hit]:
    """Every superseded line after the current fact that replaced it: moved behind it when both are
    hits, else the current fact is put in front of it (and the list cut back to ``limit``)."""
    out: list[Hit] = []
    for hit in hits:
        by = hit.metadata.get("superseded_by_id")
        if by is None or by in {h.id for h in out}:
            out.append(hit)
            continue
        later = next((h for h in hits if h.id == by), None)
        if later is None:
            fact = replaced.get(by.removeprefix("fact:"))
            if fact is None:
                out.append(hit)
                continue
            later = _fact_hit(fact, hit.score, threats.get(fact.uuid))
        else:
            later = replace(later, score=hit.score)
        out.extend((later, hit))
    ordered: dict[str, Hit] = {}
    for hit in out:  # a fact moved forward is not shown again at its old place
        ordered.setdefault(hit.id, hit)
    return list(ordered.values())[:limit]


def _believed_then(recorded_at: float | None, superseded_at: float | None, as_of: float) -> bool:
    if recorded_at is not None and recorded_at > as_of:
        return False
    return superseded_at is None or superseded_at > as_of


def _recency(when: float, now: float, st: RecallSettings) -> float:
    age_days = max(0.0, (now - when) / 86400.0)
    decay: float = 0.5 ** (age_days / st.recency_half_life_days)
    return 1.0 + st.recency_weight * decay


def _minmax(scores: dict[Any, float]) -> dict[Any, float]:
    if not scores:
        return {}
    lo, hi = min(scores.values()), max(scores.values())
    if hi <= lo:
        return {k: 1.0 for k in scores}
    return {k: (v - lo) / (hi - lo) for k, v in scores.items()}


def _floornorm(scores: dict[Any, float], floor: float) -> dict[Any, float]:
    """(s - floor) / (best - floor), clipped at 0; empty when nothing scores above the floor."""
    top = max(scores.values(), default=floor)
    if top <= floor:
        return {}
    return {k: max(0.0, (v - floor) / (top - floor)) for k, v in scores.items()}


def _maxnorm(scores: dict[Any, float]) -> dict[Any, float]:
    top = max(scores.values(), default=0.0)
    return {k: v / top for k, v in scores.items()} if top > 0 else {}


def _add(into: dict[Any, float], scores: dict[Any, float], weight: float) -> None:
    for key, value in scores.items():
        into[key] = into.get(key, 0.0) + weight * value


def _add_part(
    into: dict[Any, float],
    parts: dict[Any, dict[str, float]],
    scores: dict[Any, float],
    weight: float,
    tier: str,
) -> None:
    """``_add``, and each key's share by the tier that found it in ``parts``."""
    for key, value in scores.items():
        into[key] = into.get(key, 0.0) + weight * value
        share = parts.setdefault(key, {})
        share[tier] = share.get(tier, 0.0) + weight * value


def _tier_of(parts: dict[str, float]) -> str:
    """The tier with the largest share (ties: the tier that added first)."""
    return max(parts, key=parts.__getitem__)


def _clip(x: float) -> float:
    return max(0.0, min(1.0, x))


@lru_cache(maxsize=4096)
def _dedupe_key(text: str) -> str:
    return normalise(text)


def _diversify(
    ranked: list[Hit],
    weight: float,
    limit: int,
    same_session: float = 0.0,
    caps: dict[str, int] | None = None,
    *,
    depth: int = 3,
) -> list[Hit]:
    """Greedy maximal-marginal-relevance order of the best ``depth * limit`` hits; a hit moved down keeps a
    score no higher than the one ranked above it, so scores still descend. ``same_session`` adds to the
    overlap of two hits from one conversation session; ``caps``: at most so many hits of each tier.

    Lazy greedy, plain Python: a hit's value (its score less ``weight`` times its largest word overlap
    with a chosen hit) only falls as hits are chosen, so the value it was last given is an upper bound.
    The best in the heap is brought up to date against the hits chosen since; it is taken when it is still
    the best (the first in rank order among equals, as a scan would take it), else it goes back. Only the
    overlaps of hits that reach the top are computed, and a recall that needs no vector never loads numpy."""
    pool = ranked[: depth * limit]
    n = len(pool)
    if not n or limit < 1:
        return []
    words = [present.content_words(h.text) for h in pool]
    sessions = [h.metadata.get("session_id") for h in pool]
    overlap = [0.0] * n
    heap = [(-hit.score, i, 0) for i, hit in enumerate(pool)]  # (-value, rank, chosen hits counted)
    heapq.heapify(heap)
    chosen: list[int] = []
    room = dict(caps) if caps is not None else None
    while heap and len(chosen) < limit:
        _, i, counted = heapq.heappop(heap)
        if room is not None and room.get(pool[i].tier, 0) <= 0:
            continue  # its tier is full, and stays so
        if counted < len(chosen):
            mine, session = words[i], sessions[i]
            for c in chosen[counted:]:
                common = len(words[c] & mine)
                value = common / (len(mine) + len(words[c]) - common or 1)
                if sessions[c] is not None and session == sessions[c]:
                    value += same_session
                if value > overlap[i]:
                    overlap[i] = value
            fresh = (-(pool[i].score - weight * overlap[i]), i, len(chosen))
            if heap and fresh[:2] > heap[0][:2]:
                heapq.heappush(heap, fresh)
                continue
        chosen.append(i)
        if room is not None:
            room[pool[i].tier] -= 1
    out: list[Hit] = []
    for i in chosen:
        hit = pool[i]
        if out and hit.score > out[-1].score:
            hit = Hit(hit.id, out[-1].score, hit.text, hit.tier, hit.kind, hit.timestamp, hit.source_ids,
                      hit.metadata)  # fmt: skip
        out.append(hit)
    return out


__all__ = ["TIERS", "RecallEngine", "RecallSettings"]
