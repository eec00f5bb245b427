"""Multi-host proof: several processes, each with its own HERMES_HOME, share one Tier 2 on a PostgreSQL
server (``tier2.url``).

Four writer hosts remember 250 distinct turns each and move them from their own turn inbox into the shared
``ingest_queue`` (``IngestQueue.absorb``), never draining it. Meanwhile two worker hosts drain the shared
queues (turns, then embeddings) with ``flush``, each queue by one of them at a time (the store's queue
leases, ``tier2.leases``: a worker that finds a lease held leaves that queue to its holder); one of them is
SIGKILLed 10 times while it is inside a drain
with work pending (restarted each time): half of the kills wait until it holds the store's write lock (the
advisory lock of an open write transaction, seen in ``pg_locks`` by its ``application_name``), the other half
land at a random moment of its drain. Then the queues are drained to empty and the store must hold every turn
exactly once, extracted (its fact) and embedded (a vector of the model for each of its chunks): a killed
worker's leases went with its connections, and the other worker (or its restart) drained on.

Every kill is checked to have landed mid-work: the worker's last marker says it is inside a drain, the
queues hold work, and (for the aimed half) it held the write lock; the database's rollback count shows
kills that cut an open write transaction short.

Then a forget issued on host A (writer 0's home) must leave the name on no host: host B (writer 1's
home), whose recall found it twice (warm read cache, exact index, graph), whose agent "saw" it (its file
of what the agent saw) and keeps it in its curated MEMORY.md, must not recall it any more, in its
already-open process and in a fresh one; no row of Tier 2 names it; no file of host B or any other host
contains it (host B follows the erasure on its next recall: ``ops.erasure_follow``).

Children: ``multi_host_child.py`` (writer, worker and host roles). Vectors: the hashing embedder and the
in-process backend on every host (the vectors are in Tier 2's ``vectors`` table, so every host's exact index
reads the same ones; an embedded engine's files would be one host's). The kill RNG's seed is printed
(``HM_MULTI_HOST_SEED`` replays it).
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import multi_host_child as child
import pg_server
import psycopg
import pytest
from psycopg import sql

from hermes_memory.config import load_config
from hermes_memory.tier2.turn_inbox import inbox_path

pytestmark = [pytest.mark.slow, pytest.mark.server]

WRITERS = 4
TURNS = 250
KILLS = 10
PACE = 0.2  # a writer's pause after each turn until the kills are done (then it sends the rest at once)
MODEL = "hashing-384"
CHILD = Path(__file__).with_name("multi_host_child.py")
VICTIM = "hm-worker-0"  # the application_name of the killed worker's connections
# The advisory lock key of the store's write transactions (``tier2.pg.database``); the queue leases a
# worker holds while it drains are session locks under another key.
WRITE_LOCK = 0x686D_7432
LUNCH = "who had lunch on Friday"  # finds the forgotten turns by their other words
# Host B's own files that name the forgotten name before the forget (its graph file, its file of what the
# agent saw, its curated MEMORY.md): a forget issued on host A must reach them.
HOST_B_FILES = (
    "default/memory/graph/knowledge_graph.pickle",
    "default/memory/seen.jsonl",
    "memories/MEMORY.md",
)


@pytest.fixture(scope="session")
def pg_multi_host() -> Iterator[pg_server.PgServer]:
    """A throw-away PostgreSQL cluster for the session (this directory has no other)."""
    with pg_server.running() as server:
        yield server


@pytest.fixture
def store(pg_multi_host: pg_server.PgServer) -> Iterator[tuple[str, psycopg.Connection[Any]]]:
    """An empty database on it (its URL) and the test's own autocommit connection to it; dropped after."""
    url = pg_multi_host.database()
    with psycopg.connect(url, autocommit=True) as conn:
        yield url, conn
    pg_multi_host.drop(url)


def _env(url: str, app: str) -> dict[str, str]:
    return {
        **os.environ,
        "HERMES_MEMORY_TIER2_URL": url,
        "PGAPPNAME": app,  # libpq: every connection of the child carries it (pg_stat_activity, pg_locks)
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
    }


