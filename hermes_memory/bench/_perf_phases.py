"""The measuring side of ``perf``: each phase runs in its own fresh interpreter and prints one JSON line.

    python -m hermes_memory.bench._perf_phases PHASE '<options as JSON>'

A fresh process per phase keeps model loads, caches and peak RSS of one phase out of the next; the
parent (``perf``) reads the child's wall time and peak RSS from ``wait4``.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

from hermes_memory.bench import locomo as lm
from hermes_memory.bench._proc import proc_status_mb, thread_cpu_ns
from hermes_memory.bench.perf_report import latency_summary

WORKER_THREAD = "hermes-memory-worker"


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0


def _check(env: dict[str, Any], what: str) -> dict[str, Any]:
    if not env["success"]:
        raise RuntimeError(f"{what} failed: {env['error']}")
    return env


def locomo_questions(samples: Sequence[dict[str, Any]]) -> list[str]:
    """Distinct questions of categories 1-4, in file order."""
    out = [str(q["question"]) for s in samples for q in s["qa"] if str(q.get("category")) in lm.CATEGORIES]
    return list(dict.fromkeys(out))


def _load_samples(path: str) -> list[dict[str, Any]]:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise ValueError(f"{path} is not a LoCoMo file (expected a list of samples)")
    return data


# -- the query embedder alone -------------------------------------------------------------------
def phase_embedder(opts: dict[str, Any]) -> dict[str, Any]:
    """Model load (construct + first query) and one-query latency of the configured default embedder."""
    from hermes_memory.config import load_config
    from hermes_memory.tier3.embedder import make_embedder

    with tempfile.TemporaryDirectory() as home:
        name = load_config(hermes_home=home).tier3.embedding_model
    questions = locomo_questions(_load_samples(opts["data"]))[: opts["queries"]]
    started = time.perf_counter()
    embedder = make_embedder(name, cache_size=0)
    embedder.embed_query(["warm up: load the model"])
    load_s = time.perf_counter() - started
    rss_after_load = proc_status_mb("VmRSS")
    times = []
    for question in questions:
        t0 = time.perf_counter()
        embedder.embed_query([question])
        times.append(_ms(t0))
    return {
        "embedder": name,
        "load_s": round(load_s, 3),
        "rss_after_load_mb": round(rss_after_load, 1),
        "torch_imported": "torch" in sys.modules,
        "query_ms": latency_summary(times),
    }


# -- LoCoMo conversations: our recall and ingest, holographic's, on the same turns and questions ------
class CountingEmbedder:
    """Wraps the store's embedder to count what the write path embeds (texts, model tokens, seconds)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.texts = 0
        self.tokens = 0
        self.seconds = 0.0
        self.query_texts = 0
        self.queried: list[str] = []  # the query texts embedded since the caller last cleared it

    @property
    def inner(self) -> Any:
        """The wrapped embedder."""
        return self._inner

    def embed_document(self, texts: Sequence[str]) -> Any:
        t0 = time.perf_counter()
        out = self._inner.embed_document(texts)
        self.seconds += time.perf_counter() - t0
        items = list(texts)
        self.texts += len(items)
        limit = self._inner.max_tokens
        self.tokens += sum(min(self._inner.count_tokens(t), limit) for t in items)
        return out

    def embed_query(self, texts: Sequence[str]) -> Any:
        self.query_texts += len(texts)
        self.queried.extend(texts)
        return self._inner.embed_query(texts)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def snapshot(self) -> dict[str, float]:
        return {"texts": self.texts, "tokens": self.tokens, "seconds": self.seconds}


def instrument(api: Any) -> tuple[CountingEmbedder | None, str]:
    """Load the store's embedder now (so no model load is timed as ingest) and count what it embeds.

    Returns (None, why) when this build's SemanticMemory keeps its embedder elsewhere.
    """
    sem = api.core.tiers.sem
    if sem is None:
        return None, "tier 3 is off"
    inner = sem.embedder  # the public property loads the model
    inner.embed_query(["warm up: load the model"])
    if not hasattr(sem, "_embedder"):
        return None, "SemanticMemory has no _embedder to wrap in this build"
    counter = CountingEmbedder(inner)
    sem._embedder = cast(Any, counter)
    return counter, ""


