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
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from hermes_memory.bench._proc import Finished, run_measured

PROMPT = "Hello there"
SEED = "My sister is called Ana and she lives in Porto."
QUESTION = "Who are my siblings?"
REPLY = "Plain answer."
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


class _Handler(BaseHTTPRequestHandler):
    server: FakeLLM

    def log_message(self, *args: Any) -> None:
        pass

    def _send_json(self, payload: dict[str, Any], status: int = 200) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/models"):
            model = {"id": "fake-model", "object": "model", "owned_by": "bench", "context_length": 128000}
            self._send_json({"object": "list", "data": [model]})
        else:
            self._send_json({"error": {"message": "not found"}}, 404)

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send_json({"error": {"message": "not found"}}, 404)
            return
        self.server.record(body)
        ident, created = f"chatcmpl-{time.monotonic_ns()}", int(time.time())
        usage = {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
        head = {"id": ident, "created": created, "model": "fake-model"}
        if not body.get("stream"):
            choice = {"index": 0, "message": {"role": "assistant", "content": REPLY}, "finish_reason": "stop"}
            self._send_json({**head, "object": "chat.completion", "choices": [choice], "usage": usage})
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()
        deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}, {"content": REPLY}, {}]
        for i, delta in enumerate(deltas):
            last = i == len(deltas) - 1
            event: dict[str, Any] = {
                **head,
                "object": "chat.completion.chunk",
                "choices": [{"index": 0, "delta": delta, "finish_reason": "stop" if last else None}],
            }
            if last:
                event["usage"] = usage
            self.wfile.write(b"data: " + json.dumps(event).encode() + b"\n\n")
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True


class FakeLLM(ThreadingHTTPServer):
    """An OpenAI-compatible chat endpoint on 127.0.0.1 that always answers ``REPLY`` and keeps the
    request bodies that offered tools (the agent's own turns)."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def record(self, body: dict[str, Any]) -> None:
        if body.get("tools"):
            with self._lock:
                self.requests.append(body)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def __enter__(self) -> FakeLLM:
        threading.Thread(target=self.serve_forever, name="fake-llm", daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
        self.server_close()


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content or "")


def memory_block(request: dict[str, Any]) -> str | None:
    """The <memory-context> block Hermes attached to the last user message, or None."""
    users = [m for m in request.get("messages", []) if m.get("role") == "user"]
    text = _text(users[-1].get("content")) if users else ""
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
    with tempfile.TemporaryDirectory(prefix="hm-oneshot-") as tmp, FakeLLM() as llm:
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
        before = len(llm.requests)
        asked = _hermes(with_home, QUESTION, timeout)
        first = llm.requests[before] if len(llm.requests) > before else None
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
    "CONFIG_YAML",
    "PROMPT",
    "QUESTION",
    "REPLY",
    "SEED",
    "VARIANTS",
    "FakeLLM",
    "main",
    "memory_block",
    "oneshot_compare",
]
