"""Research (issue 16, item 2): two re-ranking directions measured on LoCoMo dev through the engine itself.

``prf``  textual pseudo-relevance feedback (RM3-style) for the turns' BM25: expansion terms are taken from
         the first hits' texts (tf x idf, weighted by the hit's score; no function word, question word,
         participant name or query term), a second BM25 runs with them and its scaled scores are mixed
         into the turns' BM25 (``(1 - lam) * bm25 + lam * bm25_expanded``) before the engine fuses it
         with the vectors and priors. ``--source bm25``: the first BM25's top turns; ``--source hits``:
         the top turns of a first full recall (two recalls per question). ``--gate list``: only for
         list / across-time questions (``recall.query``).
``ltr``  the ceiling of re-ranking with the features the engine already computes: for every question the
         top-100 candidate turns (the engine's own order first, then its fused scores) with each score
         component the engine has (BM25, sentence and window cosines, timeline, the priors' output, the
         neighbour and thread pulls, session cohesion, speaker/date/question/answer cues, ranks), the
         evidence labels; a linear scorer (pairwise logistic, numpy only) trained leave-one-conversation-
         out (four conversations, the fifth scored) against the engine's recall@10 / hit@5.

No change to the engine: the components are read by wrapping its methods in this process only
(``Trace``). Stores as ``bench/locomo_research.py`` (filled once under ``--root`` and reused).

    python bench/locomo_rerank.py prf --root /tmp/ltr16_stores --docs 5 --terms 10 --lam 0.3
    python bench/locomo_rerank.py dump --root /tmp/ltr16_stores --out /tmp/ltr16_dump.pkl
    python bench/locomo_rerank.py ltr --dump /tmp/ltr16_dump.pkl --features base --l2 0.01

Measured (LoCoMo dev, five conversations, real MiniLM, no LLM; the engine 0.8384 recall@10, hit@5 0.8250):
  * prf, 15 variants (--docs 3/5/10, --terms 5/10/20, --lam 0.15-0.5, --source bm25/hits, --gate all/list,
    --with-query): 0.8326-0.8403, hit@5 0.8092-0.8276 (best: docs 10, terms 20, lam 0.15: 0.8403, hit@5
    0.8145); the variant chosen on four conversations and scored on the fifth: 0.8360. Dropped.
  * ltr: the top-100 candidates hold 0.9630 recall@10 (multi-hop 0.9127), but a linear pairwise re-ranker
    over the engine's components gains +0.0053 leave-one-conversation-out (29 features, l2 0.01: 0.8437,
    hit@5 0.8263; multi-hop 0.6063, conv-26 down); fitted and scored on all five (in-sample) at most
    0.8583 (with a direct recall@10 ascent, whose leave-one-out is 0.8427). The shape crosses, hard-
    negative weights or only list questions: 0.8254-0.8429; 13 features picked after seeing the folds:
    0.8455 (every fold up, multi-hop 0.5913, open-domain 0.6174). Among multi-hop evidence ranked 11-100
    the best single feature is the engine's own score (AUC 0.76 against 12,639 other candidates): the
    engine's features are used up for ranking. Dropped.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pickle
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from locomo_research import DEFAULT_DATA, filled

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.bench.locomo import CATEGORIES, Stats, dia_by_episode, dia_ids_of, normalise_evidence
from hermes_memory.recall import engine as engine_mod
from hermes_memory.recall import expand
from hermes_memory.tier2.episodes import EpisodeStore
from hermes_memory.tier2.readback import all_episodes
from hermes_memory.tier2.search import fts_terms

ROOT = Path("/tmp/ltr16_stores")
GATE = "all"  # ``ltr --gate list``: only list / across-time questions are re-ranked
REFINE = False  # ``ltr --refine``: coordinate ascent on recall@10 after the pairwise fit
_WORD = re.compile(r"[a-z][a-z']+")
_QUESTION_WORDS = frozenset("what when where which who whom whose why how did does do".split())


# -- textual pseudo-relevance feedback ---------------------------------------------------------------
class PRF:
    """Wraps ``EpisodeStore.bm25_ranks`` (the turns' BM25 only) in this process: when ``active``, the
    first BM25 is mixed with a second one over the expansion terms."""

    def __init__(self, docs: int, terms: int, lam: float, source: str):
        self.docs, self.terms, self.lam, self.source = docs, terms, lam, source
        self.active = False
        self.with_query = False  # the second BM25 over the query's terms and the expansion (else: expansion)
        self.texts: dict[int, str] = {}  # row id -> text (all turns of the conversation)
        self.df: Counter[str] = Counter()
        self.n = 1
        self.exclude: set[str] = set()
        self.feedback: list[tuple[str, float]] | None = None  # (text, weight) of a first recall's hits
        self.expanded: list[str] = []
        self._orig = EpisodeStore.bm25_ranks
        prf = self

        def bm25_ranks(store: EpisodeStore, query: str, *, limit: int = 200) -> dict[int, float]:
            first = prf._orig(store, query, limit=limit)
            if not prf.active or not first:
                return first
            if prf.feedback is not None:
                docs = prf.feedback
            else:
                best = sorted(first.items(), key=lambda kv: -kv[1])[: prf.docs]
                docs = [(prf.texts.get(r, ""), s) for r, s in best]
            terms = prf.expansion(docs, set(fts_terms(query)))
            prf.expanded = terms
            if not terms:
                return first
            expanded = " ".join([*fts_terms(query), *terms] if prf.with_query else terms)
            second = prf._orig(store, expanded, limit=limit)
            top1, top2 = max(first.values()), max(second.values(), default=0.0) or 1.0
            out = {r: (1.0 - prf.lam) * s / top1 for r, s in first.items()}
            for r, s in second.items():
                out[r] = out.get(r, 0.0) + prf.lam * s / top2
            return out

        EpisodeStore.bm25_ranks = bm25_ranks  # type: ignore[method-assign]

    def corpus(self, api: MemoryAPI, names: list[str]) -> None:
        eps = all_episodes(api.tier2.db)
        rows = {e.uuid: e for e in eps}
        ids = api.tier2.db.query("SELECT id, uuid FROM episodes")
        self.texts = {int(r["id"]): rows[r["uuid"]].text for r in ids if r["uuid"] in rows}
        self.df = Counter(w for t in self.texts.values() for w in set(_WORD.findall(t.lower())))
        self.n = max(1, len(self.texts))
        self.exclude = {w for n in names for w in n.lower().split()}

    def expansion(self, docs: list[tuple[str, float]], query_terms: set[str]) -> list[str]:
        top = max((s for _, s in docs), default=1.0) or 1.0
        weight: dict[str, float] = defaultdict(float)
        for text, score in docs:
            words = [w.strip("'") for w in _WORD.findall(text.lower())]
            words = [w for w in words if len(w) > 2]
            if not words:
                continue
            for w, tf in Counter(words).items():
                if (w in engine_mod._FUNCTION_WORDS or w in _QUESTION_WORDS or w in self.exclude
                        or w in query_terms or not fts_terms(w)):  # fmt: skip
                    continue
                idf = math.log(self.n / (1 + self.df.get(w, 0)))
                if idf <= 0:
                    continue
                weight[w] += (score / top) * tf / len(words) * idf
        return [w for w, _ in sorted(weight.items(), key=lambda kv: -kv[1])[: self.terms]]


def gated(question: str, gate: str) -> bool:
    from hermes_memory.recall import query as cues

    if gate == "all":
        return True
    return cues.asks_for_list(question) or cues.asks_across_time(question)


def run_prf(data: list[dict[str, Any]], root: Path, a: argparse.Namespace) -> dict[str, Any]:
    prf = PRF(a.docs, a.terms, a.lam, a.source)
    prf.with_query = a.with_query
    rows: dict[str, list[dict[str, float]]] = {c: [] for c in CATEGORIES}
    per_conv: dict[str, float] = {}
    stats = Stats()
    for sample in data:
        conv_rows: list[float] = []
        with MemoryAPI(hermes_home=filled(sample, root), actor="bench") as api:
            episode_dia = dia_by_episode(api)
            prf.corpus(api, api.tier2.episodes.speakers())
            for qa in sample["qa"]:
                cat = str(qa.get("category"))
                evidence = normalise_evidence(qa.get("evidence") or [], stats)
                if cat not in CATEGORIES or not evidence:
                    continue
                question = str(qa["question"])
                prf.active = a.lam > 0 and gated(question, a.gate)
                prf.feedback = None
                if prf.active and a.source == "hits":
                    prf.active = False
                    first = api.recall(question, limit=30)["data"]["hits"]
                    eps = [h for h in first if h["kind"] == "episode"][: a.docs]
                    prf.feedback = [(h["text"], float(h["score"])) for h in eps]
                    prf.active = True
                env = api.recall(question, limit=30)
                if not env["success"]:
                    raise RuntimeError(env["error"])
                ranked = dia_ids_of(env["data"]["hits"], episode_dia, 10)
                row = {f"{m}@{k}": 0.0 for m in ("hit", "recall") for k in (5, 10)}
                for k in (5, 10):
                    found = len(evidence & set(ranked[:k]))
                    row[f"hit@{k}"] = float(found > 0)
                    row[f"recall@{k}"] = found / len(evidence)
                rows[cat].append(row)
                conv_rows.append(row["recall@10"])
        per_conv[str(sample["sample_id"])] = round(float(np.mean(conv_rows)), 4)
    return {"rows": rows, "per_conversation": per_conv}


def summary(rows: dict[str, list[dict[str, float]]]) -> dict[str, Any]:
    every = [r for c in CATEGORIES for r in rows[c]]
    out = {c: {m: round(float(np.mean([r[m] for r in rows[c]])), 4) for m in ("recall@10", "hit@5")}
           for c in CATEGORIES}  # fmt: skip
    out["all"] = {m: round(float(np.mean([r[m] for r in every])), 4) for m in ("recall@10", "hit@5")}
    return out


# -- the engine's components, per candidate ----------------------------------------------------------
class Trace:
    """Records, per recall, what the engine computed: the turns' BM25 and timeline candidates, the
    vector views, the priors' input and output, the session cohesion's output (method wrappers in this
    process; the engine is unchanged)."""

    def __init__(self) -> None:
        self.last: dict[str, Any] = {}
        trace = self
        orig_bm25 = EpisodeStore.bm25_ranks
        orig_range = EpisodeStore.in_range
        orig_vectors = engine_mod.RecallEngine._vectors
        orig_priors = engine_mod.RecallEngine._turn_priors
        orig_cohesion = expand.session_cohesion

        def bm25_ranks(store: EpisodeStore, query: str, *, limit: int = 200) -> dict[int, float]:
            out = orig_bm25(store, query, limit=limit)
            trace.last["bm25"] = dict(out)
            return out

        def in_range(store: EpisodeStore, *args: Any, **kw: Any) -> list[int]:
            out = orig_range(store, *args, **kw)
            trace.last["period"] = set(out)
            return out

        def vectors(eng: Any, q: Any, texts: bool) -> dict[str, dict[str, float]]:
            out = orig_vectors(eng, q, texts)
            trace.last["views"] = {k: dict(v) for k, v in out.items()}
            return out

        def priors(eng: Any, scores: dict[int, float], turns: Any, neighbours: Any, q: Any, *rest: Any
                   ) -> dict[int, float]:  # fmt: skip
            out = orig_priors(eng, scores, turns, neighbours, q, *rest)
            trace.last.update(
                fused=dict(scores), turns=turns, neighbours=dict(neighbours), q=q, priors=dict(out)
            )
            return out

        def cohesion(scores: Any, *args: Any) -> dict[int, float]:
            out = orig_cohesion(scores, *args)
            trace.last["cohesion"] = dict(out)
            return out

        EpisodeStore.bm25_ranks = bm25_ranks  # type: ignore[method-assign]
        EpisodeStore.in_range = in_range  # type: ignore[method-assign]
        engine_mod.RecallEngine._vectors = vectors  # type: ignore[method-assign]
        engine_mod.RecallEngine._turn_priors = priors  # type: ignore[method-assign]
        expand.session_cohesion = cohesion  # type: ignore[assignment]


FEATURES = [
    "eng_logrank",
    "eng_top5",
    "eng_top10",
    "final",
    "fused",
    "bm25",
    "bm25_rank",
    "sent",
    "win",
    "period",
    "priors",
    "pull_prev",
    "pull_next",
    "pull_thread",
    "cohesion_gain",
    "speaker",
    "other_speaker",
    "question_turn",
    "named",
    "overlap",
    "overlap_n",
    "log_len",
    "sess_top1",
    "sess_top3",
    "sess_in_top10",
    "sess_density",
    "sess_best",
    "dist_top1",
    "is_fact_src",
]
SHAPES = ["listing", "across_time", "inference", "named_q", "one_name", "two_names", "span"]
CROSSED = [
    "eng_logrank",
    "bm25",
    "sent",
    "win",
    "priors",
    "speaker",
    "sess_top1",
    "sess_in_top10",
    "named",
    "overlap",
    "sess_density",
]


def _stem(w: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            return w[: -len(suffix)]
    return w


def question_table(
    tr: dict[str, Any], engine_dias: list[str], top: int = 100
) -> tuple[list[str], np.ndarray]:
    """The top candidates (distinct dia ids: the engine's own order first, then its fused scores) and
    their feature rows."""
    turns = tr.get("turns") or {}
    q = tr.get("q")
    priors: dict[int, float] = tr.get("priors", {})
    cohesion: dict[int, float] = tr.get("cohesion", priors)
    fused: dict[int, float] = tr.get("fused", {})
    bm25: dict[int, float] = tr.get("bm25", {})
    views = tr.get("views", {})
    period = tr.get("period", set())
    neighbours = tr.get("neighbours", {})
    dia_row: dict[str, int] = {}
    row_dia: dict[int, str] = {}
    for row_id, turn in turns.items():
        dia = turn.episode.metadata.get("dia_id")
        if dia:
            dia_row.setdefault(dia, row_id)
            row_dia[row_id] = dia
    order = list(dict.fromkeys(engine_dias))
    rest = sorted((r for r in cohesion if r in row_dia), key=lambda r: -cohesion[r])
    for r in rest:
        if row_dia[r] not in order:
            order.append(row_dia[r])
        if len(order) >= top:
            break
    order = order[:top]
    top_c = max(cohesion.values(), default=1.0) or 1.0
    top_f = max(fused.values(), default=1.0) or 1.0
    top_b = max(bm25.values(), default=1.0) or 1.0
    bm_rank = {r: i for i, r in enumerate(sorted(bm25, key=lambda r: -bm25[r]))}
    uuid_row = {t.episode.uuid: r for r, t in turns.items()}
    sent = {uuid_row[u]: s for u, s in views.get("episode", {}).items() if u in uuid_row}
    win = {uuid_row[u]: s for u, s in views.get("episode_window", {}).items() if u in uuid_row}
    from hermes_memory.recall import aggregate

    names = list(q.names) if q is not None else []
    speaker, _ = aggregate.question_speaker(q.text, names) if q is not None else (None, False)
    terms = {_stem(t) for t in (q.terms if q is not None else [])}
    sessions_top = [turns[dia_row[d]].episode.session_id for d in order[:10] if d in dia_row]
    sess_count = Counter(sessions_top)
    sess_all = Counter(turns[dia_row[d]].episode.session_id for d in order if d in dia_row)
    sess_best: dict[Any, float] = defaultdict(float)
    for d in order:
        if d in dia_row:
            r = dia_row[d]
            sess_best[turns[r].episode.session_id] = max(sess_best[turns[r].episode.session_id],
                                                         cohesion.get(r, 0.0) / top_c)  # fmt: skip
    first = turns[dia_row[order[0]]].episode if order and order[0] in dia_row else None
    feats = np.zeros((len(order), len(FEATURES) + len(SHAPES) * (1 + len(CROSSED))))
    shape = [
        float(bool(q and q.listing)),
        float(bool(q and q.across_time)),
        float(bool(q and q.inference)),
        float(bool(q and q.answer)),
        float(len(names) == 1),
        float(len(names) == 2),
        float(bool(q and q.span)),
    ]
    for i, dia in enumerate(order):
        f: dict[str, float] = {}
        f["eng_logrank"] = -math.log(1 + i)
        f["eng_top5"] = float(dia in engine_dias[:5])
        f["eng_top10"] = float(dia in engine_dias[:10])
        r = dia_row.get(dia)
        f["is_fact_src"] = float(r is None or r not in cohesion)
        if r is not None:
            ep = turns[r].episode
            f["final"] = cohesion.get(r, 0.0) / top_c
            f["fused"] = fused.get(r, 0.0) / top_f
            f["bm25"] = bm25.get(r, 0.0) / top_b
            f["bm25_rank"] = -math.log(1 + bm_rank.get(r, 300))
            f["sent"] = max(0.0, 2 * sent.get(r, 0.5) - 1)
            f["win"] = max(0.0, 2 * win.get(r, 0.5) - 1)
            f["period"] = float(r in period)
            f["priors"] = priors.get(r, 0.0) / top_c
            f["cohesion_gain"] = (cohesion.get(r, 0.0) - priors.get(r, 0.0)) / top_c
            prev_id, next_id = neighbours.get(r, (None, None))
            f["pull_prev"] = fused.get(prev_id, 0.0) / top_f if prev_id is not None else 0.0
            f["pull_next"] = fused.get(next_id, 0.0) / top_f if next_id is not None else 0.0
            thread = 0.0
            for side, mid in ((0, prev_id), (1, next_id)):
                pair = neighbours.get(mid) if mid is not None else None
                far = pair[side] if pair is not None else None
                if far is not None:
                    thread = max(thread, fused.get(far, 0.0) / top_f)
            f["pull_thread"] = thread
            spk = (ep.speaker or "").casefold()
            f["speaker"] = float(bool(speaker) and spk == speaker)
            f["other_speaker"] = float(bool(speaker) and spk != speaker)
            f["question_turn"] = float(turns[r].question)
            f["named"] = float(bool(turns[r].answers[1]) or turns[r].answers[0])
            words = {_stem(w) for w in _WORD.findall(ep.text.lower())}
            f["overlap_n"] = float(len(terms & words))
            f["overlap"] = f["overlap_n"] / max(1, len(terms))
            f["log_len"] = math.log(1 + len(ep.text))
            f["sess_top1"] = float(first is not None and ep.session_id == first.session_id)
            f["sess_top3"] = float(any(ep.session_id == s for s in sessions_top[:3]))
            f["sess_in_top10"] = sess_count.get(ep.session_id, 0) / 10.0
            f["sess_density"] = sess_all.get(ep.session_id, 0) / len(order)
            f["sess_best"] = sess_best.get(ep.session_id, 0.0)
            if first is not None and ep.session_id == first.session_id:
                f["dist_top1"] = -math.log(1 + abs(r - dia_row[order[0]]))
            else:
                f["dist_top1"] = -math.log(1 + 100)
        base = [f.get(name, 0.0) for name in FEATURES]
        crossed = [s * f.get(c, 0.0) for s in shape for c in CROSSED]
        feats[i] = base + shape + crossed
    return order, feats


def dump(data: list[dict[str, Any]], root: Path, out: Path) -> None:
    trace = Trace()
    stats = Stats()
    questions: list[dict[str, Any]] = []
    for sample in data:
        with MemoryAPI(hermes_home=filled(sample, root), actor="bench") as api:
            episode_dia = dia_by_episode(api)
            for qa in sample["qa"]:
                cat = str(qa.get("category"))
                evidence = normalise_evidence(qa.get("evidence") or [], stats)
                if cat not in CATEGORIES or not evidence:
                    continue
                trace.last = {}
                env = api.recall(str(qa["question"]), limit=30)
                if not env["success"]:
                    raise RuntimeError(env["error"])
                dias = dia_ids_of(env["data"]["hits"], episode_dia, 30)
                order, feats = question_table(trace.last, dias)
                questions.append(
                    {
                        "conv": str(sample["sample_id"]),
                        "category": cat,
                        "question": qa["question"],
                        "evidence": sorted(evidence),
                        "engine": dias[:10],
                        "order": order,
                        "x": feats.astype(np.float32),
                    }
                )
        print(f"dumped {sample['sample_id']}: {len(questions)} questions so far", file=sys.stderr, flush=True)
    with out.open("wb") as fh:
        pickle.dump({"features": FEATURES, "shapes": SHAPES, "crossed": CROSSED, "questions": questions}, fh)


# -- learning to rank (numpy) --------------------------------------------------------------------------
def metrics(order: list[str], evidence: set[str]) -> dict[str, float]:
    found10 = len(evidence & set(order[:10]))
    return {"recall@10": found10 / len(evidence), "hit@5": float(bool(evidence & set(order[:5])))}


def train_pairwise(qs: list[dict[str, Any]], cols: np.ndarray, l2: float, epochs: int, lr: float,
                   hard: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # fmt: skip
    """A linear scorer by pairwise logistic loss (every evidence candidate against every other of its
    question, weighted so each question counts once); features standardised on the training questions."""
    allx = np.concatenate([q["x"][:, cols] for q in qs]).astype(np.float64)
    mu, sd = allx.mean(0), allx.std(0) + 1e-6
    diffs, weights = [], []
    for q in qs:
        x = (q["x"][:, cols] - mu) / sd
        ev = set(q["evidence"])
        pos = [i for i, d in enumerate(q["order"]) if d in ev]
        neg = [i for i, d in enumerate(q["order"]) if d not in ev]
        if not pos or not neg:
            continue
        d = (x[pos][:, None, :] - x[neg][None, :, :]).reshape(-1, x.shape[1])
        diffs.append(d)
        # with ``hard``: a pair whose negative is among the first ``hard`` candidates counts 4x (the top
        # of the list is what recall@10 reads)
        nw = np.array([4.0 if hard and i < hard else 1.0 for i in neg])
        pw = np.broadcast_to(nw[None, :], (len(pos), len(neg))).reshape(-1)
        weights.append(pw / pw.sum())
    dx = np.concatenate(diffs)
    wt = np.concatenate(weights)
    wt /= wt.sum()
    w = np.zeros(dx.shape[1])
    w[0] = 1.0  # start at the engine's own order (eng_logrank, standardised)
    m, v = np.zeros_like(w), np.zeros_like(w)
    for t in range(1, epochs + 1):  # Adam, full batch
        z = dx @ w
        p = 1.0 / (1.0 + np.exp(np.clip(z, -30, 30)))
        g = -(dx * (wt * p)[:, None]).sum(0) + l2 * w
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        w -= lr * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
    return w, mu, sd


def refine(
    qs: list[dict[str, Any]],
    model: tuple[np.ndarray, np.ndarray, np.ndarray],
    cols: np.ndarray,
    rounds: int = 2,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Coordinate ascent on the training questions' mean recall@10 itself (+ hit@5 / 10 to break ties),
    from the pairwise solution: each weight in turn moves by the step that raises it most."""
    w, mu, sd = model
    xs = [((q["x"][:, cols] - mu) / sd) for q in qs]
    labels = [np.array([d in set(q["evidence"]) for d in q["order"]]) for q in qs]
    sizes = [len(q["evidence"]) for q in qs]

    def value(w: np.ndarray) -> float:
        total = 0.0
        for x, lab, n in zip(xs, labels, sizes, strict=True):
            top = np.argsort(-(x @ w), kind="stable")
            total += lab[top[:10]].sum() / n + 0.1 * float(lab[top[:5]].any())
        return total / len(xs)

    best = value(w)
    scale = float(np.abs(w).max()) or 1.0
    for _ in range(rounds):
        for j in range(len(w)):
            for step in (-0.5, -0.2, -0.05, 0.05, 0.2, 0.5):
                cand = w.copy()
                cand[j] += step * scale
                v = value(cand)
                if v > best + 1e-9:
                    w, best = cand, v
    return w, mu, sd


def score_questions(qs: list[dict[str, Any]], model: tuple[np.ndarray, np.ndarray, np.ndarray] | None,
                    cols: np.ndarray) -> list[dict[str, float]]:  # fmt: skip
    out = []
    for q in qs:
        if model is None:
            order = q["engine"]
        else:
            w, mu, sd = model
            s = ((q["x"][:, cols] - mu) / sd) @ w
            order = [q["order"][i] for i in np.argsort(-s, kind="stable")]
        out.append(metrics(order, set(q["evidence"])))
    return out


def table(qs: list[dict[str, Any]], rows: list[dict[str, float]]) -> dict[str, Any]:
    by: dict[str, list[dict[str, float]]] = defaultdict(list)
    for q, r in zip(qs, rows, strict=True):
        by[q["category"]].append(r)
        by["all"].append(r)
    return {c: {m: round(float(np.mean([r[m] for r in by[c]])), 4) for m in ("recall@10", "hit@5")}
            for c in [*CATEGORIES, "all"]}  # fmt: skip


def run_ltr(
    dump_path: Path, l2s: list[float], epochs: int, lr: float, subset: str, hard: int = 0
) -> dict[str, Any]:
    with dump_path.open("rb") as fh:
        d = pickle.load(fh)
    qs: list[dict[str, Any]] = d["questions"]
    n_base = len(d["features"])
    width = qs[0]["x"].shape[1]
    if subset in ("all", "base"):
        cols = np.arange(width) if subset == "all" else np.arange(n_base)
    else:  # a comma-separated list of base features (the first is the start of the fit: the engine's rank)
        cols = np.array([d["features"].index(name) for name in subset.split(",")])
    convs = sorted({q["conv"] for q in qs})

    def gate(q: dict[str, Any]) -> bool:  # ``--gate list``: re-rank list / across-time questions only
        return GATE == "all" or bool(q["x"][0, n_base] or q["x"][0, n_base + 1])

    results: dict[str, Any] = {}
    engine_rows = score_questions(qs, None, cols)
    results["engine"] = table(qs, engine_rows)
    ceiling = [
        metrics([x for x in q["order"] if x in q["evidence"]] + q["order"], set(q["evidence"])) for q in qs
    ]
    results["ceiling_top100"] = table(qs, ceiling)
    for l2 in l2s:
        held_rows: list[dict[str, float]] = [{}] * len(qs)
        folds = {}
        for conv in convs:
            train = [q for q in qs if q["conv"] != conv and gate(q)]
            test_idx = [i for i, q in enumerate(qs) if q["conv"] == conv]
            model = train_pairwise(train, cols, l2, epochs, lr, hard)
            if REFINE:
                model = refine(train, model, cols)
            rows = [score_questions([qs[i]], model if gate(qs[i]) else None, cols)[0] for i in test_idx]
            for i, r in zip(test_idx, rows, strict=True):
                held_rows[i] = r
            eng = float(np.mean([engine_rows[i]["recall@10"] for i in test_idx]))
            folds[conv] = (round(eng, 4), round(float(np.mean([r["recall@10"] for r in rows])), 4))
        train_all = train_pairwise([q for q in qs if gate(q)], cols, l2, epochs, lr, hard)
        if REFINE:
            train_all = refine([q for q in qs if gate(q)], train_all, cols)
        fit_rows = [score_questions([q], train_all if gate(q) else None, cols)[0] for q in qs]
        results[f"l2={l2}"] = {"loo": table(qs, held_rows), "fit_all": table(qs, fit_rows)["all"],
                               "folds (engine, ltr) recall@10": folds}  # fmt: skip
        names = [*d["features"], *d["shapes"], *[f"{s}*{c}" for s in d["shapes"] for c in d["crossed"]]]
        w = train_all[0]
        results[f"l2={l2}"]["top_weights"] = {names[cols[i]]: round(float(w[i]), 3)
                                             for i in np.argsort(-np.abs(w))[:12]}  # fmt: skip
    return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("mode", choices=("prf", "dump", "ltr"))
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument("--root", type=Path, default=ROOT)
    ap.add_argument("--docs", type=int, default=5)
    ap.add_argument("--terms", type=int, default=10)
    ap.add_argument("--lam", type=float, default=0.3)
    ap.add_argument("--source", choices=("bm25", "hits"), default="bm25")
    ap.add_argument("--with-query", action="store_true", help="the second BM25 also over the query's terms")
    ap.add_argument("--gate", choices=("all", "list"), default="all")
    ap.add_argument("--out", type=Path, default=Path("/tmp/ltr16_dump.pkl"))
    ap.add_argument("--dump", type=Path, default=Path("/tmp/ltr16_dump.pkl"))
    ap.add_argument("--l2", default="0.001,0.01,0.1")
    ap.add_argument("--epochs", type=int, default=300)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--hard", type=int, default=0, help="negatives only among the first N candidates")
    ap.add_argument("--refine", action="store_true", help="coordinate ascent on recall@10 after the fit")
    ap.add_argument("--features", default="all", help="all | base | FEATURE,FEATURE,... (eng_logrank first)")
    a = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    if a.mode == "ltr":
        global REFINE, GATE
        REFINE, GATE = a.refine, a.gate
        res = run_ltr(a.dump, [float(x) for x in a.l2.split(",")], a.epochs, a.lr, a.features, a.hard)
        for name, r in res.items():
            t = r.get("loo", r)
            cells = "  ".join(
                f"{c}: {t[c]['recall@10']:.4f}/{t[c]['hit@5']:.4f}" for c in [*CATEGORIES, "all"]
            )
            print(f"{name:<16} (recall@10/hit@5) {cells}")
            if "folds (engine, ltr) recall@10" in r:
                print(f"{'':<16} fit on all five: {r['fit_all']}; folds {r['folds (engine, ltr) recall@10']}")
                print(f"{'':<16} weights {r['top_weights']}")
        return 0
    data = json.loads(a.data.read_text(encoding="utf-8"))
    if a.mode == "dump":
        dump(data, a.root, a.out)
        return 0
    res = run_prf(data, a.root, a)
    label = f"prf docs={a.docs} terms={a.terms} lam={a.lam} source={a.source} gate={a.gate} q={a.with_query}"
    print(label, json.dumps({"summary": summary(res["rows"]), "per_conversation": res["per_conversation"]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
