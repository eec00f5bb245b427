"""Run the rule-based extractor over every LoCoMo turn and print throughput, coverage and a sample.

Usage: python bench/extraction_quality.py [--data PATH] [--sample 25] [--seed 7]

Only the turns are read (speaker, text, session date); observation / session_summary /
event_summary are never touched. Known entities are what the extractor itself found earlier in
the same conversation (seen at least twice), rebuilt at every session start, as the ingestion
worker would pass them from Tier 2.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from hermes_memory.extract import ExtractionResult, KnownEntities, KnownEntity, MessageInput, extract

DEFAULT_DATA = Path("/work/shared/bench/locomo_dev.json")


@dataclass(frozen=True)
class Turn:
    conversation: str
    dia_id: str
    message: MessageInput


def parse_session_time(value: str) -> datetime:
    """ "1:56 pm on 8 May, 2023" -> aware UTC datetime."""
    return datetime.strptime(value.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def load_sessions(path: Path) -> list[tuple[str, list[list[Turn]]]]:
    samples = json.loads(path.read_text(encoding="utf-8"))
    conversations: list[tuple[str, list[list[Turn]]]] = []
    for sample in samples:
        conv = sample["conversation"]
        a, b = conv["speaker_a"], conv["speaker_b"]
        numbers = sorted(int(k.split("_")[1]) for k in conv if k.startswith("session_") and k.count("_") == 1)
        sessions: list[list[Turn]] = []
        for n in numbers:
            turns = conv.get(f"session_{n}") or []
            when = conv.get(f"session_{n}_date_time")
            if not turns or not when:
                continue
            at = parse_session_time(when)
            sessions.append(
                [
                    Turn(
                        sample["sample_id"],
                        t["dia_id"],
                        MessageInput(
                            text=t["text"],
                            time=at,
                            speaker=t["speaker"],
                            role="user",
                            addressee=b if t["speaker"] == a else a,
                        ),
                    )
                    for t in turns
                ]
            )
        conversations.append((sample["sample_id"], sessions))
    return conversations


def describe(turn: Turn, result: ExtractionResult) -> str:
    lines = [f"[{turn.dia_id}] {turn.message.speaker}: {turn.message.text}"]
    if result.is_noise:
        lines.append(f"    noise ({result.noise_reason})")
    for e in result.entities:
        extra = f" owner={e.owner}" if e.owner else ""
        lines.append(f"    E {e.name} <{e.entity_type}>{' known' if e.known else ''}{extra}")
    for r in result.relations:
        lines.append(f"    R {r.subject} -{r.predicate}{'(NOT)' if r.negated else ''}-> {r.object}")
    for f in result.facts:
        when = f" @{f.when.label}" if f.when else ""
        lines.append(f"    F [{f.category} {f.salience:.2f}] {f.content}  ({f.predicate}: {f.object}){when}")
    for t in result.temporal:
        lines.append(f"    T '{t.text}' -> {t.label} ({t.granularity})")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--sample", type=int, default=25)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    results: list[tuple[Turn, ExtractionResult]] = []
    per_turn: list[float] = []
    cpu_started = time.process_time()
    for _, sessions in load_sessions(args.data):
        seen: Counter[tuple[str, str]] = Counter()
        for session in sessions:
            known = KnownEntities(KnownEntity(name, etype) for (name, etype), n in seen.items() if n >= 2)
            for turn in session:
                started = time.perf_counter()
                result = extract(turn.message, known)
                per_turn.append(time.perf_counter() - started)
                results.append((turn, result))
                for e in result.entities:
                    if not e.owner and e.entity_type != "concept":
                        seen[(e.name, e.entity_type)] += 1

    cpu = time.process_time() - cpu_started  # includes the bookkeeping around extract()
    elapsed = sum(per_turn)
    ranked = sorted(per_turn)
    n = len(results)
    noise = sum(r.is_noise for _, r in results)
    kinds = ("entities", "facts", "relations", "temporal")
    counts = {k: sum(len(getattr(r, k)) for _, r in results) for k in kinds}
    print(
        f"turns: {n}   wall in extract(): {elapsed:.2f} s   turns/s: {n / elapsed:.0f}   "
        f"mean {1000 * elapsed / n:.3f} ms   p50 {1000 * ranked[n // 2]:.3f} ms   "
        f"p95 {1000 * ranked[int(n * 0.95)]:.3f} ms   max {1000 * ranked[-1]:.2f} ms   "
        f"(process CPU for the loop {cpu:.2f} s; load average {os.getloadavg()[0]:.1f})"
    )
    print(f"noise: {noise} ({100 * noise / n:.1f}%)")
    print("per turn: " + "  ".join(f"{k} {v / n:.2f}" for k, v in counts.items()))
    facts = [f for _, r in results for f in r.facts]
    by_predicate = Counter(f.predicate for f in facts).most_common(20)
    print("facts by predicate: " + ", ".join(f"{p} {c}" for p, c in by_predicate))
    by_category = Counter(f.category for f in facts).most_common()
    print("facts by category: " + ", ".join(f"{p} {c}" for p, c in by_category))
    relations = [x for _, r in results for x in r.relations]
    print(
        "relations by predicate: "
        + ", ".join(f"{p} {c}" for p, c in Counter(x.predicate for x in relations).most_common(20))
    )
    entity_counts = Counter((e.name, e.entity_type) for _, r in results for e in r.entities)
    print("\ntop 30 entities:")
    for (name, etype), c in entity_counts.most_common(30):
        print(f"  {c:5d}  {name} <{etype}>")
    participants = {t.message.speaker for t, _ in results}
    others = Counter(
        (e.name, e.entity_type)
        for _, r in results
        for e in r.entities
        if e.name not in participants and not e.owner
    )
    print("\ntop 30 entities other than the participants and their relatives:")
    print("  " + ", ".join(f"{name} <{etype}> {c}" for (name, etype), c in others.most_common(30)))
    print(
        "\nentity types: "
        + ", ".join(
            f"{t} {c}"
            for t, c in Counter(e.entity_type for _, r in results for e in r.entities).most_common()
        )
    )

    rng = random.Random(args.seed)
    print(f"\nsample of {args.sample} turns (seed {args.seed}):")
    for turn, result in rng.sample(results, min(args.sample, n)):
        print(describe(turn, result))


if __name__ == "__main__":
    main()
