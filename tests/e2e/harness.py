"""Shared harness of the live-agent tests: a HERMES_HOME with the provider installed and its own fake
LLM, ``hermes -z`` processes run one after the other on it, and readers for what the model received.

Each ``Home`` has its own fake LLM on 127.0.0.1 that logs every request as JSON lines to
``<home>/llm_requests.jsonl`` and follows ``<home>/llm_script.json`` (``Home.script``; see fake_llm).
``Home.hermes(message)`` runs one ``hermes -z`` process (a new session) under the offline guard and
returns a ``Turn``: the chat requests of that process, the ``<memory-context>`` block of its first
request, the tool results the model got, the system prompt, and the wall time (measured, reported,
never asserted).

The provider runs with its default configuration (the local MiniLM embedder, the embedded Qdrant
vector store). The one change, ``prefetch_wait_ms: 3000``: a ``hermes -z`` process is a cold start and
this machine is shared, so the first prefetch of a process can miss the default 150 ms and an empty
block would make the assertions flaky. The wait is an upper bound (prefetch returns as soon as its
recall is done), not a delay.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import offline_guard
import pytest

import hermes_memory
from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.bench import fake_llm
from hermes_memory.cli import main as hermes_memory_cli
from hermes_memory.hermes.settings import hermes_profile, load_settings

HERE = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent
HERMES = BIN / "hermes"
HERMES_MEMORY = BIN / "hermes-memory"
# The directory hermes_memory is imported from here (a worktree, a checkout, site-packages).
PACKAGE_ROOT = Path(hermes_memory.__file__).resolve().parent.parent
SETTINGS = """\
provider:
  prefetch_wait_ms: 3000
"""
CONFIG_YAML = """\
# written by the e2e test; this comment must survive activation
model:
  default: fake-model
  provider: custom
  base_url: {base_url}
  api_key: sk-fake-local
  context_length: 128000  # no endpoint probing
memory:
  memory_enabled: true
  user_profile_enabled: true
"""
# Every `hermes -z` turn of this test run, for the checks that hold for every block.
ALL_TURNS: list[Turn] = []


def require_hermes() -> None:
    """Skip (fail on CI) the calling test module when hermes-agent is not installed."""
    try:
        import agent.memory_provider  # noqa: F401  (Hermes' package)
    except ImportError:
        installed = False
    else:
        installed = HERMES.exists()
    if installed:
        return
    if os.environ.get("CI"):
        pytest.fail("hermes-agent is not installed: the dev extra pins it for these tests", pytrace=False)
    pytest.skip("hermes-agent is not installed (pip install -e '.[dev]')", allow_module_level=True)


def env_for(home: Path, *extra_path: Path) -> dict[str, str]:
    """The environment of a process on ``home``: no API keys, the offline guard on PYTHONPATH, this
    venv's commands first on PATH."""
    env = {
        k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("OPENROUTER")
    }
    python_path = [str(p) for p in extra_path] + [str(HERE / "guard_site")]
    if env.get("PYTHONPATH"):
        python_path.append(env["PYTHONPATH"])
    env.update(
        HERMES_HOME=str(home),
        PYTHONPATH=os.pathsep.join(python_path),
        PATH=os.pathsep.join([str(BIN), env.get("PATH", "")]),
        E2E_GUARD_LOG=str(home / "refused.log"),
        NO_PROXY="127.0.0.1,localhost",
        no_proxy="127.0.0.1,localhost",
    )
    return env