def _spawn(url: str, app: str, *args: Any, stdin: bool = False) -> subprocess.Popen[str]:
    argv = [sys.executable, str(CHILD), *map(str, args)]
    return subprocess.Popen(
        argv, env=_env(url, app), text=True, stdout=subprocess.PIPE,
        stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
    )  # fmt: skip


def _markers(path: Path) -> list[str]:
    try:
        return path.read_text().splitlines()
    except FileNotFoundError:
        return []


def _wait_ready(proc: subprocess.Popen[str], markers: Path, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while "ready" not in _markers(markers):
        assert proc.poll() is None, f"worker exited with {proc.returncode} before it was ready"
        assert time.monotonic() < deadline, "worker never became ready"
        time.sleep(0.02)


class Host:
    """A long-lived host process (``host`` role): one JSON command, one JSON answer."""

    def __init__(self, url: str, app: str, home: Path):
        self.proc = _spawn(url, app, "host", home, stdin=True)
        assert self._read() == {"ready": True}

    def _read(self) -> Any:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, f"host exited with {self.proc.wait(60)}"
        return json.loads(line)

    def ask(self, **cmd: Any) -> Any:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        return self._read()

    def recall(self, query: str) -> dict[str, Any]:
        env: dict[str, Any] = self.ask(op="recall", query=query)
        assert env["success"], env
        return env

    def close(self) -> None:
        assert self.ask(op="close") == {"success": True}
        assert self.proc.wait(60) == 0
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                stream.close()


def _one(conn: psycopg.Connection[Any], sql: str, params: tuple[Any, ...] = ()) -> Any:
    row = conn.execute(sql, params).fetchone()
    assert row is not None
    return row[0]


def _use_store_schema(conn: psycopg.Connection[Any], procs: list[subprocess.Popen[str]]) -> None:
    """Wait until a host created the store's tables (the hosts race to create them), then read the schema
    that holds them (the engine keeps a profile's store in a schema of its own)."""
    deadline = time.monotonic() + 120
    while True:
        rows = conn.execute(
            "SELECT DISTINCT q.schemaname FROM pg_tables q JOIN pg_tables e ON e.schemaname = q.schemaname "
            "WHERE q.tablename = 'ingest_queue' AND e.tablename = 'embed_queue'"
        ).fetchall()
        if rows:
            break
        assert time.monotonic() < deadline, "no host created the store's tables"
        assert all(p.poll() is None for p in procs), [p.returncode for p in procs]
        time.sleep(0.05)
    assert len(rows) == 1, rows  # one store in the database
    conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(rows[0][0])))


def _state(conn: psycopg.Connection[Any], app: str) -> tuple[int, int, bool, int]:
    """In one query: turns queued, embeddings queued, whether ``app`` holds the store's write lock, and the
    transactions of the database that ended in a rollback so far (the server rolls back a dead client's
    open transaction; the stores roll back only on errors, so this moves with the kills that cut a write
    transaction short)."""
    row = conn.execute(
        "SELECT (SELECT count(*) FROM ingest_queue), (SELECT count(*) FROM embed_queue), "
        "(SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
        " WHERE l.locktype = 'advisory' AND l.granted AND l.classid = %s AND a.application_name = %s), "
        "(SELECT xact_rollback FROM pg_stat_database WHERE datname = current_database())",
        (WRITE_LOCK, app),
    ).fetchone()
    assert row is not None
    return int(row[0]), int(row[1]), int(row[2]) > 0, int(row[3])


def _backends(conn: psycopg.Connection[Any], app: str) -> int:
    return int(_one(conn, "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", (app,)))


def _duplicates(conn: psycopg.Connection[Any]) -> dict[str, int]:
    """Rows written twice so far (episodes, chunks, current facts, entities)."""
    return {
        "episodes": _one(
            conn, "SELECT count(*) FROM (SELECT 1 FROM episodes GROUP BY role, text HAVING count(*) > 1) d"
        ),
        "chunks": _one(
            conn,
            "SELECT count(*) FROM (SELECT 1 FROM chunks GROUP BY source_kind, source_uuid, chunk_index, text "
            "HAVING count(*) > 1) d",
        ),
        "facts": _one(
            conn,
            "SELECT count(*) FROM (SELECT 1 FROM facts WHERE superseded_at IS NULL GROUP BY content_hash "
            "HAVING count(*) > 1) d",
        ),
        "entities": _one(
            conn,
            "SELECT count(*) FROM (SELECT 1 FROM entities GROUP BY lower(name), scope HAVING count(*) > 1) d",
        ),
    }


