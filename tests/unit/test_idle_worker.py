"""An idle background worker costs nothing: with both queues empty, one step reads only the queues
(no scan of chunks, entities or episodes), however big the store. Also covers the bench fill."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from hermes_memory.bench.fill import fill_store, idle_cycle

_QUEUES = ("embed_queue", "ingest_queue", "q ", "CONSTANT ROW")


def test_an_idle_step_reads_only_the_queues(tmp_path: Path) -> None:
    report = fill_store(tmp_path, 60, backend="memory", round_turns=25)
    assert report.turns == 60 and report.chunks >= 60 and report.facts > 0
    idle = idle_cycle(tmp_path, cycles=3, backend="memory")
    assert idle["statements"], "the idle step ran no query"
    conn = sqlite3.connect(tmp_path / "default" / "memory" / "tier2.db")
    try:
        for sql in idle["statements"]:
            plan = [row[3] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}")]
            scans = [step for step in plan if step.startswith("SCAN") and not step[5:].startswith(_QUEUES)]
            assert not scans, (sql, plan)
    finally:
        conn.close()
