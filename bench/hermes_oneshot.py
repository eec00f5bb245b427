"""A one-shot ``hermes -z "Hello there"``: wall time and peak RSS with the nextlevel provider and without.

    python bench/hermes_oneshot.py                 # 5 runs each, alternating, on two fresh homes
    python bench/hermes_oneshot.py --runs 3 --json

Two HERMES_HOMEs, each with its own scripted fake LLM on 127.0.0.1 (tests/e2e/fake_llm.py; it answers
at once, so the numbers are Hermes' own cost plus the provider's): one with the provider installed
and activated in its default configuration (the local MiniLM embedder without torch, the embedded
Qdrant engine), one with Hermes' built-in memory only. The runs alternate (without, with, without,
...) so both see the same machine load. Each process runs under the e2e offline guard (loopback only)
with an import watch; per process: wall time, peak RSS (``wait4``'s ru_maxrss of that process), and
whether it imported torch, onnxruntime. Printed: median and worst of each, the ratio and difference
of the medians (targets: <= 1.3x the wall time, <= +250 MB peak RSS), and the load average before
and after. The "with" home keeps its store between runs, so run N starts with run N-1's turn queued.
``--breakdown`` adds two more homes with the provider, one with the hashing embedder (no model: what
the embedder costs) and one with Tier 3 off (no vector store either: what the rest costs).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
E2E = ROOT / "tests" / "e2e"
sys.path.insert(0, str(E2E))

import fake_llm  # noqa: E402  (the e2e tests' fake LLM)

BIN = Path(sys.executable).parent
CONFIG_YAML = """\
model:
  default: fake-model
  provider: custom
  base_url: {base_url}
  api_key: sk-fake-local
  context_length: 128000
memory:
  memory_enabled: true
  user_profile_enabled: true
"""
WATCHED = ("torch", "onnxruntime")


VARIANTS = {
    "hashing": "memory:\n  tier3:\n    embedding_model: hashing\n",
    "tier3-off": "memory:\n  tier3:\n    enabled: false\n",
}


def make_home(root: Path, name: str, provider: bool) -> tuple[Path, Any]:
    home = root / name
    home.mkdir()
    server = fake_llm.start(log=home / "llm_requests.jsonl")
    (home / "config.yaml").write_text(CONFIG_YAML.format(base_url=server.base_url), encoding="utf-8")
    if provider:
        done = subprocess.run(
            [str(BIN / "hermes-memory"), "install", "--hermes-home", str(home), "--activate"],
            capture_output=True, text=True, check=False, env=environment(home),
        )  # fmt: skip
        if done.returncode != 0:
            sys.exit(f"hermes-memory install failed:\n{done.stdout}\n{done.stderr}")
    return home, server


def environment(home: Path) -> dict[str, str]:
    # Bytecode as an installed package has it: with PYTHONDONTWRITEBYTECODE set, every "with" process
    # compiled hermes_memory from source (~0.1-0.3 s here) while Hermes' own modules came from .pyc.
    env = {
        k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "PYTHONDONTWRITEBYTECODE"
    }
    paths = [str(E2E / "guard_site"), str(ROOT), env.get("PYTHONPATH", "")]
    env.update(
        HERMES_HOME=str(home),
        PYTHONPATH=os.pathsep.join(p for p in paths if p),
        PATH=os.pathsep.join([str(BIN), env.get("PATH", "")]),
        NO_PROXY="127.0.0.1,localhost",
        no_proxy="127.0.0.1,localhost",
        E2E_GUARD_LOG=str(home / "refused.log"),
        E2E_IMPORT_LOG=str(home / "imports.log"),
    )
    return env


def one_shot(home: Path, message: str) -> dict[str, Any]:
    """Run ``hermes -z message`` once; its wall time, peak RSS and watched imports."""
    imports = home / "imports.log"
    imports.unlink(missing_ok=True)
    started = time.monotonic()
    proc = subprocess.Popen(
        [str(BIN / "hermes"), "-z", message], cwd=home, env=environment(home),
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    # wait4 gives this child's own rusage; pipes are small here (one short answer) so no deadlock
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - started
    out, err = proc.stdout.read(), proc.stderr.read()  # type: ignore[union-attr]
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"hermes -z failed in {home}:\n{out.decode()[-2000:]}\n{err.decode()[-3000:]}")
    refused = home / "refused.log"
    if refused.exists() and refused.read_text().strip():
        sys.exit(f"something tried to leave the machine: {refused.read_text()}")
    seen = set(imports.read_text().split()) if imports.exists() else set()
    return {"wall_s": wall, "peak_rss_mb": usage.ru_maxrss / 1024, **{m: m in seen for m in WATCHED}}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=5, help="processes per home")
    parser.add_argument("--message", default="Hello there")
    parser.add_argument("--json", action="store_true", help="print every run as JSON too")
    parser.add_argument("--breakdown", action="store_true", help="also: hashing embedder, Tier 3 off")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="hermes-oneshot-"))
    homes = {"without": make_home(root, "without", False), "with": make_home(root, "with", True)}
    for name, settings in VARIANTS.items() if args.breakdown else ():
        homes[name] = make_home(root, name, True)
        (homes[name][0] / "nextlevel.yaml").write_text(settings, encoding="utf-8")
    load_before = os.getloadavg()
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in homes}
    try:
        for _ in range(args.runs):
            for name in homes:
                runs[name].append(one_shot(homes[name][0], args.message))
    finally:
        for _, server in homes.values():
            server.stop()
    load_after = os.getloadavg()

    print(
        f"load average before {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}, "
        f"after {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f} ({os.cpu_count()} cores)"
    )
    print(f"hermes -z {args.message!r}, {args.runs} processes each, alternating")
    print(f"{'provider':<10} {'wall p50 s':>10} {'wall max s':>10} {'peak RSS p50 MB':>16} {'max MB':>7} "
          f"{'torch':>6} {'onnxruntime':>11}")  # fmt: skip
    medians = {}
    for name, rows in runs.items():
        walls = [r["wall_s"] for r in rows]
        rss = [r["peak_rss_mb"] for r in rows]
        medians[name] = (statistics.median(walls), statistics.median(rss))
        torch = "yes" if any(r["torch"] for r in rows) else "no"
        ort = "yes" if any(r["onnxruntime"] for r in rows) else "no"
        print(f"{name:<10} {medians[name][0]:>10.2f} {max(walls):>10.2f} {medians[name][1]:>16.0f} "
              f"{max(rss):>7.0f} {torch:>6} {ort:>11}")  # fmt: skip
    ratio = medians["with"][0] / medians["without"][0]
    extra = medians["with"][1] - medians["without"][1]
    print(
        f"with / without: {ratio:.2f}x wall time (target <= 1.3x), "
        f"{extra:+.0f} MB peak RSS (target <= +250 MB)"
    )
    if args.json:
        print(json.dumps({"load_average": [load_before, load_after], "runs": runs}))


if __name__ == "__main__":
    main()
