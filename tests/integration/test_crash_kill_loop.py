"""Crash safety under real kills: a child process remembers a known sequence of turns (background worker
ingesting, embedded Qdrant engine, hashing embedder) and is SIGKILLed at random points, many times.

Each child resumes the way a real caller would: it re-sends every turn it never got a success for (its
own record of successes is an append-only file written after each successful ``remember_turn``). Kills
are aimed at the phases of a child's life — opening the store, queue inserts (with the worker ingesting
turns and writing vectors meanwhile), ``flush`` (ingestion transactions and embedding / vector upserts)
and ``close`` (worker stop, graph save, vector store flush) — each after a random delay from a seeded
RNG (the seed is printed; ``HM_KILL_SEED`` replays a run).

After every kill, cheap SQL checks: no acknowledged turn is lost, no turn/chunk/fact is written twice.
At the end: every turn exactly once, queues empty, a vector for every chunk and entity, the same
knowledge as an uninterrupted run, and ``doctor()`` finds nothing to report.

Children are forked from a small "zygote" process that imported hermes-memory once, so a restart costs
milliseconds instead of a Python start-up; the zygote is a plain subprocess (the test process forks
nothing).
"""

from __future__ import annotations

import importlib.util
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path
from typing import IO, Any

import pytest
from store_state import knowledge

from hermes_memory import MemoryAPI
from hermes_memory.config import load_config
from hermes_memory.tier2.turn_inbox import TurnInbox, inbox_path

TOTAL_TURNS = 240
TURNS_PER_RUN = 5  # small, so turns are still left to send when the last kill lands
KILLS = 30  # children are started with a kill scheduled until this many died by SIGKILL
MIN_KILLS = 25
MAX_RUNS = 150  # a bound on the loop (a kill that lands after the child finished is no kill)
PHASES = ("open", "insert", "insert", "flush", "flush", "close")
# Random kill delay after a phase marker, per phase (seconds): roughly each phase's duration, so some
# kills land late in the phase, some early, and a few after the child already moved on.
DELAY = {"open": 0.1, "insert": 0.06, "flush": 0.25, "close": 0.1}
# Pause between a child's turns. A run aimed at the inserts paces them further apart, so the phase outlasts
# its kill delay even where a turn is remembered in a millisecond (else every such kill lands in the flush).
PACE = 0.003
INSERT_PACE = 0.02
# default backend: embedded Qdrant, opened from the first vector (a small store would search exactly
# and never open it; the engine's catch-up from Tier 2 is what the kills must not break)
OVERRIDES: dict[str, Any] = {"tier3.embedding_model": "hashing", "tier3.engine_min_vectors": 0}

