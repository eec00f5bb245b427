"""Recall's search settings as data: the weights and candidate counts of ``RecallEngine``, and named
presets of them. The config section ``recall`` picks a preset and overrides single keys
(``Config.recall.settings()``); ``bench/locomo_research.py`` tunes the same fields on the same engine.

Light on purpose (no numpy, no store): ``config`` imports it to validate the section.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from hermes_memory.errors import ConfigError


@dataclass(frozen=True)
class RecallSettings:
    w_bm25: float = 0.35
    w_sentence: float = 0.5
    w_window: float = 0.5
    w_fact: float = 0.6
    w_graph: float = 0.3
    w_curated: float = 0.5
    w_timeline: float = 0.1
    speaker_boost: float = 1.5
    # A question naming two participants, one as its subject ("What did Jon say about Gina's store?"):
    # the subject's turns rank up by this share (``recall.aggregate.subject_of``; LoCoMo recall@10 +0.0004
    # alone, +0.0004 beside ``list_other_speaker_penalty``).
    subject_boost: float = 0.5
    # A list question about one person (``speaker_boost``'s or ``subject_boost``'s): the other
    # participant's turns lose this share after the neighbour pull (LoCoMo recall@10: multi-hop +0.005,
    # single-hop +0.0024, overall +0.0023).
    list_other_speaker_penalty: float = 0.3
    date_boost: float = 0.6
    # A turn whose statement on the question's topic the memory has since superseded ("I live in Hamburg",
    # then "I moved to Lisbon") loses this share of its score, unless the question asks about the past.
    superseded_penalty: float = 0.5
    # A candidate lends the turn before and after it this share of its score. 0.4 -> 0.3 with the thread
    # pull below: LoCoMo dev recall@10 +0.0004 beside the thread pull alone (multi-hop +0.013).
    neighbour: float = 0.3
    # The same speaker's turn two away from a candidate (their next or previous turn, after the other's
    # reply: ``recall.expand.thread_pulls``) gets this share of its score. The turns two away are read for
    # the ``thread_seeds`` strongest candidates (by their scores before the priors; one bounded read);
    # the others reach them when the turn between is a candidate itself. LoCoMo dev: recall@10 +0.003,
    # hit@5 +0.008 (0.1: +0.004/+0.007; 0.4: +0.001/-0.005).
    thread_pull: float = 0.2
    thread_seeds: int = 10
    # Session cohesion (``recall.expand.session_cohesion``): the other turns of the sessions the
    # ``cohesion_seeds`` best turns come from rank up by this share, held below the ``cohesion_keep``-th
    # best turn (the first hits keep their places); not for a question gathering what happened over time
    # (``query.asks_across_time``: "how many", "both", "Where has X camped?"), whose evidence spans
    # sessions. LoCoMo dev recall@10 +0.014 (single-hop +0.025, open-domain +0.019, multi-hop -0.006),
    # hit@5 +0.008; 0.1 and 0.3: +0.012/+0.011; for every question alike: +0.011 (multi-hop -0.014).
    session_cohesion: float = 0.2
    cohesion_seeds: int = 3
    cohesion_keep: int = 5
    # A question asking for a guess (``recall.expand.is_inference``: "Would X likely enjoy Vivaldi?") is
    # embedded without its frame of modal and likelihood words (``expand.plain_statement``) when this is
    # 2, as asked when 1: the statements that answer it never say "would" or "likely". LoCoMo dev
    # open-domain recall@10 +0.011, hit@5 +0.023.
    inference_statement: int = 2
    # Category -> instance matching (``recall.instances``): for a question naming a category ("What martial
    # arts has John done?"), the ``instance_depth`` first hits' turns are matched by their phrases (clauses,
    # ``instance_window``-word windows) against the category with the embedder's context-free vectors;
    # the better half rank up by up to this share, held below the ``instance_keep``-th hit. Applied to the
    # list after the diversity pass (a recall then builds ``instance_depth`` hits at least). 0 turns it
    # off. At 0.1, LoCoMo dev recall@10 0.8384 -> 0.8437 (multi-hop +0.004, temporal +0.006, single-hop
    # +0.006), hit@5 unchanged, leave-one-out over 0/0.1/0.2/0.3 0.8420; 0.2: 0.8417; depth 30: 0.8431;
    # list questions only: 0.8405; before the diversity pass: +0.0002. Cost: each turn's phrase vectors
    # are worked out once (about 0.07 ms) and cached (``engine._PHRASE_BYTES``); the quick perf run's
    # LoCoMo recall p50 +0.1 to +1.0 ms (12.2-13.9 ms), at 100k turns within about 1 ms. Needs an
    # embedder with ``tier3.embedder.StaticVectors`` (``local``); without one it does nothing.
    instance_prior: float = 0.1
    instance_depth: int = 50
    # The keyword side's this many best turns have their phrases worked out on its thread while the
    # question is embedded (``TurnRanker.prepare_phrases``): the prior then finds most of them cached.
    instance_early: int = 4
    instance_keep: int = 5
    instance_window: int = 3
    # Only a turn's first this many words are matched (a bound on a long text's cost and memory; LoCoMo's
    # longest turn with its image caption has 81).
    instance_words: int = 96
    candidates: int = 200
    # Each view gets its own vector top-k (sentences: several per turn; windows: one per turn; facts).
    vector_candidates: int = 300
    window_candidates: int = 200
    fact_candidates: int = 100
    # Vector scores are (1 + cos) / 2; a cosine of 0 (unrelated) maps to 0 and the best hit to 1. A fixed
    # floor keeps the scale independent of how many candidates were fetched (min-max over the top-k
    # stretched the k-th hit to 0 and over-weighted vectors against BM25: -0.018 recall@10 on LoCoMo).
    vector_floor: float = 0.5
    recency_half_life_days: float = 365.0
    recency_weight: float = 0.05
    importance_weight: float = 0.15
    # A fact's best score relative to the best turn's (turns are the ground truth; facts are derived). With
    # the fact view of the vector search facts had grown too strong: 0.9 -> 0.8 gave LoCoMo recall@10 +0.006
    # (0.6-0.8 is a plateau; 1.0 loses 0.008).
    fact_scale: float = 0.8
    # Redundancy penalty (maximal marginal relevance): a hit loses this much times its word overlap
    # (Jaccard of content words) with the most similar hit ranked above it, so ten near-copies of one
    # statement do not push out the other things the memory knows about the question.
    diversity: float = 0.4
    # A question that asks for several things ("Which cities has John been to?", "What games does Nate
    # play?") is usually answered across many sessions: its hits from one session count as this much
    # more alike (LoCoMo multi-hop recall@10 +0.018, the others unchanged).
    list_sessions: float = 0.25
    # A turn that mostly asks ("Seen any good movies lately?") rarely holds the answer; its neighbours still
    # get its pull. LoCoMo recall@10: open-domain +0.019, multi-hop +0.006, single-hop -0.006.
    question_turn_penalty: float = 0.2
    # The AI agent's own words are no evidence about the user; they rank below what a person said.
    # (No effect on LoCoMo, where both speakers are people.)
    assistant_turn_penalty: float = 0.3
    # A question whose answer is a name or title ("Which cities…", "What movies…") ranks up turns that
    # name something (not a participant): multi-hop +0.018.
    answer_type_boost: float = 0.6
    # At scale (a store of more turns than ``scale_turns``, where most candidates are not cached and each
    # costs a load): only this many turn candidates, the best by their scores before the priors (BM25,
    # vectors, timeline: read from the index, no text), are loaded with their neighbours and ranked (the
    # others could only reach the list through the priors and the neighbour pull: x2.5 for the speaker
    # named, x1.6 for the period, x1.6 for the answer type; not measured how often that happens at 100k).
    # A smaller store loads every candidate (cached after the first few recalls), as before.
    scale_candidates: int = 150
    # A store is "at scale" above this many turns (``scale_candidates`` applies). The engine caches as
    # many turns (``recall._reads._MAX_TURNS``, a memory bound): above that most candidates are not cached.
    scale_turns: int = 20_000
    # Facts matched by BM25 (the fact view of the vector search has ``fact_candidates``).
    fact_bm25_candidates: int = 50
    # Graph tier: the entities the query names (at most ``graph_seeds``) spread activation over at most
    # ``graph_hops`` relations (each entity hands on its activation times ``graph_decay``, split over its
    # relations; below ``graph_threshold`` it stops);
    # the facts of the ``graph_entities`` most activated entities are candidates, the newest
    # ``graph_facts_per_entity`` of each (a bound in SQL: an entity with thousands of facts costs the same).
    graph_seeds: int = 10
    graph_hops: int = 2
    graph_decay: float = 0.5
    graph_threshold: float = 0.01
    graph_entities: int = 20
    graph_facts_per_entity: int = 20
    # Superseded facts matching the question whose source turns ``superseded_penalty`` ranks down.
    superseded_candidates: int = 20
    # A turn from the session the recall is made in ranks up by this share.
    session_boost: float = 0.05
    # Near-duplicate removal and the diversity pass look at the best ``hit_pool * limit`` distinct hits.
    hit_pool: int = 3

    # The other stores (issue 16): texts indexed with ``semantic_index`` (chunks without an episode),
    # timeline events and entity cards are candidates too, each kind scaled against its best possible
    # score (``*_scale`` is what a perfect match of the kind is worth beside the best turn, 1.0).
    # Chunks: BM25 over the chunk text and one vector search of their own, weighted as turns are.
    w_chunk_bm25: float = 0.35
    w_chunk_vector: float = 0.5
    chunk_scale: float = 0.9
    chunk_candidates: int = 50
    # Events: BM25 over title and description, and the events of the period a question names (a full
    # BM25 match is worth ``event_scale``; the period adds to it).
    w_event_bm25: float = 1.0
    w_event_period: float = 0.5
    event_scale: float = 0.8
    event_candidates: int = 30
    # The Hermes provider records every session as a timeline event (type ``session``) whose text restates
    # the session's first turns: a recall candidate only with a weight above 0 (its score times this).
    session_event_scale: float = 0.0
    # Entity cards (name, type, aliases, strongest relations): an entity the question names (whole
    # words, not a participant of the conversation) scores 1, one found by BM25 over name, aliases
    # and description ``w_entity_bm25`` times its scaled rank.
    w_entity_bm25: float = 0.5
    entity_scale: float = 0.6
    entity_candidates: int = 10
    entity_relations: int = 5
    # Turns and facts are scaled against their best candidate. When none shares a word with the question
    # (no BM25 match, no graph fact), their best cosine below this counts for that much less (cosine 0.2:
    # half): chatter that is merely the nearest must not outrank an indexed text, event or entity the
    # question names. (LoCoMo: every question shares a word with some turn; unchanged.)
    confident_cosine: float = 0.4

    def __post_init__(self) -> None:
        if self.inference_statement not in (1, 2):
            raise ConfigError(
                "config key 'recall.overrides.inference_statement' must be 1 (as asked) or 2 (without the "
                f"frame of a guess), got {self.inference_statement!r}"
            )
        if not 0.0 < self.graph_decay <= 1.0:
            raise ConfigError(
                f"config key 'recall.overrides.graph_decay' must be in (0, 1], got {self.graph_decay!r}"
            )


# Named presets. ``default``: the measured configuration (LoCoMo dev recall@10: docs/benchmarks.md).
PRESETS: MappingProxyType[str, RecallSettings] = MappingProxyType({"default": RecallSettings()})
DEFAULT_PRESET = "default"


def setting_fields() -> dict[str, type[Any]]:
    """Every tunable key and its type (int or float), in declaration order."""
    kinds = {"int": int, "float": float}
    return {f.name: kinds[str(f.type)] for f in dataclasses.fields(RecallSettings)}


def settings_for(preset: str, overrides: Mapping[str, float | int] | None = None) -> RecallSettings:
    """The settings of ``preset`` with ``overrides`` applied.

    Raises ConfigError for an unknown preset or key (``config`` validates both before this is called).
    """
    if preset not in PRESETS:
        raise ConfigError(f"unknown recall preset {preset!r}; choose one of {sorted(PRESETS)}")
    unknown = sorted(set(overrides or {}) - set(setting_fields()))
    if unknown:
        raise ConfigError(f"unknown recall setting(s) {unknown}; known: {sorted(setting_fields())}")
    changes: dict[str, Any] = dict(overrides or {})
    return dataclasses.replace(PRESETS[preset], **changes)


__all__ = ["DEFAULT_PRESET", "PRESETS", "RecallSettings", "setting_fields", "settings_for"]
