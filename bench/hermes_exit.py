"""How long a Hermes process waits for the nextlevel provider when it exits.

    python bench/hermes_exit.py                  # 5 fresh processes on one home, default settings
    python bench/hermes_exit.py --runs 3 --json

Each run is a fresh Python process, as ``hermes -z`` is: it initialises the provider the way Hermes
does (the default settings: the local MiniLM embedder and the embedded Qdrant engine), prefetches,
syncs one turn, then times ``on_session_end`` + ``shutdown`` (what ``AIAgent.shutdown_memory_provider``
calls) and the whole process. All runs share one home, so run N starts with what run N-1 left queued;
it reports whether run N-1's turn was stored (by keyword) when run N's initialize returned, and
whether run N's first prefetch (which waits at most ``prefetch_wait_ms``) showed it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

CHILD = textwrap.dedent(
    """
    import json, sys, time
    from hermes_memory.hermes.provider import NextLevelProvider

    home, run = sys.argv[1], int(sys.argv[2])
    provider = NextLevelProvider()
    started = time.monotonic()
    provider.initialize(f"run-{run}", hermes_home=home, platform="cli", agent_identity="default")
    initialize = time.monotonic() - started
    from hermes_memory.hermes import registry
    api = registry.find(home, "default").api
    previous = f"Rex{run - 1}"
    stored = run == 0 or any(previous in s.episode.text for s in api.tier2.episodes.search(previous))
    user = f"I adopted a beagle named Rex{run} last week."
    provider.on_turn_start(1, user)
    block = provider.prefetch("How is my beagle doing?")
    messages = [{"role": "user", "content": user}, {"role": "assistant", "content": "Lovely!"}]
    provider.sync_turn(user, "Lovely!", session_id=f"run-{run}", messages=messages)
    started = time.monotonic()
    provider.on_session_end(messages)
    session_end = time.monotonic() - started
    started = time.monotonic()
    provider.shutdown()
    shutdown = time.monotonic() - started
    print(json.dumps({"initialize_s": initialize, "on_session_end_s": session_end, "shutdown_s": shutdown,
                      "stored_previous": stored, "seen_previous": run == 0 or f"Rex{run - 1}" in block}))
    """
)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="print the runs as JSON")
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="hermes-exit-")) / "home"
    home.mkdir()
    rows = []
    for run in range(args.runs):
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-c", CHILD, str(home), str(run)], capture_output=True,
                              text=True, check=False, env=os.environ.copy())  # fmt: skip
        wall = time.monotonic() - started
        if done.returncode != 0:
            sys.exit(f"run {run} failed:\n{done.stderr[-3000:]}")
        row = {**json.loads(done.stdout.strip().splitlines()[-1]), "process_s": wall}
        rows.append(row)
        if not args.json:
            print(f"run {run}: on_session_end {row['on_session_end_s']:.2f} s, "
                  f"shutdown {row['shutdown_s']:.2f} s, process {wall:.2f} s, "
                  f"initialize {row['initialize_s']:.2f} s, "
                  f"previous turn stored at start: {row['stored_previous']}, "
                  f"in the first prefetch: {row['seen_previous']}")  # fmt: skip
    if args.json:
        print(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
