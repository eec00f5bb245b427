"""LoCoMo retrieval benchmark: ingest every turn through the public write path, then ask ``recall``.

    python -m hermes_memory.bench.locomo --data PATH [--k 5 10] [--json OUT] [--limit-conversations N]
                                         [--misses N]
        [--llm-base-url URL --llm-model NAME [--llm-api-key-env VAR] [--llm-timeout-s S]
         [--no-instance-extraction] [--query-decomposition] [--both-modes]]

With ``--llm-base-url``/``--llm-model`` (an OpenAI-compatible endpoint: config ``llm``) the memory runs
in LLM mode: the LLM's extraction after each turn with write-time instances (``llm.instance_extraction``,
unless ``--no-instance-extraction``) and, with ``--query-decomposition``, read-time query decomposition.
``--both-modes`` runs every conversation without the LLM and then with it, and prints both side by side
(the JSON then holds ``no_llm`` and ``llm``). LLM failures are counted in the result (``llm``), never
hidden: a run whose LLM kept failing measured the fallback.

Per ../shared/bench/README.md: each conversation gets its own fresh memory; every turn goes in through
``remember_message`` (the single-message form of ``remember_turn``) with its speaker, its text plus the
image caption if any, and the session's date as its time. Only turns are ingested — never the
``observation``/``session_summary``/``event_summary`` fields. For each category 1-4 question the top
recall hits are mapped back to turn ids (a fact counts for the turns it came from) and the first k
distinct turn ids are scored: recall@k = |evidence ∩ top-k| / |evidence|, hit@k = any evidence found.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import statistics
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

CATEGORIES = ("1", "2", "3", "4")
_SESSION_KEY = re.compile(r"^session_(\d+)$")
_DIA = re.compile(r"^D\s*:?\s*(\d+)\s*:\s*(\d+)$")


@dataclass
class Stats:
    skipped_questions: int = 0
    repaired_evidence: int = 0
    dropped_evidence: int = 0
    latencies_ms: list[float] = field(default_factory=list)
    ingest_ms: float = 0.0
    turns: int = 0
    # LLM mode: extraction calls that failed, instance facts stored, questions split, fallbacks
    llm_extract_failures: int = 0
    instance_facts: int = 0
    decomposed_questions: int = 0
    decomposition_fallbacks: int = 0
    # (category, question, evidence ids, the top-k ids retrieved, their texts) of imperfect questions
    misses: list[tuple[str, str, list[str], list[str], dict[str, str]]] = field(default_factory=list)


def parse_session_time(text: str) -> datetime:
    """'1:56 pm on 8 May, 2023' -> aware UTC datetime. Raises ValueError when unparsable."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def normalise_evidence(raw: Iterable[Any], stats: Stats) -> set[str]:
    """Evidence ids as 'D<session>:<turn>'; repairs 'D8:6; D9:17', 'D:11:26', 'D30:05'."""
    out: set[str] = set()
    for item in raw:
        for part in re.split(r"[;,]", str(item)):
            part = part.strip()
            if not part:
                continue
            match = _DIA.match(part)
            if match is None:
                stats.dropped_evidence += 1
                continue
            norm = f"D{int(match.group(1))}:{int(match.group(2))}"
            if norm != part:
                stats.repaired_evidence += 1
            out.add(norm)
    return out


def turns_of(conversation: dict[str, Any]) -> list[tuple[datetime, str, dict[str, Any]]]:
    """(time, session id, turn) for every turn, in session order."""
    sessions = sorted((int(m.group(1)), key) for key in conversation if (m := _SESSION_KEY.match(key)))
    out = []
    for number, key in sessions:
        turns = conversation.get(key) or []
        stamp = conversation.get(f"{key}_date_time")
        if not turns or not stamp:
            continue
        when = parse_session_time(stamp)
        for turn in turns:
            out.append((when, f"session_{number}", turn))
    return out


def turn_text(turn: dict[str, Any]) -> str:
    text = str(turn.get("text") or "").strip()
    caption = turn.get("blip_caption")
    if caption:
        text = f"{text} [shares an image: {caption}]".strip()
    return text


def dia_by_episode(api: Any) -> dict[str, Any]:
    """The LoCoMo dialogue id (``dia_id`` metadata) of every stored episode, by episode uuid."""
    from hermes_memory.tier2.readback import all_episodes

    return {episode.uuid: episode.metadata.get("dia_id") for episode in all_episodes(api.tier2.db)}