def embedding_alone_ms(embedder: Any, texts: Sequence[str]) -> float:
    """What embedding ``texts`` as queries costs on its own: the model's pass without the query cache
    (the floor a recall's own embedding of them cannot go below)."""
    if not texts:
        return 0.0
    t0 = time.perf_counter()
    embedder._embed(list(texts), "query")
    return _ms(t0)


def timed_recall(
    api: Any, query: str, limit: int, model: Any | None, queried: list[str], acc: dict[str, Any]
) -> dict[str, Any]:
    """``api.recall`` timed into ``acc["latency_ms"]``; with the query embedder ``model`` (whose
    wrapper appends what it embeds to ``queried``), the same texts embedded again alone right after
    (``query_embedding_ms``) and the recall's time beyond that (``after_embedding_ms``)."""
    queried.clear()
    t0 = time.perf_counter()
    env = api.recall(query, limit=limit)
    total = _ms(t0)
    acc["latency_ms"].append(total)
    if model is not None and queried:
        alone = embedding_alone_ms(model, queried)
        acc["query_embedding_ms"].append(alone)
        acc["after_embedding_ms"].append(total - alone)
    return _check(env, "recall")


def _score(evidence: set[str], ranked: list[str], k: int) -> float:
    return len(evidence & set(ranked[:k])) / len(evidence)


def _conversation_items(sample: dict[str, Any]) -> list[tuple[Any, str, dict[str, Any], str]]:
    return [
        (when, session, turn, text)
        for when, session, turn in lm.turns_of(sample["conversation"])
        if (text := lm.turn_text(turn))
    ]


def _questions(sample: dict[str, Any], stats: lm.Stats) -> list[tuple[str, set[str]]]:
    out = []
    for qa in sample["qa"]:
        if str(qa.get("category")) not in lm.CATEGORIES:
            continue
        evidence = lm.normalise_evidence(qa.get("evidence") or [], stats)
        if evidence:
            out.append((str(qa["question"]), evidence))
    return out


def _ours(items: list[Any], questions: list[tuple[str, set[str]]], k: int, acc: dict[str, Any]) -> None:
    from hermes_memory.api.memory_api import MemoryAPI

    with (
        tempfile.TemporaryDirectory(prefix="hm-perf-locomo-") as home,
        MemoryAPI(hermes_home=home, actor="bench") as api,
    ):
        counter, why = instrument(api)
        acc["instrument_note"] = why
        t0 = time.perf_counter()
        for when, session, turn, text in items:
            _check(
                api.remember_message(
                    text, session, when, speaker=turn.get("speaker"), metadata={"dia_id": turn.get("dia_id")}
                ),
                "remember_message",
            )
        enqueue_s = time.perf_counter() - t0
        t1 = time.perf_counter()
        written = _check(api.ingest_pending(timeout=None), "ingest_pending")["data"]
        if written["pending"]["turns"]:
            raise RuntimeError(f"ingest_pending left turns queued: {written}")
        write_s = time.perf_counter() - t1
        during_write = counter.snapshot() if counter is not None else None
        t2 = time.perf_counter()
        flushed = _check(api.flush(timeout=None), "flush")["data"]
        if not flushed["drained"]:
            raise RuntimeError(f"flush did not drain: {flushed}")
        embed_s = time.perf_counter() - t2
        ing = acc["ingest"]
        ing["turns"] += len(items)
        ing["enqueue_s"] += enqueue_s
        ing["write_s"] += write_s
        ing["embed_phase_s"] += embed_s
        if counter is not None and during_write is not None:
            for key in ("texts", "tokens", "seconds"):
                ing["embedded_" + key] += counter.snapshot()[key]
                ing["embedded_during_write_" + key] += during_write[key]
        episode_dia = lm.dia_by_episode(api)
        warm = _check(api.recall("warm up the recall path", limit=k * 3), "recall")
        acc["tiers_answered"] = warm["meta"].get("tiers_answered")
        model = counter.inner if counter is not None else None
        queried = counter.queried if counter is not None else []
        for question, evidence in questions:
            env = timed_recall(api, question, k * 3, model, queried, acc)
            acc["recall_at_k"].append(_score(evidence, lm.dia_ids_of(env["data"]["hits"], episode_dia, k), k))


