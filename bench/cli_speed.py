"""How long the command line takes as a person runs it: `hermes-memory --help` and the read commands on
a store of many turns, each in its own process (what a shell pays), as medians of ``--repeat`` runs and
as ratios to a bare `python -c pass` (this machine's speed varies 2.5x, the ratio much less).

    python bench/cli_speed.py [--home DIR] [--turns 10000] [--repeat 5] [--json OUT]

Without --home a temporary home is filled first (``hermes_memory.bench.fill``: synthetic one-message
turns through the public write path, hashing vectors, the embedded Qdrant store). Goals: `--help`
under 0.3 s, any read command under 1 s.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from hermes_memory.bench.fill import fill_store

SETTINGS = "memory:\n  tier3:\n    embedding_model: hashing\n    backend: qdrant\n"
# (label, argv after `hermes-memory`; "{home}" is the home)
COMMANDS: list[tuple[str, list[str]]] = [
    ("--help", ["--help"]),
    ("--version", ["--version"]),
    ("stats", ["stats", "--home", "{home}"]),
    ("latest", ["latest", "--count", "5", "--home", "{home}"]),
    ("history user", ["history", "user", "--home", "{home}"]),
    ("fact query", ["fact", "query", "Lisbon", "--limit", "5", "--home", "{home}"]),
    ("entity query", ["entity", "query", "Ana", "--home", "{home}"]),
    ("timeline query", ["timeline", "query", "--limit", "5", "--home", "{home}"]),
    ("recall", ["recall", "Where does Ana live?", "--tiers", "tier1", "tier2", "--home", "{home}"]),
]


def _run(argv: list[str]) -> float | None:
    """Seconds one run took; None when this version does not know the command (usage error)."""
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL)
    seconds = time.perf_counter() - started
    if done.returncode == 2 and "unrecognized arguments" in done.stderr:
        return None
    if done.returncode not in (0, 1):
        raise RuntimeError(f"{argv} failed ({done.returncode}): {done.stderr[-800:]}")
    return seconds


def measure(home: Path, repeat: int) -> dict[str, Any]:
    python = [sys.executable]
    cli = [sys.executable, "-m", "hermes_memory.cli"]
    base = statistics.median(_run([*python, "-c", "pass"]) or 0.0 for _ in range(repeat))
    rows: dict[str, Any] = {"python -c pass": {"median_s": round(base, 3), "ratio": 1.0}}
    for label, args in COMMANDS:
        argv = [*cli, *(a.replace("{home}", str(home)) for a in args)]
        if _run(argv) is None:  # the first run warms the page cache
            rows[label] = {"median_s": None, "ratio": None}
            continue
        median = statistics.median(_run(argv) or 0.0 for _ in range(repeat))
        rows[label] = {"median_s": round(median, 3), "ratio": round(median / base, 1)}
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--home", help="a filled Hermes home (default: fill a temporary one)")
    parser.add_argument("--turns", type=int, default=10_000, help="turns to fill a temporary home with")
    parser.add_argument("--repeat", type=int, default=5, help="runs per command (the median is kept)")
    parser.add_argument("--json", help="write the numbers here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="hm-cli-speed-") as tmp:
        home = Path(args.home) if args.home else Path(tmp)
        if not args.home:
            (home / "nextlevel.yaml").write_text(SETTINGS, encoding="utf-8")
            filled = fill_store(home, args.turns)
            took = filled.write_s + filled.embed_s
            print(f"filled {filled.turns} turns ({filled.chunks} chunks) in {took:.0f} s", flush=True)
        rows = measure(home, args.repeat)
    width = max(len(k) for k in rows)
    for label, row in rows.items():
        if row["median_s"] is None:
            print(f"{label:<{width}}  (not a command of this version)")
            continue
        print(f"{label:<{width}}  {row['median_s']:6.3f} s  {row['ratio']:5.1f}x python -c pass")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
