"""Fill a store with many turns quickly, and measure what a big store costs when nothing happens.

    python -m hermes_memory.bench.fill --home DIR [--turns 100000] [--embedder hashing]
                                       [--data locomo.json] [--no-vectors] [--idle-cycles 200] [--json OUT]

Every turn goes in through the public write path (``remember_message``, then ``ingest_pending``: the
ingestor's batched transactions, rule-based extraction included) in rounds of ``round_turns``, so the
inbox and queue stay small. Then the embed queue is drained with the chosen embedder (``hashing`` by
default: the vectors are not meaningful, but the store holds as many of them, searched the same way,
as a real one; the write path is what is measured). 100k turns: ~258k chunks, ~167k distinct texts;
on 2 busy cores the write path took ~11 min and the hashing embeddings 1.5 min, in < 50 MB RSS (the
default ``tier3.engine_min_vectors`` keeps the engine, and its index build, closed). Turns are one
message each (as the LoCoMo harness remembers them): synthetic ones from a seeded generator, or the
turns of a LoCoMo file cycled, each round under its own session ids and speaker names.

``fill_store`` returns the timings and the process's peak RSS; ``idle_cycle`` opens the filled store
and times the background worker's step when both queues are empty (what an idle worker pays each
second), with the SQL statements it ran.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

_NAMES = (
    "Ana Ben Carla Dmitri Elif Farid Greta Hugo Ines Jonas Kenji Lena Mateo Nadia Omar Priya Quinn Rosa "
    "Sami Tara Ugo Vera Wen Xavi Yara Zoe Aldo Bea Cyril Dana Emil Fay Gil Hana Ivo Jana Kai Lou Mira Nils"
).split()
_PLACES = "Boston Denver Lisbon Osaka Berlin Nairobi Quito Oslo Lyon Austin Porto Krakow Perth Seoul".split()
_THINGS = (
    "pottery|the violin|rock climbing|sourdough baking|chess|salsa dancing|birdwatching|painting|"
    "running marathons|gardening|astronomy|woodworking|photography|knitting|surfing"
).split("|")
_PETS = "dog|cat|parrot|rabbit|turtle|hamster".split("|")
_JOBS = "Globex|Initech|Umbrella Labs|Stark Works|Wayne Foods|Acme Bikes|Hooli|Vandelay Imports".split("|")
_TEMPLATES = (
    "I moved to {place} last month and I love the food there.",
    "My sister {other} started working at {job} this week.",
    "We adopted a {pet} named {other2} on Saturday.",
    "I've been getting into {thing} lately, it's really relaxing.",
    "Yesterday I went to {place} with {other} for a concert.",
    "{other} gave me a book about {thing} for my birthday.",
    "That sounds great! How long have you been doing that?",
    "I'm planning a trip to {place} in March with my family.",
    "Thanks, that's really kind of you to say.",
    "My favourite thing about {thing} is how calm it makes me feel.",
    "I used to live in {place} before I got the job at {job}.",
    "Our {pet} keeps stealing socks, it's hilarious.",
    "I finally finished the {thing} course I told you about!",
    "Did you ever try {thing}? I think you would like it.",
)


@dataclass
class FillReport:
    turns: int
    embedder: str
    backend: str
    source: str
    write_s: float = 0.0  # queueing and storing every turn (extraction included), no embedding
    embed_s: float = 0.0  # draining the embed queue (embedding + vector writes)
    close_s: float = 0.0  # closing the store (the vector engine's index build, if any)
    chunks: int = 0
    facts: int = 0
    entities: int = 0
    peak_rss_mb: float = 0.0
    rounds: list[float] = field(default_factory=list)  # turns/s of each round (the write path)

    @property
    def write_turns_per_s(self) -> float:
        return self.turns / self.write_s if self.write_s else 0.0

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["write_turns_per_s"] = round(self.write_turns_per_s, 1)
        return out


Turn = tuple[str, str, str, datetime]  # text, speaker, session id, time


def synthetic_turns(count: int, *, seed: int = 13, per_session: int = 40) -> Iterator[Turn]:
    """(text, speaker, session id, time) of ``count`` generated one-message turns, deterministic."""
    rng = random.Random(seed)
    start = datetime(2023, 1, 1, tzinfo=UTC)
    speakers = ("", "")
    for index in range(count):
        session = index // per_session
        if index % per_session == 0:
            speakers = tuple(rng.sample(_NAMES, 2))  # type: ignore[assignment]
        speaker = speakers[index % 2]
        text = rng.choice(_TEMPLATES).format(
            place=rng.choice(_PLACES), other=rng.choice(_NAMES), other2=rng.choice(_NAMES),
            job=rng.choice(_JOBS), thing=rng.choice(_THINGS), pet=rng.choice(_PETS),
        )  # fmt: skip
        when = start + timedelta(hours=6 * session, minutes=index % per_session)
        yield text, speaker, f"fill-{session}", when


def locomo_turns(path: str | Path, count: int) -> Iterator[Turn]:
    """(text, speaker, session id, time) of the LoCoMo file's turns cycled up to ``count``; round r
    gets its own session ids, speaker names from a fixed list and times shifted by r years."""
    from hermes_memory.bench.locomo import turn_text, turns_of

    samples = json.loads(Path(path).read_text(encoding="utf-8"))
    source = [
        (turn_text(turn), str(turn.get("speaker") or ""), f"{sample['sample_id']}-{session}", when)
        for sample in samples
        for when, session, turn in turns_of(sample["conversation"])
        if turn_text(turn)
    ]
    if not source:
        raise ValueError(f"{path} holds no LoCoMo turns")
    for index in range(count):
        rnd, (text, speaker, session, when) = divmod(index, len(source))[0], source[index % len(source)]
        name = speaker if rnd == 0 else f"{speaker} {_NAMES[rnd % len(_NAMES)]}"
        yield text, name, f"r{rnd}-{session}", when.replace(year=when.year + rnd)


def fill_store(
    home: str | Path,
    turns: int,
    *,
    embedder: str = "hashing",
    backend: str = "qdrant",
    data: str | Path | None = None,
    vectors: bool = True,
    round_turns: int = 2000,
    progress: Callable[[str, int, int], None] | None = None,
) -> FillReport:
    """Remember ``turns`` one-message turns into the store under ``home`` and drain their embeddings
    (unless ``vectors`` is False); returns the timings. Raises RuntimeError when a write fails."""
    from hermes_memory.api.memory_api import MemoryAPI

    if turns <= 0:
        raise ValueError(f"turns must be > 0, got {turns}")
    report = FillReport(turns, embedder, backend, "synthetic" if data is None else str(data))
    source = synthetic_turns(turns) if data is None else locomo_turns(data, turns)
    api = MemoryAPI(hermes_home=str(home), actor="fill", **_tier3(embedder, backend))
    try:
        done = 0
        while done < turns:
            started = time.perf_counter()
            size = min(round_turns, turns - done)
            for _ in range(size):
                text, speaker, session, when = next(source)
                env = api.remember_message(text, session, when, speaker=speaker or None)
                if not env["success"]:
                    raise RuntimeError(f"remember failed: {env['error']}")
            env = api.ingest_pending(timeout=None)
            if not env["success"] or env["data"]["pending"]["turns"]:
                raise RuntimeError(f"ingest failed: {env}")
            elapsed = time.perf_counter() - started
            report.write_s += elapsed
            report.rounds.append(round(size / elapsed, 1))
            done += size
            if progress is not None:
                progress("write", done, turns)
        if vectors:
            started = time.perf_counter()
            env = api.flush(timeout=None)
            if not env["success"] or not env["data"]["drained"]:
                raise RuntimeError(f"embedding failed: {env}")
            report.embed_s = time.perf_counter() - started
            if progress is not None:
                progress("embed", turns, turns)
        admin = api.tier2.admin()
        report.chunks = admin.chunks.count()
        report.facts = admin.facts.count()
        report.entities = admin.entities.count()
    finally:
        started = time.perf_counter()
        api.close()
        report.close_s = time.perf_counter() - started
    report.peak_rss_mb = peak_rss_mb()
    return report


def idle_cycle(
    home: str | Path, *, cycles: int = 200, embedder: str = "hashing", backend: str = "qdrant"
) -> dict[str, Any]:
    """Open the store at ``home`` and time the background worker's step with nothing queued: the
    median and p95 in ms over ``cycles`` steps, and the SQL statements one step runs."""
    from hermes_memory.api.memory_api import MemoryAPI

    with MemoryAPI(hermes_home=str(home), actor="fill", **_tier3(embedder, backend)) as api:
        pending = api.pending()["data"]
        if pending["turns"] or pending["embeddings"]:
            raise RuntimeError(f"the store at {home} is not idle: {pending}")
        api.core.ingest.drain_once()  # first step: opens what a running worker already has open
        statements: list[str] = []
        conn = api.tier2.db._conn  # type: ignore[attr-defined]  # SQLite's trace hook: this bench is SQLite's
        conn.set_trace_callback(statements.append)
        api.core.ingest.drain_once()
        conn.set_trace_callback(None)
        times = []
        for _ in range(cycles):
            started = time.perf_counter()
            busy = api.core.ingest.drain_once()
            times.append((time.perf_counter() - started) * 1000.0)
            if busy:
                raise RuntimeError("the idle worker step wrote something")
        times.sort()
        return {
            "cycles": cycles,
            "p50_ms": round(statistics.median(times), 3),
            "p95_ms": round(times[int(0.95 * (len(times) - 1))], 3),
            "max_ms": round(times[-1], 3),
            "statements": [s for s in statements if s.strip().upper().startswith(("SELECT", "WITH"))],
            "peak_rss_mb": peak_rss_mb(),
        }


def peak_rss_mb() -> float:
    """The process's peak resident set size so far, in MB (Linux reports KiB)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1)