def _holographic(
    items: list[Any], questions: list[tuple[str, set[str]]], k: int, acc: dict[str, Any]
) -> None:
    from hermes_memory.bench.holographic_peer import HolographicPeer

    with (
        tempfile.TemporaryDirectory(prefix="hm-perf-holo-") as home,
        HolographicPeer(Path(home) / "memory_store.db") as peer,
    ):
        t0 = time.perf_counter()
        for _, _, turn, text in items:
            peer.add_turn(str(turn.get("dia_id")), f"{turn.get('speaker')}: {text}")
        acc["ingest_s"] += time.perf_counter() - t0
        acc["turns"] += len(items)
        acc["hrr_capacity_warnings"] += peer.capacity_warnings
        peer.search("warm up the search path", k)
        for question, evidence in questions:
            t = time.perf_counter()
            ranked = peer.search(question, k)
            acc["latency_ms"].append(_ms(t))
            acc["recall_at_k"].append(_score(evidence, ranked, k))


def phase_locomo(opts: dict[str, Any]) -> dict[str, Any]:
    """The first ``conversations`` LoCoMo conversations: each into a fresh store of ours (remember_message
    per turn, then ingest_pending = the write path, then flush = embedding) and a fresh holographic
    store (add_fact per turn); every category 1-4 question timed against both and scored recall@k."""
    k = int(opts["k"])
    samples = _load_samples(opts["data"])[: opts["conversations"]]
    stats = lm.Stats()
    zero = ("texts", "tokens", "seconds")
    ours: dict[str, Any] = {
        "latency_ms": [],
        "query_embedding_ms": [],
        "after_embedding_ms": [],
        "recall_at_k": [],
        "ingest": {
            "turns": 0,
            "enqueue_s": 0.0,
            "write_s": 0.0,
            "embed_phase_s": 0.0,
            **{f"embedded_{z}": 0 for z in zero},
            **{f"embedded_during_write_{z}": 0 for z in zero},
        },
    }
    holo: dict[str, Any] = {
        "latency_ms": [],
        "recall_at_k": [],
        "ingest_s": 0.0,
        "turns": 0,
        "hrr_capacity_warnings": 0,
    }
    for sample in samples:
        items = _conversation_items(sample)
        questions = _questions(sample, stats)
        print(
            f"  {sample.get('sample_id')}: {len(items)} turns, {len(questions)} questions",
            file=sys.stderr,
            flush=True,
        )
        _ours(items, questions, k, ours)
        _holographic(items, questions, k, holo)
    for side in (ours, holo):
        scores = side.pop("recall_at_k")
        side["recall_at_k"] = round(sum(scores) / len(scores), 4)
        side["questions"] = len(scores)
        for key in ("latency_ms", "query_embedding_ms", "after_embedding_ms"):
            if key in side:
                side[key] = latency_summary(side[key]) if side[key] else None
    return {
        "conversations": [s.get("sample_id") for s in samples],
        "k": k,
        "ours": ours,
        "holographic": holo,
        "evidence_ids_repaired": stats.repaired_evidence,
        "evidence_ids_dropped": stats.dropped_evidence,
    }


