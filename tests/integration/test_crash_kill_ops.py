"""Crash safety of the whole-store operations under real kills: a child process runs ``forget --yes``,
``maintain`` (every job), ``reindex`` or ``graph-rebuild`` on a store with an embedded Qdrant engine and
is SIGKILLed at a random point of a chosen phase (forget: planning + commit, then each erasure step —
curated, vectors, engine, graph, compact — and close; the others: the operation and close).

After every kill a second child opens the store the way any caller would (the open finishes a recorded
erasure), runs the operation again uninterrupted and reports ``doctor``. Then: ``doctor`` is clean, no
erasure is left unfinished, the store holds the same knowledge as before (forget: everything but the
forgotten name), and after a forget no file under the home holds the forgotten name.

Kills per operation: ``HM_KILL_OPS`` (default 7 for forget — one aimed at each phase — and 4 for each
other operation; the module takes under a minute; ``HM_KILL_OPS=40`` for a long run). ``HM_KILL_SEED``
replays a run. Children are forked from a zygote (see ``test_crash_kill_loop``).
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import textwrap
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from store_state import knowledge
from test_crash_kill_loop import Zygote, _markers, _wait_for

from hermes_memory import MemoryAPI
from hermes_memory.config import load_config

pytest.importorskip("qdrant_edge")

OVERRIDES: dict[str, Any] = {"tier3.embedding_model": "hashing", "tier3.engine_min_vectors": 0}
FORGET_PHASES = ("plan", "step:curated", "step:vectors", "step:engine", "step:graph", "step:compact", "close")
OP_PHASES = ("run", "run", "close")
# Random kill delay after a phase marker (seconds): about the length of the phase on this small store.
DELAY = {"plan": 0.01, "close": 0.05, "step:curated": 0.005, "step:engine": 0.2, "step:vectors": 0.05}
RUN_DELAY = {"maintain": 0.3, "reindex": 0.3, "graph": 0.03}
STEP_DELAY = 0.02
CONTROL = "Lena"  # never forgotten: its memory must survive every kill

CHILD_CODE = textwrap.dedent(
    """
    from __future__ import annotations
    import json, os, sys
    import qdrant_edge  # noqa: F401  (preloaded once in the zygote)
    from hermes_memory import MemoryAPI
    from hermes_memory.ops import erasure

    OVERRIDES = {"tier3.embedding_model": "hashing", "tier3.engine_min_vectors": 0}

    def run_child(home: str, markers: str, op: str, arg: str, report: bool) -> None:
        mfd = os.open(markers, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        def mark(text: str) -> None:
            os.write(mfd, (text + "\\n").encode())
        real_finish = erasure.finish
        erasure.finish = lambda parts, on_step=None: real_finish(parts, on_step=lambda s: mark("step:" + s))
        mark("open")
        api = MemoryAPI(hermes_home=home, **OVERRIDES)  # finishes an erasure a kill interrupted
        if op == "forget":
            mark("plan")
            env = api.forget_entity(arg, confirm=True)
            if not env["success"] and env["meta"].get("error_type") != "not_found":
                mark(f"error forget: {env['error']}")
                os._exit(3)
        else:
            mark("run")
            env = {"maintain": api.maintain, "reindex": api.reindex, "graph": api.graph_rebuild}[op]()
            if not env["success"]:
                mark(f"error {op}: {env['error']}")
                os._exit(3)
        if report:
            doctor = api.doctor()["data"]
            mark("doctor " + json.dumps([f for f in doctor["findings"] if f["status"] != "ok"]))
        mark("close")
        api.close()
        mark("done")

    def zygote() -> None:
        for line in sys.stdin:
            cmd = json.loads(line)
            if cmd["op"] == "spawn":
                pid = os.fork()
                if pid == 0:
                    code = 0
                    try:
                        run_child(*cmd["args"])
                    except BaseException as exc:
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


def _names(count: int) -> list[str]:
    """Made-up names no file can contain by chance (checked by grepping the home's bytes)."""
    rnd = random.Random(7)
    consonants, vowels = "bdfgklmnprstvz", "aeiou"
    out: list[str] = []
    while len(out) < count:
        name = "Q" + "".join(rnd.choice(consonants) + rnd.choice(vowels) for _ in range(4))
        if name not in out:
            out.append(name)
    return out


def _populate(home: Path, names: list[str]) -> None:
    with MemoryAPI(hermes_home=home, **OVERRIDES) as api:
        people = [*names, CONTROL]
        for i, name in enumerate(people):
            for j, text in enumerate((f"I had lunch with {name} in Lisbon.", f"{name} works at Globex now.")):
                env = api.remember_turn(text, "Noted.", "s1", 1_683_540_000.0 + 600 * (2 * i + j),
                                        user_name="Caroline", assistant_name="Bot")  # fmt: skip
                assert env["success"], env
            assert api.fact_store(f"{name} likes hiking on Sundays")["success"]
        for name in names[:8]:
            assert api.curated_add(f"Friend: {name}", store="user")["success"]
        assert api.flush(60)["data"]["drained"]
        assert api.semantic_search("lunch in Lisbon", limit=3)["success"]  # the engine holds payloads
        assert api.graph_rebuild()["success"]


def _files_holding(home: Path, word: str) -> list[str]:
    needle = word.lower().encode()
    return [str(p) for p in home.rglob("*") if p.is_file() and needle in p.read_bytes().lower()]


def _rows_naming(home: Path, name: str) -> int:
    """Episodes, facts and sentence chunks naming ``name``, read straight from the file."""
    conn = sqlite3.connect(str(load_config(None, hermes_home=home).db_path), timeout=30)
    try:
        like = f"%{name}%"
        return int(conn.execute(
            "SELECT (SELECT count(*) FROM episodes WHERE text LIKE ?) + (SELECT count(*) FROM facts WHERE "
            "content LIKE ?) + (SELECT count(*) FROM chunks WHERE text LIKE ? AND source_kind = 'episode')",
            (like, like, like),
        ).fetchone()[0])  # fmt: skip
    finally:
        conn.close()


def _kills(default: int) -> int:
    return int(os.environ.get("HM_KILL_OPS", default))


class _Loop:
    """Spawns children and kills them at a phase; counts kills by the last marker seen."""

    def __init__(self, tmp_path: Path, home: Path, seed: int):
        script = tmp_path / "hm_kill_ops_child.py"
        script.write_text(CHILD_CODE)
        self.zygote = Zygote(script)
        self.tmp, self.home, self.rnd = tmp_path, home, random.Random(seed)
        self.kills: Counter[str] = Counter()
        self.runs = 0

    def killed(self, op: str, arg: str, phase: str) -> bool:
        """A child running ``op`` killed in ``phase``; False when it finished before the kill landed."""
        markers = self._markers()
        pid = self.zygote.spawn(str(self.home), str(markers), op, arg, False)
        if _wait_for(markers, phase, timeout=60):
            delay = RUN_DELAY[op] if phase == "run" else DELAY.get(phase, STEP_DELAY)
            time.sleep(self.rnd.uniform(0.0, delay))
            os.kill(pid, signal.SIGKILL)
        code = self.zygote.wait(pid)
        seen = _markers(markers)
        assert not [m for m in seen if m.startswith("error")], seen
        if code == -signal.SIGKILL:
            self.kills[f"{op} {seen[-1] if seen else 'before open'}"] += 1
            return True
        assert code == 0 and seen[-1] == "done", (code, seen)
        return False

    def recover(self, op: str, arg: str) -> list[str]:
        """Open after the kill, run ``op`` uninterrupted; returns doctor's problems and the markers."""
        markers = self._markers()
        pid = self.zygote.spawn(str(self.home), str(markers), op, arg, True)
        code = self.zygote.wait(pid)
        seen = _markers(markers)
        assert code == 0 and seen[-1] == "done", (code, seen)
        problems = json.loads(next(m for m in seen if m.startswith("doctor "))[len("doctor ") :])
        assert problems == [], problems
        return seen

    def _markers(self) -> Path:
        self.runs += 1
        return self.tmp / f"markers-{self.runs}.txt"


def _seed() -> int:
    seed = int(os.environ.get("HM_KILL_SEED", random.SystemRandom().randrange(1 << 30)))
    print(f"kill loop seed: {seed} (replay with HM_KILL_SEED={seed})")
    return seed


def _unfinished(home: Path) -> int:
    with MemoryAPI(hermes_home=home, **{**OVERRIDES, "tier3.enabled": False}) as api:
        return int(api.tier2.db.query("SELECT count(*) AS n FROM erasures WHERE finished_at IS NULL")[0]["n"])


def test_sigkill_during_forget_every_phase(tmp_path: Path) -> None:
    kills = _kills(len(FORGET_PHASES))
    names = _names(2 * kills + len(FORGET_PHASES))
    home = tmp_path / "home"
    _populate(home, names)
    with MemoryAPI(hermes_home=home, **OVERRIDES) as api:
        control = [t for _, t in knowledge(api)["episodes"] if CONTROL in t]
    loop = _Loop(tmp_path, home, _seed())
    forgotten: list[str] = []
    phases: list[str] = []
    try:
        while sum(loop.kills.values()) < kills:
            assert len(forgotten) < len(names), loop.kills
            if not phases:
                phases = loop.rnd.sample(FORGET_PHASES, len(FORGET_PHASES))
            name = names[len(forgotten)]
            present = _rows_naming(home, name)
            assert present >= 5, (name, present)
            if loop.killed("forget", name, phases.pop()):
                assert _rows_naming(home, name) in (0, present), name  # the Tier 2 part: all or nothing
            loop.recover("forget", name)  # finishes the interrupted erasure, or forgets what is left
            forgotten.append(name)
            assert _files_holding(home, name) == [], name  # nothing half-done after the restart
    finally:
        loop.zygote.close()
    print(
        f"forget kills: {sum(loop.kills.values())} "
        f"(by phase at the kill: {dict(sorted(loop.kills.items()))}); "
        f"names forgotten: {len(forgotten)}; child runs: {loop.runs}"
    )
    assert len(loop.kills) >= 3, loop.kills  # the kills landed in several phases
    assert _unfinished(home) == 0
    with MemoryAPI(hermes_home=home, **OVERRIDES) as api:
        got = knowledge(api)
        assert [t for _, t in got["episodes"] if CONTROL in t] == control  # unrelated memory stays
        left = " ".join(t for _, t in got["episodes"])
        assert all(n not in left for n in forgotten)
        assert all(n in left for n in names[len(forgotten) :])
        assert api.doctor()["data"]["clean"]


@pytest.mark.parametrize("op", ["maintain", "reindex", "graph"])
def test_sigkill_during_maintenance_reindex_and_graph_rebuild(tmp_path: Path, op: str) -> None:
    kills = _kills(4)
    home = tmp_path / "home"
    _populate(home, _names(6))
    with MemoryAPI(hermes_home=home, **OVERRIDES) as api:
        assert api.maintain()["success"]  # settled: a further run changes nothing
        before = knowledge(api)
    loop = _Loop(tmp_path, home, _seed())
    try:
        for i in range(10 * kills):
            if sum(loop.kills.values()) >= kills:
                break
            loop.killed(op, "", OP_PHASES[i % len(OP_PHASES)])
            loop.recover(op, "")
    finally:
        loop.zygote.close()
    print(f"{op} kills: {sum(loop.kills.values())} (by phase: {dict(sorted(loop.kills.items()))}); "
          f"child runs: {loop.runs}")  # fmt: skip
    assert sum(loop.kills.values()) >= kills
    with MemoryAPI(hermes_home=home, **OVERRIDES) as api:
        assert knowledge(api) == before  # nothing lost, nothing twice
        tier3 = api.stats()["data"]["tier3"]
        assert tier3["embed_pending"] == 0
        assert api.doctor()["data"]["clean"]