def _tier3(embedder: str, backend: str) -> dict[str, Any]:
    return {"tier3.embedding_model": embedder, "tier3.backend": backend}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--home", required=True, help="the Hermes home to fill (created if missing)")
    parser.add_argument("--turns", type=int, default=100_000)
    parser.add_argument("--embedder", default="hashing", help="tier3.embedding_model (default hashing)")
    parser.add_argument("--backend", default="qdrant", help="tier3.backend (default qdrant)")
    parser.add_argument("--data", default=None, help="a LoCoMo JSON file to cycle (default: synthetic turns)")
    parser.add_argument("--no-vectors", action="store_true", help="leave the embed queue undrained")
    parser.add_argument("--idle-cycles", type=int, default=0, help="then time this many idle worker steps")
    parser.add_argument("--json", default=None, help="write the report here as JSON")
    args = parser.parse_args(argv)
    Path(args.home).mkdir(parents=True, exist_ok=True)

    def progress(stage: str, done: int, total: int) -> None:
        print(f"{stage}: {done}/{total} (peak RSS {peak_rss_mb()} MB)", file=sys.stderr, flush=True)

    report = fill_store(
        args.home, args.turns, embedder=args.embedder, backend=args.backend, data=args.data,
        vectors=not args.no_vectors, progress=progress,
    )  # fmt: skip
    out: dict[str, Any] = {"fill": report.to_dict()}
    print(
        f"filled {report.turns} turns: write path {report.write_turns_per_s:.0f} turns/s "
        f"({report.write_s:.1f} s, embedder {report.embedder} not included), embed {report.embed_s:.1f} s, "
        f"close {report.close_s:.1f} s; {report.chunks} chunks, {report.facts} facts, "
        f"{report.entities} entities; peak RSS {report.peak_rss_mb} MB"
    )
    if args.idle_cycles and not args.no_vectors:
        idle = idle_cycle(args.home, cycles=args.idle_cycles, embedder=args.embedder, backend=args.backend)
        out["idle"] = idle
        print(
            f"idle worker step: p50 {idle['p50_ms']} ms, p95 {idle['p95_ms']} ms, "
            f"{len(idle['statements'])} SELECTs: {idle['statements']}"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = [
    "FillReport",
    "Turn",
    "fill_store",
    "idle_cycle",
    "locomo_turns",
    "main",
    "peak_rss_mb",
    "synthetic_turns",
]