def dia_ids_of(hits: Sequence[dict[str, Any]], episode_dia: dict[str, str], k: int) -> list[str]:
    """The first k distinct turn ids the hits stand for (a hit may stand for several turns)."""
    out: list[str] = []
    for hit in hits:
        ids = []
        dia = (hit.get("metadata") or {}).get("dia_id")
        if dia:
            ids.append(dia)
        for source in hit.get("source_ids") or ():
            if source in episode_dia:
                ids.append(episode_dia[source])
        for dia_id in ids:
            if dia_id not in out:
                out.append(dia_id)
                if len(out) == k:
                    return out
    return out


def ingest(api: Any, sample: dict[str, Any]) -> int:
    """Every turn of one conversation (never its summaries) through ``remember_message`` — speaker,
    session date, ``dia_id`` in the metadata — then ``flush``; returns the turn count.

    Raises RuntimeError when a write or the flush fails.
    """
    turns = 0
    for when, session, turn in turns_of(sample["conversation"]):
        text = turn_text(turn)
        if not text:
            continue
        env = api.remember_message(
            text, session, when, speaker=turn.get("speaker"), metadata={"dia_id": turn.get("dia_id")}
        )
        if not env["success"]:
            raise RuntimeError(f"ingest failed: {env['error']}")
        turns += 1
    flushed = api.flush(timeout=None)
    if not flushed["success"] or not flushed["data"]["drained"]:
        raise RuntimeError(f"flush failed: {flushed}")
    return turns


def run_conversation(
    sample: dict[str, Any],
    ks: Sequence[int],
    stats: Stats,
    scores: dict[str, list[dict[str, float]]],
    overrides: dict[str, Any],
) -> None:
    from hermes_memory.api.memory_api import MemoryAPI

    with (
        tempfile.TemporaryDirectory(prefix="hm-locomo-") as home,
        _fresh_store(overrides) as fresh,
        MemoryAPI(hermes_home=home, actor="bench", **fresh) as api,
    ):
        started = time.perf_counter()
        stats.turns += ingest(api, sample)
        stats.ingest_ms += (time.perf_counter() - started) * 1000.0
        _count_llm_extraction(api, stats)
        episode_dia = dia_by_episode(api)
        texts = _dia_texts(sample["conversation"])
        for qa in sample["qa"]:
            answer = ask(api, qa, episode_dia, ks, stats)
            if answer is None:
                continue
            if not answer.evidence <= set(answer.ranked):
                stats.misses.append(
                    (answer.category, str(qa["question"]), sorted(answer.evidence), answer.ranked, texts)
                )
            scores[answer.category].append(answer.row)


