"""A soak as a user has it: 60 `hermes -z` processes on one home (each one message), some with long
assistant replies and some with tool results the reply echoes, while a second process keeps a core busy.

After it: every turn is stored; the embed queue never builds up: what one process leaves queued at its
exit (its own turn, when it exits before its worker embedded it) the next one shrinks (meaning search
keeps up with one-turn processes); no fact has the assistant as its subject;
and every <memory-context> block either has memory lines or says why not. The wall time of each process
is reported (E2E_TIMINGS), never asserted.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from harness import Home, all_facts, memory_lines, require_hermes

from hermes_memory.hermes.settings import hermes_profile, load_settings

require_hermes()
pytestmark = pytest.mark.slow

TURNS = 60
LONG = " ".join(
    f"Part {i} of the story: on that day we walked past the old harbour and talked about the weather."
    for i in range(24)
)
MESSAGES = [
    "I work at Siemens as a software engineer",
    "My sister Ana lives in Porto",
    "Where do I work now?",
    "Tell me a long story about my week",
    "Search your memory for my dog",
    "My dog Biscuit is a beagle",
    "I started learning Portuguese in May",
    "What do you know about Ana?",
    "Tell me a long story about Porto",
    "Hello there",
]
RULES: list[dict[str, Any]] = [
    {"match": "long story", "reply": LONG},
    {
        "match": "search your memory",
        "tool_calls": [{"name": "nextlevel_search", "arguments": {"query": "dog"}}],
    },
    {"match": "where do i work", "reply": "From memory: I work at Siemens as a software engineer."},
]
BUSY = "while True:\n    pass\n"


def _queued(db: Path) -> int:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return int(conn.execute("SELECT count(*) FROM embed_queue").fetchone()[0])
    finally:
        conn.close()


@pytest.fixture(scope="module")
def soak(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    home = Home(tmp_path_factory.mktemp("soak"))
    home.script(RULES, default={"status": True}, after_tools={"quote": True})
    db = load_settings(home.path).memory_config(str(home.path), hermes_profile(home.path)).db_path
    busy = subprocess.Popen([sys.executable, "-c", BUSY])  # a second CPU-busy process
    queue: list[int] = []
    try:
        for i in range(TURNS):
            home.hermes(f"{MESSAGES[i % len(MESSAGES)]} (day {i})")
            queue.append(_queued(db) if db.exists() else 0)
    finally:
        busy.kill()
        busy.wait()
        home.stop()
    with home.store() as api:
        assert api.flush(300)["success"]
        users = [e for e in api.get_latest(count=500)["data"] if e.get("role") == "user"]
        yield {"home": home, "queue": queue, "users": users, "facts": all_facts(api)}


def test_every_turn_is_stored(soak: dict[str, Any]) -> None:
    said = {str(e["text"]) for e in soak["users"]}
    missing = [i for i in range(TURNS) if not any(f"(day {i})" in text for text in said)]
    assert missing == [], missing


def test_the_embed_queue_left_at_one_exit_shrinks_by_the_next(soak: dict[str, Any]) -> None:
    # A process may exit before its worker embedded its own turn (a slow moment of the machine); the
    # next process embeds that while it runs. A backlog that two exits in a row leave is a queue that
    # does not keep up.
    queue = soak["queue"]
    kept = [
        (i, queue[i - 1], queue[i])
        for i in range(1, len(queue))
        if queue[i - 1] and queue[i] >= queue[i - 1]
    ]
    assert kept == [], f"queue after each process: {queue}"


def test_no_fact_has_the_assistant_as_its_subject(soak: dict[str, Any]) -> None:
    assistant = ("hermes", "the assistant")
    about = [f["content"] for f in soak["facts"] if (f.get("subject") or "").casefold() in assistant]
    assert about == [], about
    assert not [f["content"] for f in soak["facts"] if str(f["content"]).startswith("Hermes ")]


def test_every_block_has_memories_or_says_why_not(soak: dict[str, Any]) -> None:
    home: Home = soak["home"]
    silent = []
    for turn in home.turns:
        block = turn.block
        if block is None:
            continue
        says_why = "Could not answer" in block or "Meaning search is behind" in block
        if not memory_lines(block) and not says_why:
            silent.append((turn.message, block))
    assert silent == [], silent