# -- at scale: fill, then recall with and without the provider's background worker ----------------
def _open_provider(home: Path, session: str) -> tuple[Any, Any]:
    from hermes_memory.hermes import registry
    from hermes_memory.hermes.provider import NextLevelProvider

    provider = NextLevelProvider()
    provider.initialize(session, hermes_home=str(home), platform="cli", agent_identity="default")
    shared = registry.find(str(home), "default")
    if shared is None:
        raise RuntimeError(f"the provider opened no store for {home}")
    return provider, shared.api


FILL_MARKER = "perf-fill.json"


def phase_fill(opts: dict[str, Any]) -> dict[str, Any]:
    """Fill ``home`` to ``turns`` turns once with ``hermes_memory.bench.fill`` (a marker file records a
    finished fill; later runs reuse it)."""
    from hermes_memory.bench import traffic
    from hermes_memory.bench.fill import fill_store

    home = Path(opts["home"])
    marker = home / FILL_MARKER
    if marker.exists():
        reused: dict[str, Any] = json.loads(marker.read_text(encoding="utf-8"))
        return {**reused, "reused": True}
    traffic.prepare_home(home, opts["embedder"])
    report = fill_store(home, int(opts["turns"]), embedder=opts["embedder"], backend=traffic.BACKEND)
    result: dict[str, Any] = {
        **report.to_dict(),
        "how": f"hermes_memory.bench.fill.fill_store: {opts['turns']} one-message turns, "
        f"remember_message + ingest_pending in rounds, then flush; backend {traffic.BACKEND}",
    }
    marker.write_text(json.dumps(result), encoding="utf-8")
    return {**result, "reused": False}


class RealQueryCost:
    """The store's embedder (hashing, what the store was filled with) that first pays for a real query
    embedding: each ``embed_query`` embeds the texts with ``real`` too (all-MiniLM, cache off) and
    discards the result, so a timed recall includes one real query embedding."""

    def __init__(self, inner: Any, real: Any) -> None:
        self._inner = inner
        self.real = real
        self.queries = 0
        self.queried: list[str] = []  # the query texts embedded since the caller last cleared it

    def embed_query(self, texts: Sequence[str]) -> Any:
        self.real.embed_query(texts)
        self.queries += 1
        self.queried.extend(texts)
        return self._inner.embed_query(texts)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def pay_real_queries(api: Any, real: Any) -> RealQueryCost:
    """Make every query embedding of ``api``'s Tier 3 also run ``real`` (see ``RealQueryCost``).

    Raises RuntimeError when this build keeps its embedder elsewhere."""
    sem = api.core.tiers.semantic()
    inner = sem.embedder  # the public property builds the store's embedder
    if not hasattr(sem, "_embedder"):
        raise RuntimeError("SemanticMemory has no _embedder to wrap in this build")
    wrapper = RealQueryCost(inner, real)
    sem._embedder = cast(Any, wrapper)
    return wrapper


def _timed_recalls(
    api: Any,
    queries: list[str],
    before: Callable[[int], None] | None = None,
    paid: RealQueryCost | None = None,
    split: dict[str, Any] | None = None,
) -> dict[str, float]:
    """Latencies of ``recall`` (10 hits) over ``queries``; with ``paid`` and ``split``, each recall's real
    query embedding alone and the time beyond it (``timed_recall``) as summaries in ``split``."""
    acc: dict[str, Any] = {"latency_ms": [], "query_embedding_ms": [], "after_embedding_ms": []}
    real = paid.real if paid is not None else None
    queried = paid.queried if paid is not None else []
    for i, query in enumerate(queries):
        if before is not None:
            before(i)
        timed_recall(api, query, 10, real, queried, acc)
    if split is not None and acc["query_embedding_ms"]:
        split["query_embedding_ms"] = latency_summary(acc["query_embedding_ms"])
        split["after_embedding_ms"] = latency_summary(acc["after_embedding_ms"])
    return latency_summary(acc["latency_ms"])


def _worker_thread() -> threading.Thread | None:
    found = [t for t in threading.enumerate() if t.name == WORKER_THREAD and t.is_alive()]
    return found[0] if found else None


