"""Offline research (issue 16 item 2): category -> instance matching at phrase level, re-ranking the
engine's own top-100 hits of every LoCoMo dev question. No LLM, real MiniLM (``local``).

Input: ``bench/phrase_dump.py`` output (per question: conversation, category, evidence dia_ids, the
engine's ranked dia_ids with hit scores and kinds; its top 10 reproduce the shipped figure exactly).
Each turn is cut into short phrases (clauses; 3- or 5-word windows of long clauses); the question's
category phrase ("martial arts" in "What martial arts has John done?", ``recall.instances.category_of``)
or its content words are the query; a candidate's prior is the best cosine over its phrases, rescaled
within the question's candidates (median -> 0, best -> 1); re-ranking: score * (1 + w * prior), the
first five kept in place (keep5) or not (keep0). Levels: ``phrase:N`` MiniLM run on every phrase,
``nolex:N`` the same without phrases holding a category word (BM25's match), ``turn`` whole-turn vectors
(control), ``static`` what the engine ships (``recall.instances``: context-free word-piece vectors, 3-word
windows, no category words), ``random`` a prior of the same shape that knows nothing (control; and 20
seeds at the end). Leave-one-conversation-out chooses the variant on four conversations.

    python bench/phrase_dump.py ../shared/bench/locomo_dev.json /tmp/phrase16_stores /tmp/top100.json 100
    python bench/phrase_prior.py --dump /tmp/top100.json --data ../shared/bench/locomo_dev.json

Results (2026-11-25, baseline recall@10 0.8384, hit@5 0.8250; keep5 leaves hit@5 unchanged):
  nolex:3 w=0.2 0.8470 (multi-hop 0.6115 -> 0.6304), phrase:3 0.8461, static w=0.1 0.8457, turn 0.8414
  (w=0.2: 0.8392), random w=0.1 over 20 seeds 0.8387 +- 0.0020 (max 0.8416); leave-one-out over every
  variant 0.8459. Through the engine (``--set instance_prior=0.1``, after the diversity pass): 0.8437,
  leave-one-out over 0/0.1/0.2/0.3 0.8420; before the diversity pass +0.0002. Off by default: the quick
  perf run's LoCoMo recall p50 13.7 -> 16.7 ms (README, issue 16).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hermes_memory.bench.locomo import turn_text, turns_of
from hermes_memory.recall import instances
from hermes_memory.recall import query as cues
from hermes_memory.tier3.embedder import StaticVectors, make_embedder

CATS = ("1", "2", "3", "4")
# The engine's word lists (recall/instances.py); the offline variants below add "des" (a typo in the
# data) to the function words. The category and the names are taken out as the engine does.
_STOP = instances._STOP | {"des"}
_CLAUSE, _WORDS, _LEAD = instances._CLAUSE, instances._WORDS, instances._LEAD


def phrases_of(text: str, window: int = 5, step: int = 2) -> list[str]:
    """Short phrases of a turn: each clause without its leading pronoun/filler words, long clauses as
    overlapping ``window``-word pieces."""
    out: list[str] = []
    for clause in _CLAUSE.split(text):
        words = _WORDS.findall(clause)
        while words and words[0].lower() in _LEAD:
            words = words[1:]
        if not any(w.lower() not in _STOP for w in words):
            continue
        if len(words) <= window + 2:
            out.append(" ".join(words))
        else:
            for i in range(0, len(words) - window + step, step):
                piece = words[i : i + window]
                if any(w.lower() not in _STOP for w in piece):
                    out.append(" ".join(piece))
    return out or [text]


def content_of(question: str, names: Sequence[str]) -> str:
    words = [w for w in _WORDS.findall(instances._without(question, names)) if w.lower() not in _STOP]
    return " ".join(words) or question


def rows_of(dump: list[dict[str, Any]], rerank: Callable[[dict[str, Any]], list[str]]) -> dict[str, list]:
    out: dict[str, list[tuple[float, float]]] = {c: [] for c in CATS}
    for r in dump:
        top = rerank(r)
        ev = set(r["evidence"])
        out[r["cat"]].append((len(ev & set(top[:10])) / len(ev), 1.0 if ev & set(top[:5]) else 0.0))
    return out


def summary(rows: dict[str, list]) -> dict[str, tuple[int, float, float]]:
    res = {c: (len(v), statistics.mean(a for a, _ in v), statistics.mean(b for _, b in v))
           for c, v in rows.items() if v}  # fmt: skip
    every = [x for v in rows.values() for x in v]
    res["all"] = (len(every), statistics.mean(a for a, _ in every), statistics.mean(b for _, b in every))
    return res


def line(label: str, s: dict[str, tuple[int, float, float]]) -> str:
    cats = " ".join(f"{s[c][1]:.4f}/{s[c][2]:.3f}" for c in CATS if c in s)
    return f"{label:<46} {cats}   all {s['all'][1]:.4f}/{s['all'][2]:.4f}"


def _random_order(r: dict[str, Any], rnd: random.Random, depth: int = 50, keep: int = 5, w: float = 0.1
                  ) -> list[str]:  # fmt: skip
    ranked = r["ranked"]
    if not r["category"]:
        return [d for d, _ in ranked]
    p = {d: rnd.random() for d, _ in ranked[:depth]}
    vals = sorted(p.values())
    hi, base = vals[-1], vals[len(vals) // 2]
    scored = [(s * (1.0 + w * max(0.0, (p[d] - base) / (hi - base))) if d in p else s, -j, d)
              for j, (d, s) in enumerate(ranked[keep:], keep)]  # fmt: skip
    return [d for d, _ in ranked[:keep]] + [d for _, _, d in sorted(scored, reverse=True)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dump", type=Path, default=Path("/tmp/phrase16_top100.json"))
    ap.add_argument("--data", type=Path, required=True)
    ap.add_argument("--cache", type=Path, default=Path("/tmp/phrase16_vectors.npz"))
    ap.add_argument("--depth", type=int, default=100, help="re-rank this many candidates")
    ap.add_argument("--show", type=int, default=0, help="print N list questions with their category")
    ap.add_argument("--top", type=int, default=25, help="print the N best variants")
    a = ap.parse_args(argv)
    dump = json.loads(a.dump.read_text())
    data = json.loads(a.data.read_text())
    text: dict[tuple[str, str], str] = {}
    speaker: dict[tuple[str, str], str] = {}
    session: dict[tuple[str, str], str] = {}
    names: dict[str, list[str]] = {}
    for sample in data:
        cid = str(sample["sample_id"])
        conv = sample["conversation"]
        names[cid] = [conv["speaker_a"], conv["speaker_b"]]
        for _, sess, turn in turns_of(conv):
            key = (cid, str(turn.get("dia_id")))
            text[key], speaker[key], session[key] = turn_text(turn), str(turn.get("speaker")), str(sess)
    for r in dump:
        r["ranked"] = [(x[0], x[1]) for x in r["ranked"]]  # (dia_id, score[, kind])
        present = [n for n in names[r["conv"]] if re.search(rf"\b{re.escape(n)}\b", r["q"], re.I)]
        r["names"] = present
        r["category"] = instances.category_of(r["q"], present)
        r["content"] = content_of(r["q"], present)
        r["listing"] = cues.asks_for_list(r["q"])
    if a.show:
        for r in [r for r in dump if r["cat"] == "1"][: a.show]:
            print(f"{r['q']!r:<90} cat={r['category']!r} content={r['content']!r}")
    # Embed every turn's phrases, the whole turns, and the questions' phrases (cached).
    keys = sorted(text)
    windows = (3, 5)
    phrase_lists = {w: [phrases_of(text[k], w, 1 if w <= 3 else 2) for k in keys] for w in windows}
    flat = sorted({p for lists in phrase_lists.values() for ps in lists for p in ps})
    queries = sorted({r["category"] for r in dump if r["category"]} | {r["content"] for r in dump})
    emb = make_embedder("local")
    if a.cache.exists():
        z = np.load(a.cache, allow_pickle=True)
        cached = {tuple(t.split("\t", 1)): v for t, v in zip(z["texts"].tolist(), z["vecs"], strict=True)}
    else:
        cached = {}
    need_doc = [t for t in sorted(set(flat) | {text[k] for k in keys}) if ("d", t) not in cached]
    need_q = [t for t in queries if ("q", t) not in cached]
    print(f"{len(keys)} turns, {len(flat)} phrases; embedding {len(need_doc)} docs, {len(need_q)} queries",
          file=sys.stderr)  # fmt: skip
    if need_doc:
        for i in range(0, len(need_doc), 256):
            chunk = need_doc[i : i + 256]
            for t, v in zip(chunk, emb.embed_document(chunk), strict=True):
                cached[("d", t)] = v
    if need_q:
        for t, v in zip(need_q, emb.embed_query(need_q), strict=True):
            cached[("q", t)] = v
    if need_doc or need_q:
        items = list(cached.items())
        np.savez(a.cache, texts=np.array(["\t".join(k) for k, _ in items]),
                 vecs=np.stack([v for _, v in items]))  # fmt: skip
    plists = {w: dict(zip(keys, phrase_lists[w], strict=True)) for w in windows}
    pmat = {w: {k: np.stack([cached[("d", p)] for p in ps]) for k, ps in plists[w].items()} for w in windows}
    tvec = {k: cached[("d", text[k])] for k in keys}

    def stems(phrase: str) -> list[str]:
        return [w.lower()[:5] for w in _WORDS.findall(phrase) if w.lower() not in _STOP and len(w) > 2]

    static_phrases: dict[tuple[str, str], instances.Phrases] = {}
    rng = random.Random(7)

    def prior(r: dict[str, Any], which: str, level: str) -> dict[str, float]:
        qtext = r["category"] if which == "cat" else r["content"]
        if which == "cat_or_content":
            qtext = r["category"] or r["content"]
        if not qtext:
            return {}
        if level == "random":  # control: a prior of the same shape that knows nothing
            return {dia: rng.random() for dia, _ in r["ranked"][: a.depth]}
        if level == "static":  # what the engine ships (recall.instances, context-free vectors)
            assert isinstance(emb, StaticVectors)
            qs = instances.query_vector(qtext, emb)
            if qs is None:
                return {}
            dias = [d for d, _ in r["ranked"][: a.depth] if (r["conv"], d) in tvec]
            for d in dias:
                if (r["conv"], d) not in static_phrases:
                    static_phrases[(r["conv"], d)] = instances.phrases(text[(r["conv"], d)], emb, 3)
            found = [static_phrases[(r["conv"], d)] for d in dias]
            best = instances.best_matches(found, qs, emb.piece_vectors, instances.stems(qtext))
            return {d: m for d, m in zip(dias, best, strict=True) if m is not None}
        qv = cached[("q", qtext)]
        lexical = stems(qtext)
        out = {}
        for dia, _ in r["ranked"][: a.depth]:
            k = (r["conv"], dia)
            if k not in tvec:
                continue
            if level == "turn":
                out[dia] = float(tvec[k] @ qv)
                continue
            w = int(level.split(":")[1])
            sims = pmat[w][k] @ qv
            if level.startswith("nolex"):  # phrases naming the category itself are BM25's job
                keep = [
                    i
                    for i, p in enumerate(plists[w][k])
                    if not any(t.lower().startswith(x) for t in _WORDS.findall(p) for x in lexical)
                ]
                out[dia] = float(sims[keep].max()) if keep else 0.0
            else:
                out[dia] = float(sims.max())
        return out

    levels = ("phrase:3", "phrase:5", "nolex:3", "nolex:5", "turn", "static", "random")
    priors: dict[tuple[int, str, str], dict[str, float]] = {}
    for i, r in enumerate(dump):
        for which in ("cat", "cat_or_content"):
            for level in levels:
                priors[(i, which, level)] = prior(r, which, level)

    def reranker(which: str, level: str, w: float, scope: str, keep: int, person: bool
                 ) -> Callable[[dict[str, Any]], list[str]]:  # fmt: skip
        def rerank(r: dict[str, Any]) -> list[str]:
            ranked = r["ranked"]
            if w == 0 or (scope == "list" and not r["listing"]) or (scope == "cat" and not r["category"]):
                return [d for d, _ in ranked]
            p = priors[(r["_i"], which, level)]
            if not p:
                return [d for d, _ in ranked]
            vals = sorted(p.values())
            hi = vals[-1]
            base = vals[len(vals) // 2]
            who = r["names"][0] if person and len(r["names"]) == 1 else None
            scored = []
            for j, (d, s) in enumerate(ranked):
                x = p.get(d)
                boost = 0.0
                if x is not None and hi > base and j < a.depth and j >= keep:
                    boost = max(0.0, (x - base) / (hi - base))
                    if who is not None and speaker.get((r["conv"], d)) != who:
                        boost = 0.0
                scored.append((s * (1.0 + w * boost), -j, d))
            if keep:  # the first ``keep`` keep their places; the rest are re-ranked below them
                return [d for d, _ in ranked[:keep]] + [d for _, _, d in sorted(scored[keep:], reverse=True)]
            scored.sort(reverse=True)
            return [d for _, _, d in scored]

        return rerank

    for i, r in enumerate(dump):
        r["_i"] = i
    base = summary(rows_of(dump, reranker("cat", "turn", 0.0, "all", 0, False)))
    print("cats: recall@10/hit@5 for 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop")
    print(line("baseline (engine top-100 as ranked)", base))
    results: dict[str, dict[str, Any]] = {}
    for which in ("cat", "cat_or_content"):
        for level in levels:
            for scope in ("list", "cat"):
                for person in (False, True):
                    for keep in (0, 5):
                        for w in (0.1, 0.2, 0.3, 0.5):
                            label = f"{which}/{level}/{scope}/{'X' if person else '-'}/keep{keep}/w={w}"
                            s = summary(rows_of(dump, reranker(which, level, w, scope, keep, person)))
                            results[label] = {"summary": s, "args": (which, level, w, scope, keep, person)}
    best = sorted(results.items(), key=lambda kv: kv[1]["summary"]["all"][1], reverse=True)
    for label, res in best[: a.top]:
        print(line(label, res["summary"]))
    # Leave-one-conversation-out over the whole variant space (incl. the baseline): choose on four.
    convs = sorted({r["conv"] for r in dump})
    held_rows: dict[str, list] = {c: [] for c in CATS}
    space = {"baseline": reranker("cat", "turn", 0.0, "all", 0, False)}
    space.update({label: reranker(*res["args"]) for label, res in results.items()})
    for held in convs:
        train = [r for r in dump if r["conv"] != held]
        test = [r for r in dump if r["conv"] == held]
        scores = {label: summary(rows_of(train, fn))["all"][1] for label, fn in space.items()}
        chosen = max(scores, key=lambda k: scores[k])
        part = rows_of(test, space[chosen])
        basep = summary(rows_of(test, space["baseline"]))["all"][1]
        print(f"held out {held}: chose {chosen} ({scores[chosen]:.4f} on four vs {scores['baseline']:.4f}); "
              f"held-out {summary(part)['all'][1]:.4f} vs baseline {basep:.4f}")  # fmt: skip
        for c in CATS:
            held_rows[c].extend(part[c])
    print(line("leave-one-conversation-out", summary(held_rows)))
    # The noise floor: random priors of the same shape (the static variant's depth 50, keep 5, w = 0.1).
    noise = []
    for seed in range(20):
        rnd = random.Random(seed)
        noise.append(summary(rows_of(dump, lambda r, rnd=rnd: _random_order(r, rnd)))["all"][1])
    print(f"random prior, 20 seeds: recall@10 {statistics.mean(noise):.4f} +- {statistics.stdev(noise):.4f} "
          f"(max {max(noise):.4f})")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