CHILD_CODE = textwrap.dedent(
    """
    from __future__ import annotations
    import json, os, sys, time
    import qdrant_edge  # noqa: F401  (preloaded once in the zygote)
    from hermes_memory import MemoryAPI

    PEOPLE = ["Lena", "Marco", "Priya", "Tomas", "Aiko", "Jonas", "Sofia", "Ravi"]
    CITIES = ["Denver", "Boston", "Lisbon", "Osaka", "Austin", "Berlin"]
    ORGS = ["Globex", "Initech", "Umbrella", "Hooli"]

    def turn(i: int) -> tuple[str, str]:
        p, c, o = PEOPLE[i % 8], CITIES[(i // 8) % 6], ORGS[i % 4]
        user = [
            f"My friend {p} moved to {c} last month.",
            f"{p} works at {o} now and likes hiking.",
            f"I adopted a puppy named Rex{i}.",
            f"Yesterday I visited {c} with {p}.",
        ][i % 4]
        return f"{user} (note {i})", f"Thanks for telling me about {p}, turn {i}."

    def acked(path: str) -> int:
        try:
            with open(path) as fh:
                lines = [ln for ln in fh.read().split("\\n")[:-1]]
        except FileNotFoundError:
            return 0
        assert [int(x) for x in lines] == list(range(len(lines))), lines
        return len(lines)

    def run_child(home: str, markers: str, acks: str, per_run: int, total: int, pace: float) -> None:
        mfd = os.open(markers, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        def mark(text: str) -> None:
            os.write(mfd, (text + "\\n").encode())
        def fail(what: str, env: dict) -> None:
            mark(f"error {what}: {env['meta'].get('error_type')}: {env['error']}")
            os._exit(3)
        mark("open")
        api = MemoryAPI(
            hermes_home=home, background=True,
            **{"tier3.embedding_model": "hashing", "tier3.engine_min_vectors": 0},
        )
        start = acked(acks)
        afd = os.open(acks, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        mark("insert")
        for i in range(start, min(start + per_run, total)):
            user, assistant = turn(i)
            env = api.remember_turn(user, assistant, "s1", 1_683_540_000.0 + i * 600,
                                    user_name="Caroline", assistant_name="Bot", turn_id=f"turn-{i:04d}")
            if not env["success"]:
                fail("remember_turn", env)
            os.write(afd, f"{i}\\n".encode())  # the caller's record: this turn got its success
            time.sleep(pace)
        mark("flush")
        env = api.flush(60)
        if not env["success"] or not env["data"]["drained"]:
            fail("flush", env)
        mark("close")
        api.close()
        mark("done")

    def zygote() -> None:
        # Reads one JSON command per line; forks a child per "spawn", reaps it on "wait".
        for line in sys.stdin:
            cmd = json.loads(line)
            if cmd["op"] == "spawn":
                pid = os.fork()
                if pid == 0:
                    code = 0
                    try:
                        run_child(*cmd["args"])
                    except BaseException as exc:  # reported through the marker file, then exit 4
                        with open(cmd["args"][1], "a") as fh:
                            fh.write(f"error raised {type(exc).__name__}: {exc}\\n")
                        code = 4
                    os._exit(code)
                print(json.dumps({"pid": pid}), flush=True)
            elif cmd["op"] == "wait":
                _, status = os.waitpid(cmd["pid"], 0)
                print(json.dumps({"code": os.waitstatus_to_exitcode(status)}), flush=True)

    if __name__ == "__main__":
        zygote()
    """
)


