"""Several processes and threads remember turns, flush, recall, store facts and search one profile at
once, from an empty HERMES_HOME, on the default embedded vector engine (qdrant-edge, which admits one
process per store) with the hashing embedder.

No error reaches any caller: a process that cannot take the vector store still embeds its chunks into
Tier 2 and recalls and searches by meaning over the stored vectors (exact search), without degrading;
only its entity embeddings wait in the durable queue for the process holding the store (or a later
one). Afterwards the counts are exact: every turn stored once, every stored fact once, both queues
empty, a vector for every chunk and entity, and ``doctor()`` finds nothing.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

from hermes_memory import MemoryAPI

PROCESSES = 3
THREADS = 2
TURNS = 24  # per thread
FACTS = 4  # per thread
# default backend: embedded Qdrant, answering at any size (one process holds it)
OVERRIDES: dict[str, Any] = {"tier3.embedding_model": "hashing", "tier3.engine_min_vectors": 0}

PROCESS_MAIN = textwrap.dedent(
    """
    import json, sys, threading, time, traceback
    from pathlib import Path
    from hermes_memory import MemoryAPI

    home, name, n_threads, n_turns, n_facts, ready, go, separate = sys.argv[1:9]
    n_threads, n_turns, n_facts = int(n_threads), int(n_turns), int(n_facts)
    overrides = {"tier3.embedding_model": "hashing", "tier3.engine_min_vectors": 0}
    # One API per process (how a host uses it); with "separate", one per thread (each with its own
    # background worker; they share this process's vector collections).
    shared = MemoryAPI(hermes_home=home, background=True, actor=name, **overrides)
    apis = [shared] + [
        MemoryAPI(hermes_home=home, background=True, actor=name, **overrides) if separate == "1" else shared
        for _ in range(n_threads - 1)
    ]
    problems, degraded = [], {"recall": 0, "search": 0, "flush": 0}
    lock = threading.Lock()

    def check(tag, env):
        if not env["success"]:
            problems.append(f"{tag}: {env['meta'].get('error_type')}: {env['error']}")
        elif env["meta"].get("degraded"):
            with lock:
                degraded[tag] += 1
        return env

    def work(api, tag):
        try:
            for i in range(n_turns):
                check("remember", api.remember_turn(
                    f"{tag} says: my friend Lena{i} moved to Denver last month (turn {i}).",
                    f"Noted for {tag}, turn {i}.", f"session-{tag}", 1_700_000_000.0 + i * 60,
                    user_name=f"User {tag}", assistant_name="Bot", turn_id=f"{tag}-turn-{i}"))
                if i % 6 == 5:
                    check("recall", api.recall(f"Where did Lena{i} move?", limit=5))
                    check("search", api.semantic_search(f"{tag} Denver turn {i}", limit=5, min_score=0))
                if i % 12 == 11:
                    check("flush", api.flush(timeout=5))
            for j in range(n_facts):
                check("fact", api.fact_store(f"Thread {tag} stored fact number {j} about gardening."))
        except Exception:  # a raw exception is exactly what this test must catch and report
            problems.append(f"{tag}: raised {traceback.format_exc()}")

    Path(ready).touch()
    deadline = time.monotonic() + 60
    while not Path(go).exists():
        if time.monotonic() > deadline:
            sys.exit("never got the go signal")
        time.sleep(0.005)
    threads = [threading.Thread(target=work, args=(apis[t], f"{name}t{t}")) for t in range(n_threads)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    for api in {id(a): a for a in apis}.values():
        api.close()
    print(json.dumps({"problems": problems, "degraded": degraded}))
    """
)


def test_processes_and_threads_remember_recall_and_search_one_profile(tmp_path: Path) -> None:
    script = tmp_path / "process_main.py"
    script.write_text(PROCESS_MAIN, encoding="utf-8")
    home, go = tmp_path / "home", tmp_path / "go"
    procs = []
    for p in range(PROCESSES):
        ready = tmp_path / f"ready-{p}"
        separate = "1" if p == PROCESSES - 1 else "0"
        args = [sys.executable, str(script), str(home), f"p{p}", str(THREADS), str(TURNS), str(FACTS),
                str(ready), str(go), separate]  # fmt: skip
        proc = subprocess.Popen(args, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        procs.append((ready, proc))
    deadline = time.monotonic() + 60
    while not all(ready.exists() for ready, _ in procs):
        assert time.monotonic() < deadline, "workers never became ready"
        assert all(proc.poll() is None for _, proc in procs), [proc.communicate() for _, proc in procs]
        time.sleep(0.01)
    go.touch()

    problems: list[str] = []
    degraded = {"recall": 0, "search": 0, "flush": 0}
    for _, proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        assert "locked" not in err.lower(), err
        assert "Traceback" not in err, err  # the background workers log failures with tracebacks
        report = json.loads(out.strip().splitlines()[-1])
        problems.extend(report["problems"])
        for key, n in report["degraded"].items():
            degraded[key] += n
    assert problems == []
    # One process at a time holds the embedded store; the others search the stored vectors instead.
    assert degraded["recall"] == 0 and degraded["search"] == 0, degraded

    workers = PROCESSES * THREADS
    with MemoryAPI(hermes_home=home, **OVERRIDES) as api:
        left = api.tier2.embed_queue.count()
        flushed = api.flush(60)  # this process takes the store and writes what the others left queued
        assert flushed["data"] == {"drained": True, "pending": {"turns": 0, "embeddings": 0}}
        print(f"{PROCESSES} processes x {THREADS} threads, {workers * TURNS} turns; degraded envelopes: "
              f"{degraded}; embeddings left for a later process: {left}")  # fmt: skip
        q = api.tier2.db.query
        per_turn = q(
            "SELECT json_extract(metadata, '$.turn_uuid') AS t, count(*) AS n FROM episodes GROUP BY t"
        )
        assert len(per_turn) == workers * TURNS and all(r["n"] == 2 for r in per_turn)
        assert q("SELECT count(*) AS n FROM episodes")[0]["n"] == 2 * workers * TURNS
        stored = q("SELECT count(*) AS n FROM facts WHERE content LIKE 'Thread % stored fact number %'")
        assert stored[0]["n"] == workers * FACTS
        dup_facts = q("SELECT content_hash FROM facts GROUP BY content_hash HAVING count(*) > 1")
        assert dup_facts == []
        dup_chunks = q(
            "SELECT 1 FROM chunks GROUP BY source_kind, source_uuid, chunk_index, text HAVING count(*) > 1"
        )
        assert dup_chunks == []
        found = api.semantic_search("Denver", limit=3, min_score=0)
        assert found["success"] and "degraded" not in found["meta"] and len(found["data"]) == 3
        tier3 = api.stats()["data"]["tier3"]
        assert tier3["embed_pending"] == 0 and api.tier2.ingest_queue.count() == 0
        assert tier3["memory_chunks"] == tier3["chunks"]
        assert tier3["entity_embeddings"] == api.tier2.entities.count()
        report = api.doctor()["data"]
        assert report["clean"], [f for f in report["findings"] if f["status"] != "ok"]


HOLDER = textwrap.dedent(
    """
    import sys
    from hermes_memory import MemoryAPI
    api = MemoryAPI(hermes_home=sys.argv[1],
                    **{"tier3.embedding_model": "hashing", "tier3.engine_min_vectors": 0})
    assert api.embed_pending()["success"]  # takes the vector store
    assert api.semantic_search("anything", min_score=0)["success"]
    print("holding", flush=True)
    sys.stdin.read()  # until the test closes our stdin
    api.close()
    """
)


def test_a_process_without_the_vector_store_searches_the_stored_vectors_and_then_takes_it_over(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(home)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        with MemoryAPI(hermes_home=home, background=True, **OVERRIDES) as api:
            assert api.remember_turn("I adopted a beagle named Rex.", "Lovely!", "s1")["success"]
            flushed = api.flush(timeout=10)
            # the turn is stored and its chunks embedded into Tier 2 here; only entity embeddings (if
            # any) wait in the durable queue for the holder
            assert flushed["success"] and flushed["data"]["pending"]["turns"] == 0
            queued = api.tier2.db.query("SELECT collection FROM embed_queue")
            assert [r[0] for r in queued if r[0] == "memory_chunks"] == []
            recalled = api.recall("Who is Rex?")
            assert recalled["success"] and "tier3" in recalled["meta"]["tiers_answered"]
            assert "degraded" not in recalled["meta"]
            assert any("beagle" in h["text"] for h in recalled["data"]["hits"])
            found = api.semantic_search("beagle", min_score=0, filters={"source_type": "session"})
            assert found["success"] and "degraded" not in found["meta"]
            assert found["data"] and "beagle" in found["data"][0]["text"].lower()
            hybrid = api.semantic_hybrid("beagle")
            assert hybrid["success"] and hybrid["data"] and "degraded" not in hybrid["meta"]
            findings = {f["check"]: f for f in api.doctor()["data"]["findings"]}
            assert "another process" in findings["vectors"]["detail"]  # not checked, not a fault
            bad = {name: f["detail"] for name, f in findings.items() if f["status"] != "ok"}
            assert set(bad) <= {"queue:embed"}, bad  # at most entity embeddings waiting for the holder

            assert holder.stdin is not None
            holder.stdin.close()  # the holder closes its store and exits
            assert holder.wait(30) == 0
            flushed = api.flush(timeout=30)  # now this process takes the store and drains
            assert flushed["data"] == {"drained": True, "pending": {"turns": 0, "embeddings": 0}}
            assert "degraded" not in flushed["meta"]
            recalled = api.recall("Who is Rex?")
            assert "tier3" in recalled["meta"]["tiers_queried"] and "degraded" not in recalled["meta"]
            tier3 = api.stats()["data"]["tier3"]
            assert tier3["memory_chunks"] == tier3["chunks"] > 0
    finally:
        if holder.poll() is None:
            holder.kill()
        holder.wait(30)
        if holder.stdout is not None:
            holder.stdout.close()
