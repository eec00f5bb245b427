"""How long the command line takes as a person runs it: `hermes-memory --help` and the read commands on
a store of many turns, each in its own process (what a shell pays), as medians of ``--repeat`` runs and
as ratios to a bare `python -c pass` (this machine's speed varies 2.5x, the ratio much less).

    python bench/cli_speed.py [--home DIR] [--turns 10000] [--repeat 5] [--json OUT]

Without --home a temporary home is filled first (``hermes_memory.bench.fill``: synthetic one-message
turns through the public write path, hashing vectors, the embedded Qdrant store). Goals: `--help`
under 0.3 s, any read command under 1 s.

Each command runs as an installed package runs: with compiled bytecode (kept under a temporary
``PYTHONPYCACHEPREFIX``, written by the first, warming run), whatever ``PYTHONDONTWRITEBYTECODE`` says
(without it every run would recompile the package, which no installed copy does). Besides the wall
time the CPU time (user + system) is reported: on a shared machine it varies much less.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
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


def _run(argv: list[str], env: dict[str, str]) -> tuple[float, float] | None:
    """Wall and CPU seconds one run took; None when this version does not know the command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        argv, capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL, env=env
    )
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode == 2 and "unrecognized arguments" in done.stderr:
        return None
    if done.returncode not in (0, 1) or done.stderr.startswith("Error:"):  # a refusal is no timing
        raise RuntimeError(f"{argv} failed ({done.returncode}): {done.stderr[-800:]}")
    return seconds, cpu


def _medians(argv: list[str], env: dict[str, str], repeat: int) -> tuple[float, float]:
    runs = [_run(argv, env) or (0.0, 0.0) for _ in range(repeat)]
    return statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs)


def measure(home: Path, repeat: int, pycache: Path) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(pycache)
    python = [sys.executable]
    cli = [sys.executable, "-m", "hermes_memory.cli"]
    base, base_cpu = _medians([*python, "-c", "pass"], env, repeat)
    rows: dict[str, Any] = {
        "python -c pass": {"median_s": round(base, 3), "cpu_s": round(base_cpu, 3), "ratio": 1.0}
    }
    for label, args in COMMANDS:
        argv = [*cli, *(a.replace("{home}", str(home)) for a in args)]
        if _run(argv, env) is None:  # the first run compiles the bytecode and warms the page cache
            rows[label] = {"median_s": None, "cpu_s": None, "ratio": None}
            continue
        median, cpu = _medians(argv, env, repeat)
        rows[label] = {"median_s": round(median, 3), "cpu_s": round(cpu, 3), "ratio": round(median / base, 1)}
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--home", help="a filled Hermes home (default: fill a temporary one)")
    parser.add_argument("--turns", type=int, default=10_000, help="turns to fill a temporary home with")
    parser.add_argument("--repeat", type=int, default=5, help="runs per command (the median is kept)")
    parser.add_argument("--json", help="write the numbers here")
    args = parser.parse_args(argv)
    with (
        tempfile.TemporaryDirectory(prefix="hm-cli-speed-") as tmp,
        tempfile.TemporaryDirectory(prefix="hm-cli-pycache-") as pycache,
    ):
        home = Path(args.home) if args.home else Path(tmp)
        if not args.home:
            (home / "nextlevel.yaml").write_text(SETTINGS, encoding="utf-8")
            filled = fill_store(home, args.turns)
            took = filled.write_s + filled.embed_s
            print(f"filled {filled.turns} turns ({filled.chunks} chunks) in {took:.0f} s", flush=True)
        rows = measure(home, args.repeat, Path(pycache))
    width = max(len(k) for k in rows)
    for label, row in rows.items():
        if row["median_s"] is None:
            print(f"{label:<{width}}  (not a command of this version)")
            continue
        print(
            f"{label:<{width}}  {row['median_s']:6.3f} s  {row['ratio']:5.1f}x python -c pass"
            f"  (cpu {row['cpu_s']:.3f} s)"
        )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