class Zygote:
    """A subprocess that imported hermes-memory once and forks the children."""

    def __init__(self, script: Path):
        env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
        self.proc = subprocess.Popen(
            [sys.executable, str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
        )

    def _ask(self, cmd: dict[str, Any]) -> dict[str, Any]:
        stdin: IO[str] | None = self.proc.stdin
        stdout: IO[str] | None = self.proc.stdout
        assert stdin is not None and stdout is not None
        stdin.write(json.dumps(cmd) + "\n")
        stdin.flush()
        line = stdout.readline()
        assert line, "the zygote died"
        reply: dict[str, Any] = json.loads(line)
        return reply

    def spawn(self, *args: Any) -> int:
        return int(self._ask({"op": "spawn", "args": list(args)})["pid"])

    def wait(self, pid: int) -> int:
        return int(self._ask({"op": "wait", "pid": pid})["code"])

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(30)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def _markers(path: Path) -> list[str]:
    try:
        return path.read_text().splitlines()
    except FileNotFoundError:
        return []


def _wait_for(path: Path, phase: str, timeout: float = 30.0) -> bool:
    """Poll the child's marker file until ``phase`` (or "done"/an error) appears; True if ``phase`` did."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        seen = _markers(path)
        if phase in seen:
            return True
        if "done" in seen or any(m.startswith("error") for m in seen):
            return False
        time.sleep(0.002)
    raise AssertionError(f"child never reached {phase!r}: {_markers(path)}")


def _acked(path: Path) -> int:
    try:
        return len(path.read_text().split("\n")[:-1])
    except FileNotFoundError:
        return 0


def _in_inbox(db: Path) -> set[str]:
    """Turn keys committed to the turn inbox and not yet moved into the queue."""
    path = inbox_path(db)
    if not path.exists():
        return set()
    conn = sqlite3.connect(str(path), timeout=30)
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        return {r[0] for r in conn.execute("SELECT turn_uuid FROM inbox")} if "inbox" in tables else set()
    finally:
        conn.close()


def _cheap_checks(db: Path, acked: int) -> dict[str, int]:
    """Nothing acknowledged is lost, nothing is written twice; returns what was pending at the kill."""
    if not db.exists():
        assert acked == 0  # killed before the first child created the store's folder
        return {"turns_pending": 0, "embeds_pending": 0}
    conn = sqlite3.connect(str(db), timeout=30)
    try:
        q = conn.execute
        tables = {r[0] for r in q("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()}
        if not {"episodes", "ingest_queue", "chunks", "facts", "embed_queue"} <= tables:
            assert acked == 0  # killed while the first child created the store
            return {"turns_pending": 0, "embeds_pending": 0}
        per_turn = q(
            "SELECT json_extract(metadata, '$.turn_uuid') AS t, count(*) AS n FROM episodes GROUP BY t"
        ).fetchall()
        assert all(n == 2 for _, n in per_turn), [row for row in per_turn if row[1] != 2]
        written = {t for t, _ in per_turn}
        queued = {r[0] for r in q("SELECT turn_uuid FROM ingest_queue").fetchall()} | _in_inbox(db)
        missing = [i for i in range(acked) if f"turn-{i:04d}" not in written | queued]
        assert not missing, f"acknowledged turns lost: {missing}"
        dup_chunks = q(
            "SELECT count(*) FROM (SELECT 1 FROM chunks GROUP BY source_kind, source_uuid, chunk_index, text"
            " HAVING count(*) > 1)"
        ).fetchone()[0]
        assert dup_chunks == 0
        dup_facts = q(
            "SELECT count(*) FROM (SELECT 1 FROM facts WHERE superseded_at IS NULL GROUP BY content_hash"
            " HAVING count(*) > 1)"
        ).fetchone()[0]
        assert dup_facts == 0
        return {
            "turns_pending": len(queued),
            "embeds_pending": int(q("SELECT count(*) FROM embed_queue").fetchone()[0]),
        }
    finally:
        conn.close()


def _reference(home: Path, child_module: Any) -> dict[str, Any]:
    """The same turns remembered without any interruption (in process, in-memory vectors)."""
    with MemoryAPI(hermes_home=home, **{**OVERRIDES, "tier3.backend": "memory"}) as api:
        for i in range(TOTAL_TURNS):
            user, assistant = child_module.turn(i)
            env = api.remember_turn(user, assistant, "s1", 1_683_540_000.0 + i * 600, user_name="Caroline",
                                    assistant_name="Bot", turn_id=f"turn-{i:04d}")  # fmt: skip
            assert env["success"], env
        assert api.flush(120)["data"]["drained"]
        return knowledge(api)


def test_sigkill_loop_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    seed = int(os.environ.get("HM_KILL_SEED", random.SystemRandom().randrange(1 << 30)))
    print(f"kill loop seed: {seed} (replay with HM_KILL_SEED={seed})")
    rnd = random.Random(seed)
    script = tmp_path / "hm_kill_child.py"
    script.write_text(CHILD_CODE)
    home, acks = tmp_path / "home", tmp_path / "acks.txt"
    db = load_config(None, hermes_home=home).db_path

    zygote = Zygote(script)
    kills: Counter[str] = Counter()
    pending_at_kill = {"turns_pending": 0, "embeds_pending": 0}
    clean_runs = 0
    rounds = list(PHASES)
    try:
        run = 0
        while sum(kills.values()) < KILLS or _acked(acks) < TOTAL_TURNS:
            assert run < MAX_RUNS, (kills, _acked(acks))
            markers = tmp_path / f"markers-{run}.txt"
            killing = sum(kills.values()) < KILLS
            per_run = TURNS_PER_RUN if killing else TOTAL_TURNS
            if run % len(PHASES) == 0:  # every phase is aimed at in each round of runs, in random order
                rounds = rnd.sample(PHASES, len(PHASES))
            phase = rounds[run % len(PHASES)]
            pace = INSERT_PACE if killing and phase == "insert" else PACE
            pid = zygote.spawn(str(home), str(markers), str(acks), per_run, TOTAL_TURNS, pace)
            delay = rnd.uniform(0.0, DELAY[phase])
            if killing and _wait_for(markers, phase):
                time.sleep(delay)
                os.kill(pid, signal.SIGKILL)
            code = zygote.wait(pid)
            seen = _markers(markers)
            errors = [m for m in seen if m.startswith("error")]
            assert not errors, f"run {run}: an error reached the caller: {errors}"
            if code == -signal.SIGKILL:
                kills[seen[-1] if seen else "before open"] += 1
                for key, value in _cheap_checks(db, _acked(acks)).items():
                    pending_at_kill[key] += value > 0
            else:
                assert code == 0 and seen[-1] == "done", (run, code, seen)
                clean_runs += 1
            run += 1
    finally:
        zygote.close()

    total_kills = sum(kills.values())
    print(
        f"kills: {total_kills} (by phase at the kill: {dict(kills)}); clean runs: {clean_runs}; "
        f"kills with turns waiting for ingestion: {pending_at_kill['turns_pending']}, with embeddings "
        f"waiting: {pending_at_kill['embeds_pending']}; turns: {TOTAL_TURNS}"
    )
    assert total_kills >= MIN_KILLS
    assert {"insert", "flush", "close"} <= set(kills), kills  # kills landed in every phase

    spec = importlib.util.spec_from_file_location("hm_kill_child", script)
    assert spec is not None and spec.loader is not None
    child_module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(child_module)  # the same turn texts the children sent
    expected = _reference(tmp_path / "reference", child_module)

    with MemoryAPI(hermes_home=home, **OVERRIDES) as api:
        assert api.flush(60)["data"] == {"drained": True, "pending": {"turns": 0, "embeddings": 0}}
        got = knowledge(api)
        assert len(got["episodes"]) == 2 * TOTAL_TURNS
        texts = {text for _, text in got["episodes"]}
        for i in range(TOTAL_TURNS):
            assert set(child_module.turn(i)) <= texts, i
        assert got == expected  # same knowledge as the uninterrupted run: nothing lost, nothing twice
        found = api.semantic_search("puppy named Rex7", limit=3, min_score=0)  # opens the vector store
        assert found["success"] and "degraded" not in found["meta"], found
        assert len(found["data"]) == 3
        tier3 = api.stats()["data"]["tier3"]
        assert tier3["memory_chunks"] == len(got["chunks"]) and tier3["embed_pending"] == 0
        assert tier3["entity_embeddings"] == len(got["entities"])
        report = api.doctor()["data"]
        assert report["clean"], [f for f in report["findings"] if f["status"] != "ok"]


def test_a_turn_resent_after_it_was_written_is_not_written_again(tmp_path: Path) -> None:
    """The caller re-sends a turn whose success it never saw, after the worker already wrote it."""
    with MemoryAPI(hermes_home=tmp_path, **{**OVERRIDES, "tier3.backend": "memory"}) as api:
        args = ("My friend Lena moved to Denver last month.", "Noted.", "s1", 1_683_540_000.0)
        assert api.remember_turn(*args, user_name="Caroline", turn_id="t-1")["data"]["queued"]
        assert api.flush(30)["data"]["drained"]
        before = knowledge(api)
        assert len(before["episodes"]) == 2 and before["facts"]
        assert api.remember_turn(*args, user_name="Caroline", turn_id="t-1")["data"]["queued"]
        assert api.flush(30)["data"] == {"drained": True, "pending": {"turns": 0, "embeddings": 0}}
        assert knowledge(api) == before
        assert api.stats()["data"]["tier3"]["memory_chunks"] == len(before["chunks"])


def test_turns_moved_out_of_the_inbox_twice_are_written_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Inbox rows are deleted after the move commits. If that delete never happens (a crash, or another
    process moved the same rows meanwhile), the rows arrive again after their turns were written."""
    with MemoryAPI(hermes_home=tmp_path, **{**OVERRIDES, "tier3.backend": "memory"}) as api:
        for i in range(3):
            turn = (f"My friend Lena{i} moved to Denver last month.", "Noted.", "s1", 1_683_540_000.0 + i)
            assert api.remember_turn(*turn, user_name="Caroline", turn_id=f"t-{i}")["success"]
        inbox = api.tier2.inbox
        assert inbox is not None and inbox.count() == 3
        real_remove = TurnInbox.remove
        monkeypatch.setattr(TurnInbox, "remove", lambda self, ids: None)  # the delete is lost
        assert not api.flush(1)["data"]["drained"]  # written (repeatedly), but the inbox keeps them
        first = knowledge(api)
        assert len(first["episodes"]) == 6 and inbox.count() == 3
        monkeypatch.setattr(TurnInbox, "remove", real_remove)
        assert api.flush(30)["data"] == {"drained": True, "pending": {"turns": 0, "embeddings": 0}}
        assert knowledge(api) == first and inbox.count() == 0
        dup_chunks = api.tier2.db.query(
            "SELECT 1 FROM chunks GROUP BY source_kind, source_uuid, chunk_index, text HAVING count(*) > 1"
        )
        assert dup_chunks == []