def _inbox_rows(home: Path) -> int:
    path = inbox_path(load_config(None, hermes_home=home).db_path)
    if not path.exists():
        return 0
    conn = sqlite3.connect(str(path))
    try:
        return int(conn.execute("SELECT count(*) FROM inbox").fetchone()[0])
    finally:
        conn.close()


def _files_naming(home: Path, name: str) -> list[str]:
    """The files under ``home`` whose bytes contain ``name`` (any case)."""
    needle = name.lower().encode()
    return sorted(
        str(p.relative_to(home)) for p in home.rglob("*") if p.is_file() and needle in p.read_bytes().lower()
    )


def _rows_naming(conn: psycopg.Connection[Any], name: str) -> dict[str, int]:
    """Per table of the store, the rows whose text (any column: the row cast to text) contains ``name``."""
    tables = [
        r[0]
        for r in conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename"
        ).fetchall()
    ]
    out = {}
    for table in tables:
        n = _one(conn, f'SELECT count(*) FROM "{table}" x WHERE x::text ILIKE %s', (f"%{name}%",))
        if n:
            out[table] = n
    return out


def _kill_loop(
    url: str,
    conn: psycopg.Connection[Any],
    tmp: Path,
    home: Path,
    stop: Path,
    rnd: random.Random,
    procs: list[subprocess.Popen[str]],
) -> tuple[list[dict[str, Any]], subprocess.Popen[str], Path]:
    """SIGKILL the worker of ``home`` KILLS times while it is inside a drain with work pending, restarting it
    each time (each process is added to ``procs``); returns what each kill hit and the last (running)
    worker with its marker file."""
    kills: list[dict[str, Any]] = []
    while True:
        markers = tmp / f"victim-{len(kills)}.txt"
        proc = _spawn(url, VICTIM, "worker", home, markers, stop)
        procs.append(proc)
        if len(kills) == KILLS:
            return kills, proc, markers
        _wait_ready(proc, markers)
        aim = "write lock" if len(kills) % 2 == 0 else "random"
        if aim == "random":
            time.sleep(rnd.uniform(0.0, 1.0))
        deadline = time.monotonic() + 120
        while True:
            assert proc.poll() is None, (
                f"the worker exited on its own ({proc.returncode}): {_markers(markers)}"
            )
            assert time.monotonic() < deadline, f"kill {len(kills)}: no pending work to kill the worker in"
            last = (_markers(markers) or ["?"])[-1]
            turns, embeds, held, rollbacks = _state(conn, VICTIM)
            if last == "busy" and turns + embeds > 0 and (held or aim == "random"):
                break
            time.sleep(0.002 if aim == "write lock" else 0.02)
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(60) == -signal.SIGKILL, "the kill did not land: the worker had exited"
        if proc.stdout is not None:
            proc.stdout.close()
        # The server notices the dead client (its transaction rolls back, the write lock is released).
        deadline = time.monotonic() + 60
        while _backends(conn, VICTIM):
            assert time.monotonic() < deadline, "the killed worker's connections never went away"
            time.sleep(0.05)
        kill = {"aim": aim, "busy": last == "busy", "turns": turns, "embeds": embeds, "held_lock": held}
        kills.append({**kill, "rolled_back": _state(conn, VICTIM)[3] - rollbacks})
        assert _duplicates(conn) == {"episodes": 0, "chunks": 0, "facts": 0, "entities": 0}, len(kills)