@contextlib.contextmanager
def _fresh_store(overrides: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """``overrides`` for a conversation's own, empty store: with ``tier2.url`` (a PostgreSQL database),
    a schema of its own there, dropped afterwards."""
    url = overrides.get("tier2.url")
    if not url:
        yield overrides
        return
    from hermes_memory.tier2.pg.database import scratch_schema

    with scratch_schema(url, f"hm_locomo_{uuid.uuid4().hex[:12]}") as scoped:
        yield {**overrides, "tier2.url": scoped}


@dataclass(frozen=True)
class Answer:
    """One question as the benchmark scores it: the turn ids recall ranked and recall@k / hit@k."""

    category: str
    evidence: set[str]
    ranked: list[str]
    row: dict[str, float]


def ask(
    api: Any, qa: dict[str, Any], episode_dia: dict[str, Any], ks: Sequence[int], stats: Stats
) -> Answer | None:
    """Recall one LoCoMo question (``limit`` 3 x the largest k) and score it against its evidence, the
    recall's wall time added to ``stats``; None for a question not scored (category 5, no evidence).

    Raises RuntimeError when the recall fails."""
    category = str(qa.get("category"))
    if category not in CATEGORIES:
        return None
    evidence = normalise_evidence(qa.get("evidence") or [], stats)
    if not evidence:
        stats.skipped_questions += 1
        return None
    kmax = max(ks)
    t0 = time.perf_counter()
    env = api.recall(str(qa["question"]), limit=kmax * 3)
    stats.latencies_ms.append((time.perf_counter() - t0) * 1000.0)
    if not env["success"]:
        raise RuntimeError(f"recall failed: {env['error']}")
    stats.decomposed_questions += bool(env["meta"].get("sub_queries"))
    stats.decomposition_fallbacks += bool(env["meta"].get("warnings"))
    ranked = dia_ids_of(env["data"]["hits"], episode_dia, kmax)
    row: dict[str, float] = {}
    for k in ks:
        found = len(evidence & set(ranked[:k]))
        row[f"hit@{k}"] = 1.0 if found else 0.0
        row[f"recall@{k}"] = found / len(evidence)
    return Answer(category, evidence, ranked, row)


def _count_llm_extraction(api: Any, stats: Stats) -> None:
    """The LLM extraction's failures and the instance facts it stored (its audit rows; none without LLM)."""
    for entry in api.tier2.audit.entries(action="llm_extract", limit=1_000_000):
        if not entry.success:
            stats.llm_extract_failures += 1
        elif isinstance(entry.diff, dict):
            stats.instance_facts += int(entry.diff.get("instances") or 0)


def _dia_texts(conversation: dict[str, Any]) -> dict[str, str]:
    return {
        str(turn.get("dia_id")): f"{turn.get('speaker')}: {turn_text(turn)}"
        for _, _, turn in turns_of(conversation)
    }


def print_misses(stats: Stats, per_category: int) -> None:
    """A sample of questions whose evidence was not all retrieved: evidence and what came back."""
    shown: dict[str, int] = defaultdict(int)
    for category, question, evidence, ranked, texts in stats.misses:
        if shown[category] >= per_category:
            continue
        shown[category] += 1
        print(f"[category {category}] {question}", file=sys.stderr)
        for dia in evidence:
            mark = f"rank {ranked.index(dia) + 1}" if dia in ranked else "MISSED"
            print(f"    evidence {dia} ({mark}): {texts.get(dia, '?')[:110]}", file=sys.stderr)
        for dia in ranked[:5]:
            if dia not in evidence:
                print(f"    retrieved {dia}: {texts.get(dia, '?')[:110]}", file=sys.stderr)


def summarise(rows: list[dict[str, float]], ks: Sequence[int]) -> dict[str, float | int]:
    out: dict[str, float | int] = {"n": len(rows)}
    for k in ks:
        for metric in ("hit", "recall"):
            key = f"{metric}@{k}"
            out[key] = round(statistics.fmean(r[key] for r in rows), 4) if rows else 0.0
    return out


def llm_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The ``llm`` config of the LLM mode from the command line ({} without ``--llm-base-url``)."""
    if not args.llm_base_url:
        return {}
    out: dict[str, Any] = {
        "llm.enabled": True,
        "llm.base_url": args.llm_base_url,
        "llm.model": args.llm_model,
        "llm.instance_extraction": not args.no_instance_extraction,
        "llm.query_decomposition": args.query_decomposition,
    }
    if args.llm_api_key_env:
        out["llm.api_key_env"] = args.llm_api_key_env
    if args.llm_timeout_s is not None:
        out["llm.timeout_s"] = args.llm_timeout_s
    return out


def run_mode(
    data: Sequence[dict[str, Any]], ks: Sequence[int], overrides: dict[str, Any], misses: int, label: str
) -> dict[str, Any]:
    """Every conversation in a fresh memory with ``overrides``; the result as ``main`` prints it."""
    stats = Stats()
    scores: dict[str, list[dict[str, float]]] = defaultdict(list)
    for i, sample in enumerate(data):
        t0 = time.perf_counter()
        run_conversation(sample, ks, stats, scores, overrides)
        print(
            f"[{label} {i + 1}/{len(data)}] {sample.get('sample_id', '?')}: {time.perf_counter() - t0:.1f} s",
            file=sys.stderr,
        )
    if misses > 0:
        print_misses(stats, misses)
    every = [row for cat in CATEGORIES for row in scores[cat]]
    lat = sorted(stats.latencies_ms)
    from hermes_memory.config import load_config

    embedder = overrides.get("tier3.embedding_model") or load_config().tier3.embedding_model
    llm: dict[str, Any] | None = None
    if overrides.get("llm.enabled"):
        llm = {
            "model": overrides["llm.model"],
            "instance_extraction": overrides["llm.instance_extraction"],
            "query_decomposition": overrides["llm.query_decomposition"],
            "extraction_failures": stats.llm_extract_failures,
            "instance_facts": stats.instance_facts,
            "decomposed_questions": stats.decomposed_questions,
            "decomposition_fallbacks": stats.decomposition_fallbacks,
        }
    return {
        "overall": summarise(every, ks),
        "per_category": {cat: summarise(scores[cat], ks) for cat in CATEGORIES},
        "latency_ms": {
            "p50": round(statistics.median(lat), 3) if lat else 0.0,
            "p95": round(lat[min(len(lat) - 1, int(0.95 * len(lat)))], 3) if lat else 0.0,
        },
        "ingest_ms_per_turn": round(stats.ingest_ms / max(1, stats.turns), 3),
        "embedder": "all-MiniLM-L6-v2" if embedder == "local" else embedder,
        "llm": llm,
        "turns": stats.turns,
        "conversations": len(data),
        "skipped_questions_without_evidence": stats.skipped_questions,
        "evidence_ids_repaired": stats.repaired_evidence,
        "evidence_ids_dropped": stats.dropped_evidence,
    }


def side_by_side(plain: dict[str, Any], llm: dict[str, Any], ks: Sequence[int]) -> str:
    """A markdown table of both modes: recall@k and hit@k per category and overall."""
    metrics = [f"{m}@{k}" for k in ks for m in ("recall", "hit")]
    head = "| category | n | " + " | ".join(f"{m} no LLM | {m} LLM" for m in metrics) + " |"
    rows = [head, "|" + "---|" * (2 + 2 * len(metrics))]
    for name, a, b in [
        *((cat, plain["per_category"][cat], llm["per_category"][cat]) for cat in CATEGORIES),
        ("overall", plain["overall"], llm["overall"]),
    ]:
        cells = " | ".join(f"{a[m]:.4f} | {b[m]:.4f}" for m in metrics)
        rows.append(f"| {name} | {a['n']} | {cells} |")
    return "\n".join(rows)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m hermes_memory.bench.locomo",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--data", required=True, help="a LoCoMo-format JSON file")
    parser.add_argument("--k", type=int, nargs="+", default=[5, 10])
    parser.add_argument("--json", dest="json_out", help="write the results here")
    parser.add_argument("--limit-conversations", type=int, help="only the first N conversations")
    parser.add_argument("--embedder", default=None, help="override tier3.embedding_model (default: config)")
    parser.add_argument("--backend", default=None, help="override tier3.backend (default: config)")
    parser.add_argument(
        "--tier2-url",
        default=None,
        help="Tier 2 on this PostgreSQL database (each conversation in a schema of its own, dropped after)",
    )
    parser.add_argument(
        "--misses", type=int, default=0, help="print N missed questions per category, with what came back"
    )
    mode = parser.add_argument_group("LLM mode (config llm; off unless --llm-base-url is given)")
    mode.add_argument("--llm-base-url", help="an OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1")
    mode.add_argument("--llm-model", help="the model name the endpoint serves")
    mode.add_argument("--llm-api-key-env", help="NAME of the environment variable holding the API key")
    mode.add_argument("--llm-timeout-s", type=float, help="per request (default: config llm.timeout_s)")
    mode.add_argument(
        "--no-instance-extraction",
        action="store_true",
        help="no write-time instances (llm.instance_extraction: false)",
    )
    mode.add_argument(
        "--query-decomposition", action="store_true", help="split questions (llm.query_decomposition)"
    )
    mode.add_argument("--both-modes", action="store_true", help="run without the LLM too; print both")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    ks = sorted(set(args.k))
    if any(k < 1 for k in ks):
        parser.error("--k values must be >= 1")
    if bool(args.llm_base_url) != bool(args.llm_model):
        parser.error("--llm-base-url and --llm-model go together")
    llm_only = (
        args.llm_api_key_env,
        args.llm_timeout_s,
        args.no_instance_extraction,
        args.query_decomposition,
    )
    if not args.llm_base_url and (args.both_modes or any(x not in (None, False) for x in llm_only)):
        parser.error("the LLM options need --llm-base-url and --llm-model")
    try:
        data = json.loads(Path(args.data).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        print(f"error: cannot read {args.data}: {exc}", file=sys.stderr)
        return 2
    if not isinstance(data, list):
        print(f"error: {args.data} is not a LoCoMo file (expected a list of samples)", file=sys.stderr)
        return 2
    if args.limit_conversations:
        data = data[: args.limit_conversations]
    overrides: dict[str, Any] = {}
    if args.embedder:
        overrides["tier3.embedding_model"] = args.embedder
    if args.backend:
        overrides["tier3.backend"] = args.backend
    if args.tier2_url:
        overrides["tier2.url"] = args.tier2_url
    with_llm = {**overrides, **llm_overrides(args)}
    result: dict[str, Any]
    if args.both_modes:
        plain = run_mode(data, ks, overrides, args.misses, "no LLM")
        llm = run_mode(data, ks, with_llm, args.misses, "LLM")
        result = {"no_llm": plain, "llm": llm}
        print(side_by_side(plain, llm, ks), file=sys.stderr)
    else:
        result = run_mode(data, ks, with_llm, args.misses, "LLM" if args.llm_base_url else "no LLM")
    text = json.dumps(result, indent=2)
    print(text)
    if args.json_out:
        Path(args.json_out).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = [
    "CATEGORIES",
    "Answer",
    "Stats",
    "ask",
    "dia_by_episode",
    "dia_ids_of",
    "ingest",
    "llm_overrides",
    "main",
    "normalise_evidence",
    "parse_session_time",
    "print_misses",
    "run_conversation",
    "run_mode",
    "side_by_side",
    "summarise",
    "turn_text",
    "turns_of",
]