def phase_scale(opts: dict[str, Any]) -> dict[str, Any]:
    """Recall over every tier on a filled home: standalone (no worker), with the provider's worker idle,
    and while it ingests (one sync_turn before each recall); the idle worker's CPU; RSS."""
    import random

    from hermes_memory.api.memory_api import MemoryAPI
    from hermes_memory.bench import traffic
    from hermes_memory.hermes.settings import hermes_profile, load_settings
    from hermes_memory.tier3.embedder import make_embedder

    home = Path(opts["home"])
    queries = traffic.queries(int(opts["queries"]), int(opts["seed"]))
    out: dict[str, Any] = {}
    config = load_settings(home).memory_config(str(home), hermes_profile(home))
    real = None
    if opts.get("real_query", True):
        real = make_embedder("local", cache_size=0)
        real.embed_query(["warm up: load the model"])
        out["query_embedding"] = (
            "each recall also embeds its query with the local all-MiniLM-L6-v2 (cache off) and discards it; "
            f"the store's vectors and the searched vector are {config.tier3.embedding_model}"
        )
    with MemoryAPI(config, actor="bench") as api:
        alone = pay_real_queries(api, real) if real is not None else None
        out["episodes"] = api.tier2.episodes.count()
        out["search_path"] = api.core.tiers.semantic().search_path()
        warm = _check(api.recall("warm up the caches", limit=10), "recall")
        out["tiers_answered"] = warm["meta"].get("tiers_answered")
        split: dict[str, Any] = {}
        out["standalone_ms"] = _timed_recalls(api, queries, paid=alone, split=split)
        out.update({f"standalone_{key}": value for key, value in split.items()})
    provider, api = _open_provider(home, "bench-scale")
    if real is not None:
        paid = pay_real_queries(api, real)
    _check(api.flush(timeout=300), "flush")
    _check(api.recall("warm up the caches", limit=10), "recall")
    worker = _worker_thread()
    idle_s = float(opts["idle_s"])
    if worker is None or worker.native_id is None:
        out["worker_idle_cpu_ms_per_s"] = None
        out["worker_note"] = f"no live thread named {WORKER_THREAD}"
    else:
        cpu0 = thread_cpu_ns(worker.native_id)
        time.sleep(idle_s)
        out["worker_idle_cpu_ms_per_s"] = round((thread_cpu_ns(worker.native_id) - cpu0) / 1e6 / idle_s, 3)
    times = []
    for _ in range(20):
        t0 = time.perf_counter()
        api.core.ingest.drain_once()
        times.append(_ms(t0))
    out["idle_step_ms"] = latency_summary(times)
    out["worker_idle_ms"] = _timed_recalls(api, queries)
    rnd = random.Random(int(opts["seed"]) + 2)

    def one_turn(i: int) -> None:
        user, assistant = traffic.exchange(rnd)
        provider.sync_turn(user, assistant, session_id="bench-scale")

    out["worker_ingesting_ms"] = _timed_recalls(api, queries, before=one_turn)
    if real is not None:
        out["real_query_embeddings"] = paid.queries  # on the provider's store (warm-up included)
    out["rss_mb"] = round(proc_status_mb("VmRSS"), 1)
    t0 = time.perf_counter()
    provider.shutdown()
    out["shutdown_s"] = round(time.perf_counter() - t0, 2)
    out["peak_rss_mb_before_exit"] = round(proc_status_mb("VmHWM"), 1)
    return out


PHASES: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "embedder": phase_embedder,
    "locomo": phase_locomo,
    "fill": phase_fill,
    "scale": phase_scale,
}


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 2 or args[0] not in PHASES:
        print(
            f"usage: python -m hermes_memory.bench._perf_phases {{{','.join(PHASES)}}} JSON", file=sys.stderr
        )
        return 2
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    result = PHASES[args[0]](json.loads(args[1]))
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