def run(
    argv: list[str], home: Path, *extra_path: Path, timeout: float = 240, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        env={**env_for(home, *extra_path), **(env or {})},
        cwd=home,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def user_text(request: dict[str, Any]) -> str:
    users = [m for m in request["messages"] if m.get("role") == "user"]
    return fake_llm.text_of(users[-1]["content"])


# -- what the model received ---------------------------------------------------------------------
SYSTEM_NOTE = re.compile(r"^\[System note:[^\n]*\]\n*")


def block_of(request: dict[str, Any]) -> str | None:
    """The provider's text inside the <memory-context> fence Hermes appended to the last user
    message (without the fence and Hermes' system note), or None when nothing was attached."""
    fenced = fake_llm.split_user_text(user_text(request))[1]
    if fenced is None:
        return None
    inner = fenced[len(fake_llm.FENCE) :].strip("\n")
    inner = inner.removesuffix("</memory-context>").rstrip("\n")
    return SYSTEM_NOTE.sub("", inner, count=1)


def memory_lines(block: str | None) -> list[str]:
    """The memory lines of a block (C1: each starts with '- [')."""
    return [line for line in (block or "").splitlines() if line.startswith("- [")]


LINE = re.compile(
    r"^- \[(?P<when>\d{4}-\d{2}(?:-\d{2}(?: \d{2}:\d{2})?)?|undated)\] (?P<body>.+) \((?P<source>[^()]*)\)$"
)
DAY = re.compile(r"\[(\d{4})-(\d{2})(?:-(\d{2}))?(?: (\d{2}):(\d{2}))?\]")
ISO = re.compile(r"^(\d{4}-\d{2}-\d{2})(?:T(\d{2}):(\d{2}))?")


def source_of(line: str) -> str:
    """The source parenthesis at the end of a memory line ('' when there is none)."""
    if not line.endswith(")"):
        return ""
    depth = 0
    for i in range(len(line) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(line[i], 0)
        if depth == 0:
            return line[i + 1 : -1]
    return ""


def line_day(line: str) -> date | None:
    """The day a memory line is dated (None when undated). Reads '[YYYY-MM-DD HH:MM]', a day alone
    '[YYYY-MM-DD]' and a month alone '[YYYY-MM]' (its first day), so a date check fails for the date,
    not for the format."""
    found = DAY.match(line[2:]) if line.startswith("- ") else None
    if found is None:
        return None
    return date(int(found.group(1)), int(found.group(2)), int(found.group(3) or 1))


def hit_day(hit: dict[str, Any]) -> date | None:
    found = ISO.match(str(hit.get("date") or ""))
    return date.fromisoformat(found.group(1)) if found else None


def today() -> date:
    return datetime.now(UTC).date()


@dataclass
class Turn:
    """One `hermes -z` process: what it printed, how long it took, and what the model received."""

    message: str
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    requests: list[dict[str, Any]] = field(default_factory=list)

    @property
    def block(self) -> str | None:
        return block_of(self.requests[0]) if self.requests else None

    @property
    def lines(self) -> list[str]:
        return memory_lines(self.block)

    @property
    def system(self) -> str:
        return fake_llm.text_of(self.requests[0]["messages"][0]["content"]) if self.requests else ""

    @property
    def tool_results(self) -> list[str]:
        """Every tool result the model received in this process, in order."""
        if not self.requests:
            return []
        return [
            fake_llm.text_of(m.get("content"))
            for m in self.requests[-1]["messages"]
            if m.get("role") == "tool"
        ]

    def tool_json(self) -> list[dict[str, Any]]:
        return [json.loads(text) for text in self.tool_results]

    def calls(self) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
        """(tool name, arguments, parsed result) of every tool call the model made in this process,
        paired by tool_call_id."""
        if not self.requests:
            return []
        messages = self.requests[-1]["messages"]
        results = {
            m.get("tool_call_id"): fake_llm.text_of(m.get("content"))
            for m in messages
            if m.get("role") == "tool"
        }
        out = []
        for message in messages:
            for call in message.get("tool_calls") or []:
                result = results.get(call["id"])
                assert result is not None, f"no result for {call}"
                out.append(
                    (call["function"]["name"], json.loads(call["function"]["arguments"]), json.loads(result))
                )
        return out

    def hits(self) -> list[dict[str, Any]]:
        """Every result of every nextlevel_search in this process."""
        out: list[dict[str, Any]] = []
        for name, _, result in self.calls():
            if name == "nextlevel_search":
                out.extend(result.get("results") or [])
        return out


class Home:
    """A HERMES_HOME with the provider installed and activated, and its own fake LLM."""

    def __init__(self, root: Path, settings: str = SETTINGS):
        root.mkdir(parents=True, exist_ok=True)
        self.path = root / "hermes-home"
        self.path.mkdir()
        self.log = self.path / "llm_requests.jsonl"
        self.script_file = self.path / "llm_script.json"
        self.server = fake_llm.start(log=self.log, script=self.script_file)
        (self.path / "config.yaml").write_text(
            CONFIG_YAML.format(base_url=self.server.base_url), encoding="utf-8"
        )
        assert hermes_memory_cli(["install", "--hermes-home", str(self.path), "--activate"]) == 0
        (self.path / "nextlevel.yaml").write_text(settings, encoding="utf-8")
        self.turns: list[Turn] = []

    def script(
        self,
        rules: list[dict[str, Any]] | None = None,
        *,
        default: dict[str, Any] | None = None,
        after_tools: dict[str, Any] | None = None,
    ) -> None:
        """What the fake LLM answers from now on (see fake_llm)."""
        script = {
            "rules": rules or [],
            "default": default or {"status": True},
            "after_tools": after_tools or {"quote": True},
        }
        self.script_file.write_text(json.dumps(script), encoding="utf-8")

    def chat_requests(self) -> list[dict[str, Any]]:
        """Main-agent chat requests logged for this home (those that offer tools)."""
        return [
            r["body"]
            for r in fake_llm.read_log(self.log)
            if r["method"] == "POST" and r.get("body", {}).get("tools")
        ]

    def hermes(self, message: str, *, timeout: float = 240, env: dict[str, str] | None = None) -> Turn:
        """Run ``hermes -z message`` (one turn, its own process and session; ``env`` added to its
        environment) and return the Turn.

        Raises AssertionError when the process fails or anything tried to leave the machine.
        """
        before = len(self.chat_requests())
        started = time.monotonic()
        done = run([str(HERMES), "-z", message, "--toolsets", "memory"], self.path, timeout=timeout, env=env)
        seconds = time.monotonic() - started
        turn = Turn(message, done.returncode, done.stdout, done.stderr, round(seconds, 2))
        turn.requests = self.chat_requests()[before:]
        assert done.returncode == 0, (
            f"hermes -z {message!r} failed:\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
        )
        assert turn.requests, f"hermes -z {message!r} sent the model nothing:\n{done.stderr[-3000:]}"
        assert self.refused() == [], self.refused()
        self.turns.append(turn)
        ALL_TURNS.append(turn)
        return turn

    def cli(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """The hermes-memory command, as a user runs it (own process, this home in $HERMES_HOME)."""
        return run([str(HERMES_MEMORY), *args], self.path, timeout=timeout)

    def store(self) -> MemoryAPI:
        """The store with the settings Hermes uses (open only while no Hermes process runs)."""
        return MemoryAPI(load_settings(self.path).memory_config(str(self.path), hermes_profile(self.path)))

    def refused(self) -> list[tuple[str, str]]:
        return offline_guard.read_log(self.path / "refused.log")

    def stop(self) -> None:
        self.server.stop()


def home_fixture(
    tmp_path_factory: pytest.TempPathFactory, name: str, settings: str = SETTINGS
) -> Iterator[Home]:
    home = Home(tmp_path_factory.mktemp(name), settings)
    try:
        yield home
    finally:
        home.stop()


# -- store readers (after the processes ended) ---------------------------------------------------
def all_facts(api: MemoryAPI) -> list[dict[str, Any]]:
    """Every fact row, current, superseded and archived alike (read straight from SQLite: the API's
    queries show only what is believed now)."""
    conn = sqlite3.connect(f"file:{api.config.db_path}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        return [dict(row) for row in conn.execute("SELECT * FROM facts ORDER BY id")]
    finally:
        conn.close()


def all_episodes(api: MemoryAPI) -> list[dict[str, Any]]:
    """Every stored turn row (uuid, role, text, …), oldest first, read straight from SQLite: what a
    fact's ``source_episodes`` and a search hit's ``episode:<uuid>`` id point to."""
    conn = sqlite3.connect(f"file:{api.config.db_path}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        return [dict(row) for row in conn.execute("SELECT * FROM episodes ORDER BY id")]
    finally:
        conn.close()


def all_entities(api: MemoryAPI) -> list[dict[str, Any]]:
    found = api.entity_query(None, limit=1000)
    assert found["success"], found
    entities: list[dict[str, Any]] = found["data"]
    return entities


def all_episode_texts(api: MemoryAPI) -> list[str]:
    found = api.get_latest(count=1000)
    assert found["success"], found
    return [str(e.get("text", "")) for e in found["data"]]


def timings() -> str:
    """One line per `hermes -z` process of this run (for the report)."""
    return "\n".join(f"{t.seconds:6.2f}s  {t.message[:60]!r}" for t in ALL_TURNS)
