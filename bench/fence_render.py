"""What the read path's quoting costs a recall's render: ``render`` and ``hit_line`` over LoCoMo turns.

    python bench/fence_render.py [--rounds 200] [--hits 10]

Every turn of the LoCoMo dev conversations becomes a hit; each round renders every group of ``--hits``
of them (a recall's block) and formats each as a prefetch line (``hit_line``). Prints microseconds
per block and per line, in CPU time (the machine is shared): cold (the first pass, nothing cached)
and warm (median of the rounds, as a long-lived process that recalls the same turns again), and how
many lines quoting changed. Run it on two checkouts (``PYTHONPATH=<checkout>``) to compare them: it
uses whatever ``hermes_memory`` is imported.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from hermes_memory.recall.render import hit_line, render
from hermes_memory.records import Hit

DEFAULT_DATA = Path("/work/shared/bench/locomo_dev.json")


def locomo_hits(path: Path) -> list[Hit]:
    hits: list[Hit] = []
    for conversation in json.loads(path.read_text("utf-8")):
        turns = conversation["conversation"]
        for key, session in turns.items():
            if not key.startswith("session_") or not isinstance(session, list):
                continue
            for turn in session:
                hits.append(
                    Hit(
                        id=f"episode:{len(hits)}",
                        score=0.5,
                        text=turn["text"],
                        tier="tier2",
                        kind="episode",
                        timestamp=1_700_000_000.0 + len(hits) * 60,
                        source_ids=(str(len(hits)),),
                        metadata={"speaker": turn["speaker"], "session_id": key},
                    )
                )
    return hits


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--hits", type=int, default=10)
    args = parser.parse_args()
    hits = locomo_hits(Path(args.data))
    groups = [hits[i : i + args.hits] for i in range(0, len(hits), args.hits)]
    # Cold: each line rendered for the first time (no cache has it), as a recall of new turns.
    started = time.process_time()
    for group in groups:
        render(group)
    cold_block = (time.process_time() - started) / len(groups) * 1e6
    started = time.process_time()
    for hit in hits:
        hit_line(hit)
    cold_line = (time.process_time() - started) / len(hits) * 1e6
    block_us: list[float] = []
    line_us: list[float] = []
    for _ in range(args.rounds):
        started = time.process_time()
        for group in groups:
            render(group)
        block_us.append((time.process_time() - started) / len(groups) * 1e6)
        started = time.process_time()
        for hit in hits:
            hit_line(hit)
        line_us.append((time.process_time() - started) / len(hits) * 1e6)
    changed = sum("&lt;" in line or "[quoted]" in line for line in map(hit_line, hits))
    print(f"hits={len(hits)} blocks={len(groups)} rounds={args.rounds}")
    print(f"cold: render per block of {args.hits}: {cold_block:.1f} us; per line: {cold_line:.2f} us")
    print(f"warm: render per block of {args.hits}: median {statistics.median(block_us):.1f} us")
    print(f"warm: hit_line per line: median {statistics.median(line_us):.2f} us")
    print(f"lines quoting escaped or marked: {changed}")


if __name__ == "__main__":
    main()
