"""One-shot ``hermes -z`` with and without the provider, side by side in one run: wall time, peak RSS,
and whether a cold process's first prefetch recalls by meaning.

    python -m hermes_memory.bench.oneshot [--runs 3] [--breakdown] [--json]

Two fresh HERMES_HOMEs talk to one local fake LLM (127.0.0.1, a fixed answer, no tools called): one
with the provider installed and activated (``hermes-memory install --activate``, default settings),
one without a memory provider. Runs alternate between them (with, without, with, ...) so load on the
machine hits both alike. Peak RSS is the ``hermes`` process's own (``wait4``). Then the provider home
gets "My sister is called Ana and she lives in Porto." in one process and "Who are my siblings?" in
the next: the check is whether that cold process's first request to the model carried a
``<memory-context>`` block naming Ana (only meaning can link "siblings" to "sister"). ``--breakdown``
adds two more provider homes to the alternation, one with the hashing embedder (no model: what the
embedder costs) and one with Tier 3 off (no vector store either: what the rest of the provider costs).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from hermes_memory.bench._proc import Finished, run_measured
from hermes_memory.bench.fake_llm import FakeLLM, text_of

PROMPT = "Hello there"
SEED = "My sister is called Ana and she lives in Porto."
QUESTION = "Who are my siblings?"
REPLY = "Plain answer."
# The fake LLM answers every turn with REPLY and calls no tool.
ANSWER: dict[str, Any] = {"rules": [], "default": {"reply": REPLY}}
# The --breakdown homes: the provider with these nextlevel.yaml settings.
VARIANTS = {
    "hashing": "memory:\n  tier3:\n    embedding_model: hashing\n",
    "tier3-off": "memory:\n  tier3:\n    enabled: false\n",
}
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


def memory_block(request: dict[str, Any]) -> str | None:
    """The <memory-context> block Hermes attached to the last user message, or None."""
    users = [m for m in request.get("messages", []) if m.get("role") == "user"]
    text = text_of(users[-1].get("content")) if users else ""
    start = text.find("<memory-context>")
    return None if start < 0 else text[start:]


def _env(home: Path) -> dict[str, str]:
    # Bytecode as an installed package has it: with PYTHONDONTWRITEBYTECODE set, every "with" process
    # would compile hermes_memory from source (0.1-0.3 s) while Hermes' own modules come from .pyc.
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith("_API_KEY") and not k.startswith("OPENROUTER") and k != "PYTHONDONTWRITEBYTECODE"
    }
    env.update(HERMES_HOME=str(home), NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("TRANSFORMERS_OFFLINE", "1")
    return env


def _hermes(home: Path, message: str, timeout: float) -> Finished:
    done = run_measured(["hermes", "-z", message], env=_env(home), cwd=home, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"hermes -z {message!r} exited {done.returncode}:\n{done.stderr[-3000:]}")
    return done


def _make_home(root: Path, name: str, base_url: str, provider: bool) -> Path:
    home = root / name
    home.mkdir()
    (home / "config.yaml").write_text(CONFIG_YAML.format(base_url=base_url), encoding="utf-8")
    if provider:
        done = run_measured(
            ["hermes-memory", "install", "--hermes-home", str(home), "--activate"],
            env=_env(home),
            timeout=300,
        )
        if done.returncode != 0:
            raise RuntimeError(f"hermes-memory install failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return home


def oneshot_compare(runs: int = 3, timeout: float = 300.0, *, breakdown: bool = False) -> dict[str, Any]:
    """``hermes -z "Hello there"`` ``runs`` times with and without the provider (alternating; with
    ``breakdown`` also on the ``VARIANTS`` homes), then the cold-process meaning check. Returns
    medians, every run, and the check's outcome.

    Raises RuntimeError when a process fails, FileNotFoundError when ``hermes`` is not installed.
    """
    if runs < 1:
        raise ValueError(f"runs must be >= 1, got {runs}")
    with tempfile.TemporaryDirectory(prefix="hm-oneshot-") as tmp, FakeLLM(fixed=ANSWER) as llm:
        root = Path(tmp)
        with_home = _make_home(root, "with-provider", llm.base_url, provider=True)
        homes = {
            "with": with_home,
            "without": _make_home(root, "without-provider", llm.base_url, provider=False),
        }
        for name, settings in VARIANTS.items() if breakdown else ():
            homes[name] = _make_home(root, name, llm.base_url, provider=True)
            (homes[name] / "nextlevel.yaml").write_text(settings, encoding="utf-8")
        # One untimed process each first: Python's byte-code caches and the page cache warm up alike.
        for home in homes.values():
            _hermes(home, "Warm up.", timeout)
        rows: dict[str, list[Finished]] = {name: [] for name in homes}
        for _ in range(runs):
            for name, home in homes.items():
                rows[name].append(_hermes(home, PROMPT, timeout))
        _hermes(with_home, SEED, timeout)
        before = len(llm.chat_requests())
        asked = _hermes(with_home, QUESTION, timeout)
        chats = llm.chat_requests()
        first = chats[before] if len(chats) > before else None
        block = None if first is None else memory_block(first)
    out: dict[str, Any] = {"runs": runs, "prompt": PROMPT}
    for key, done in rows.items():
        out[key] = {
            "wall_s": round(statistics.median(d.wall_s for d in done), 2),
            "peak_rss_mb": round(statistics.median(d.peak_rss_mb for d in done), 1),
            "each_wall_s": [round(d.wall_s, 2) for d in done],
            "each_peak_rss_mb": [round(d.peak_rss_mb, 1) for d in done],
        }
    out["wall_ratio"] = round(out["with"]["wall_s"] / out["without"]["wall_s"], 2)
    out["extra_peak_rss_mb"] = round(out["with"]["peak_rss_mb"] - out["without"]["peak_rss_mb"], 1)
    out["cold_meaning"] = {
        "seed": SEED,
        "question": QUESTION,
        "block_attached": block is not None,
        "names_ana": block is not None and "Ana" in block,
        "wall_s": round(asked.wall_s, 2),
        "block": block,
    }
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m hermes_memory.bench.oneshot",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--breakdown", action="store_true", help="also: hashing embedder, Tier 3 off")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    result = oneshot_compare(args.runs, breakdown=args.breakdown)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    for key in ("with", "without", *(VARIANTS if args.breakdown else ())):
        row = result[key]
        print(
            f"{key}: wall {row['wall_s']} s, peak RSS {row['peak_rss_mb']} MB (runs {row['each_wall_s']} s)"
        )
    cold = result["cold_meaning"]
    print(
        f"ratio {result['wall_ratio']}x, +{result['extra_peak_rss_mb']} MB; {cold['question']!r} after "
        f"{cold['seed']!r}: block attached {cold['block_attached']}, names Ana {cold['names_ana']}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = [
    "ANSWER",
    "CONFIG_YAML",
    "PROMPT",
    "QUESTION",
    "REPLY",
    "SEED",
    "VARIANTS",
    "main",
    "memory_block",
    "oneshot_compare",
]