def test_multi_host_exactly_once_under_kills_and_forget_everywhere(
    store: tuple[str, psycopg.Connection[Any]], tmp_path: Path
) -> None:
    seed = int(os.environ.get("HM_MULTI_HOST_SEED", random.SystemRandom().randrange(1 << 30)))
    print(f"multi-host seed: {seed} (replay with HM_MULTI_HOST_SEED={seed})")
    rnd = random.Random(seed)
    url, conn = store
    homes = {
        name: tmp_path / name for name in [*(f"writer{w}" for w in range(WRITERS)), "worker0", "worker1"]
    }
    hurry, stop = tmp_path / "hurry", tmp_path / "stop"
    started = time.monotonic()

    # The database is empty: the hosts race to create the schema.
    procs: list[subprocess.Popen[str]] = []
    try:
        steady_markers = tmp_path / "worker1.txt"
        steady = _spawn(url, "hm-worker-1", "worker", homes["worker1"], steady_markers, stop)
        writers = [
            _spawn(url, f"hm-writer-{w}", "writer", homes[f"writer{w}"], w, TURNS, PACE, hurry)
            for w in range(WRITERS)
        ]
        procs += [steady, *writers]
        _use_store_schema(conn, procs)
        kills, victim, victim_markers = _kill_loop(url, conn, tmp_path, homes["worker0"], stop, rnd, procs)
        hurry.touch()
        kill_s = time.monotonic() - started

        for w, proc in enumerate(writers):
            out, _ = proc.communicate(timeout=300)
            assert proc.returncode == 0 and out.split() == ["done"], (w, proc.returncode, out)
            assert _inbox_rows(homes[f"writer{w}"]) == 0
        deadline = time.monotonic() + 300
        while sum(_state(conn, VICTIM)[:2]):
            assert time.monotonic() < deadline, (
                f"the workers never drained the queues: {_state(conn, VICTIM)}"
            )
            for proc, markers in ((steady, steady_markers), (victim, victim_markers)):
                assert proc.poll() is None, (
                    f"a worker exited with {proc.returncode}: {_markers(markers)[-3:]}"
                )
            time.sleep(0.2)
        stop.touch()
        for proc, markers in ((steady, steady_markers), (victim, victim_markers)):
            proc.communicate(timeout=120)
            assert proc.returncode == 0 and _markers(markers)[-1] == "done", (
                proc.returncode,
                _markers(markers)[-3:],
            )
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait(30)
    drain_s = time.monotonic() - started - kill_s

    # -- the kills landed mid-work ----------------------------------------------------------------
    print(f"kills: {kills}")
    assert len(kills) == KILLS
    assert all(k["busy"] and k["turns"] + k["embeds"] > 0 for k in kills), kills
    assert sum(k["held_lock"] for k in kills) >= KILLS // 2, kills  # every aimed one saw it held
    assert sum(k["turns"] > 0 for k in kills) >= 1, kills  # not only embeddings were pending
    assert sum(k["rolled_back"] > 0 for k in kills) >= KILLS // 4, kills  # kills cut write transactions short

    # -- every turn stored exactly once, extracted and embedded ---------------------------------
    assert _state(conn, VICTIM)[:2] == (0, 0)
    assert _duplicates(conn) == {"episodes": 0, "chunks": 0, "facts": 0, "entities": 0}
    stored = Counter(
        (role, text) for role, text in conn.execute("SELECT role, text FROM episodes").fetchall()
    )
    expected: Counter[tuple[str, str]] = Counter()
    for w in range(WRITERS):
        for i in range(TURNS):
            user, assistant = child.turn(w, i)
            expected[("user", user)] += 1
            expected[("assistant", assistant)] += 1
    assert len(expected) == 2 * WRITERS * TURNS  # every text distinct
    assert stored == expected
    turn_ids = Counter(
        json.loads(meta)["turn_uuid"] for (meta,) in conn.execute("SELECT metadata FROM episodes").fetchall()
    )
    assert turn_ids == {child.turn_id(w, i): 2 for w in range(WRITERS) for i in range(TURNS)}
    facts = Counter(
        c for (c,) in conn.execute("SELECT content FROM facts WHERE superseded_at IS NULL").fetchall()
    )
    missing = [(w, i) for w in range(WRITERS) for i in range(TURNS) if facts[child.fact_text(w, i)] != 1]
    assert not missing, f"turns without their extracted fact (exactly once): {missing[:10]} ({len(missing)})"
    entities = {n for (n,) in conn.execute("SELECT lower(name) FROM entities").fetchall()}
    unnamed = [
        (w, i)
        for w in range(WRITERS)
        for i in range(TURNS)
        if child.colleague(w, i)[0].lower() not in entities
    ]
    assert not unnamed, f"colleagues without their entity: {unnamed[:10]} ({len(unnamed)})"
    without_chunks = _one(
        conn,
        "SELECT count(*) FROM episodes e "
        "WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.source_uuid = e.uuid)",
    )
    assert without_chunks == 0
    unembedded = _one(
        conn,
        "SELECT count(*) FROM chunks c WHERE NOT EXISTS "
        "(SELECT 1 FROM vectors v WHERE v.model_id = %s AND v.text_hash = c.content_hash)",
        (MODEL,),
    )
    assert unembedded == 0
    assert _one(conn, "SELECT count(*) FROM vectors WHERE model_id <> %s", (MODEL,)) == 0

    # -- a forget on host A leaves the name on no host ------------------------------------------
    name = child.FORGOTTEN
    naming = [(w, i) for w in range(WRITERS) for i in range(TURNS) if child.names_forgotten(w, i)]
    hard: list[str] = []  # what still names it after the forget

    def recalled(where: str, env: dict[str, Any]) -> None:
        for hit in env["data"]["hits"]:
            if name.lower() in json.dumps(hit, ensure_ascii=False).lower():
                hard.append(
                    f"{where} recalls {hit['id']} ({hit['tier']}): {hit['text']!r}"
                )
        for line in str(env["data"].get("rendered", "")).splitlines():  # the block the agent is handed
            if name.lower() in line.lower():
                hard.append(f"{where} renders: {line}")
        rest = {k: v for k, v in env["data"].items() if k not in ("hits", "rendered")}
        if name.lower() in json.dumps(rest, ensure_ascii=False).lower():
            hard.append(f"{where}'s recall names it outside its hits: {rest}")

    def files_left(where: str, home: Path) -> None:
        for path in _files_naming(home, name):
            hard.append(f"{where}: file {path} names it")

    host_b = Host(url, "hm-host-b", homes["writer1"])
    try:
        # host B's agent uses the name: recall (twice: the second from warm caches), what it saw, Tier 1
        for query in (name, LUNCH) * 2:
            texts = [h["text"] for h in host_b.recall(query)["data"]["hits"]]
            assert any(name in t for t in texts), (query, texts)
        assert host_b.ask(op="see", query=name, text="\n".join(texts))["success"]
        assert host_b.ask(op="curated_add", content=f"{name} is a lunch friend of my colleagues.")["success"]
        before = {home: _files_naming(path, name) for home, path in homes.items()}
        print(f"files naming {name} before the forget: {before}")
        assert set(before["writer1"]) == set(HOST_B_FILES), before["writer1"]  # so their check can fail
        assert _rows_naming(conn, name)

        host_a = Host(url, "hm-host-a", homes["writer0"])
        try:
            forgot = host_a.ask(op="forget_entity", name=name)
            assert forgot["success"], forgot
            assert forgot["data"]["counts"]["tier2"]["episodes"] == len(naming), forgot
            assert not forgot["data"].get("unfinished"), forgot
            for query in (name, LUNCH):
                recalled("host A", host_a.recall(query))
        finally:
            host_a.close()
        files_left("host A", homes["writer0"])

        rows = _rows_naming(conn, name)
        if rows:
            hard.append(f"Tier 2 rows still naming it: {rows}")
        for query in (name, LUNCH) * 2:
            recalled("host B's open process", host_b.recall(query))
        files_left("host B (its process open)", homes["writer1"])
    finally:
        host_b.close()
    files_left("host B (its process closed)", homes["writer1"])
    fresh = Host(url, "hm-host-b2", homes["writer1"])
    try:
        for query in (name, LUNCH):
            recalled("host B's fresh process", fresh.recall(query))
    finally:
        fresh.close()
    files_left("host B (after a fresh process)", homes["writer1"])
    for home, path in homes.items():
        if home not in ("writer0", "writer1"):
            files_left(home, path)
    print(f"kill phase {kill_s:.0f} s, drain {drain_s:.0f} s, total {time.monotonic() - started:.0f} s")

    # the forget removed the turns naming it and nothing else
    left = Counter((role, text) for role, text in conn.execute("SELECT role, text FROM episodes").fetchall())
    assert left == expected - Counter(("user", child.turn(w, i)[0]) for w, i in naming)
    assert not hard, "\n".join(hard)
