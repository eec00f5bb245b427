"""Several processes and threads write the same profile at once, starting from an empty HERMES_HOME
(so they also race on creating and migrating the database). No error reaches any caller — in
particular never "database is locked" — and the final counts are exact."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

from hermes_memory.api import MemoryAPI

PROFILE = "shared"
FACTS_PER_WORKER = 40
EVENTS_PER_WORKER = 5
PROCESSES = 2
THREADS_PER_PROCESS = 2
SHARED_FACT = "Every writer states this same fact."
SHARED_ENTITY = "Atlas"

# One worker = a burst of writes and reads through the public API; it returns every failed
# envelope or exception it saw (the test expects none).
WORKER_CODE = textwrap.dedent(
    """
    from __future__ import annotations
    import traceback
    from hermes_memory.api import MemoryAPI

    def run_worker(api: MemoryAPI, tag: str, n_facts: int, n_events: int) -> list[str]:
        problems: list[str] = []

        def check(env: dict) -> dict:
            if not env["success"]:
                problems.append(f"{tag}: {env['meta'].get('error_type')}: {env['error']}")
            return env

        try:
            check(api.entity_ensure("Atlas", "project"))
            for i in range(n_facts):
                check(api.fact_store(f"Worker {tag} learned fact number {i} about routing."))
                if i % 10 == 0:
                    check(api.fact_store("Every writer states this same fact."))
                    check(api.fact_query("routing fact", limit=5))
            for i in range(n_events):
                check(api.timeline_add("event", f"{tag} event {i}", related_entities=["Atlas"],
                                       timestamp=1_700_000_000.0 + i))
            check(api.entity_ensure(f"Writer {tag}", "other"))
            check(api.entity_link(f"Writer {tag}", "Atlas", "works_on"))
        except Exception:  # a raw exception is exactly what this test must catch and report
            problems.append(f"{tag}: raised {traceback.format_exc()}")
        return problems
    """
)

PROCESS_MAIN = textwrap.dedent(
    """
    import json, sys, threading, time
    from pathlib import Path
    from hermes_memory.api import MemoryAPI
    from worker import run_worker

    home, profile, name, n_threads, n_facts, n_events, ready, go = sys.argv[1:9]
    n_threads, n_facts, n_events = int(n_threads), int(n_facts), int(n_events)
    problems = []
    # Thread 0 shares the process-wide API with thread 1; others open their own connection.
    shared = MemoryAPI(hermes_home=home, profile=profile, actor=name)
    apis = [shared if t < 2 else MemoryAPI(hermes_home=home, profile=profile, actor=name)
            for t in range(n_threads)]
    Path(ready).touch()
    deadline = time.monotonic() + 60
    while not Path(go).exists():
        if time.monotonic() > deadline:
            sys.exit("never got the go signal")
        time.sleep(0.005)
    threads = [threading.Thread(target=lambda t=t: problems.extend(
        run_worker(apis[t], f"{name}-t{t}", n_facts, n_events))) for t in range(n_threads)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for api in {id(a): a for a in apis}.values():
        api.close()
    print(json.dumps(problems))
    """
)


def _load_worker(tmp_path: Path) -> Any:
    (tmp_path / "worker.py").write_text(WORKER_CODE, encoding="utf-8")
    (tmp_path / "process_main.py").write_text(PROCESS_MAIN, encoding="utf-8")
    namespace: dict[str, Any] = {}
    exec(compile(WORKER_CODE, str(tmp_path / "worker.py"), "exec"), namespace)
    return namespace["run_worker"]


def test_processes_and_threads_write_one_profile_at_once(tmp_path: Path) -> None:
    run_worker = _load_worker(tmp_path)
    home = tmp_path / "home"
    go = tmp_path / "go"
    procs = []
    for p in range(PROCESSES):
        ready = tmp_path / f"ready-{p}"
        args = [
            sys.executable,
            str(tmp_path / "process_main.py"),
            str(home),
            PROFILE,
            f"p{p}",
            str(THREADS_PER_PROCESS),
            str(FACTS_PER_WORKER),
            str(EVENTS_PER_WORKER),
            str(ready),
            str(go),
        ]
        procs.append(
            (
                ready,
                subprocess.Popen(
                    args, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
                ),
            )
        )

    # This process joins in with two threads, each on its own connection, after the others opened
    # (and raced to migrate) the empty database.
    deadline = time.monotonic() + 60
    while not all(ready.exists() for ready, _ in procs):
        assert time.monotonic() < deadline, "workers never became ready"
        assert all(proc.poll() is None for _, proc in procs), [proc.communicate() for _, proc in procs]
        time.sleep(0.01)
    local_apis = [MemoryAPI(hermes_home=home, profile=PROFILE, actor=f"main-{t}") for t in range(2)]
    local_problems: list[str] = []
    threads = [
        threading.Thread(
            target=lambda t=t: local_problems.extend(
                run_worker(local_apis[t], f"main-t{t}", FACTS_PER_WORKER, EVENTS_PER_WORKER)
            )
        )
        for t in range(2)
    ]
    go.touch()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for api in local_apis:
        api.close()

    problems = list(local_problems)
    for _, proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert "locked" not in err.lower(), err
        problems.extend(json.loads(out.strip().splitlines()[-1]))
    assert problems == []

    workers = PROCESSES * THREADS_PER_PROCESS + 2
    shared_statements = workers * len(range(0, FACTS_PER_WORKER, 10))
    with MemoryAPI(hermes_home=home, profile=PROFILE) as api:
        t2 = api.tier2
        assert t2.facts.count() == workers * FACTS_PER_WORKER + 1  # the shared fact was deduplicated
        assert t2.timeline.count() == workers * EVENTS_PER_WORKER
        atlas = t2.entities.resolve(SHARED_ENTITY)
        assert t2.entities.count() == 1 + workers
        assert atlas.occurrence_count == workers
        assert t2.relations.count() == workers
        audit = {
            row["action"]: row["n"]
            for row in t2.db.query("SELECT action, count(*) AS n FROM memory_audit_log GROUP BY action")
        }
        assert audit["fact_store"] == workers * FACTS_PER_WORKER + 1
        assert audit["fact_dedupe"] == shared_statements - 1
        assert audit["timeline_add"] == workers * EVENTS_PER_WORKER
        assert audit["relation_create"] == workers
        versions = t2.db.query("SELECT version FROM memory_schema_version")
        assert sorted(r["version"] for r in versions) == list(range(1, len(versions) + 1))
        shared = api.fact_query(SHARED_FACT)["data"]
        assert [f["content"] for f in shared][:1] == [SHARED_FACT]

    conn = sqlite3.connect(home / PROFILE / "memory" / "tier2.db")
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        conn.execute("INSERT INTO facts_fts(facts_fts) VALUES ('integrity-check')")
        conn.execute("INSERT INTO entities_fts(entities_fts) VALUES ('integrity-check')")
    finally:
        conn.close()
