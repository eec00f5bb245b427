"""A forget finishes or does not start (issue 14, defect 9): with another process holding the vector store
it is refused before anything is deleted; a crash after the Tier 2 commit leaves a recorded erasure that the
next open (or ``doctor --repair``) finishes; afterwards no file under the home holds the forgotten text."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.config import load_config

pytest.importorskip("qdrant_edge")

NAME = "Zorblax"
SETTINGS: dict[str, Any] = {"tier3.embedding_model": "hashing", "tier3.backend": "qdrant",
                            "tier3.engine_min_vectors": 0}  # fmt: skip


def _ok(envelope: dict[str, Any]) -> Any:
    assert envelope["success"], envelope["error"]
    return envelope["data"]


def _populate(home: Path) -> None:
    with MemoryAPI(hermes_home=home, **SETTINGS) as api:
        _ok(
            api.remember_turn(
                f"I had lunch with {NAME} in Lisbon.", "Nice, how is she?", "s1", 1_700_000_000.0
            )
        )
        _ok(api.remember_turn("I like green tea in the morning.", "Noted.", "s1", 1_700_000_100.0))
        _ok(api.flush())
        _ok(api.fact_store(f"{NAME} lives in Lisbon"))
        _ok(api.entity_ensure(NAME, "person"))
        _ok(api.curated_add(f"Friend: {NAME}", store="user"))
        _ok(api.embed_pending())
        assert _ok(api.semantic_search(f"lunch with {NAME}", limit=3))  # the engine holds the payloads
        _ok(api.graph_traverse("Lisbon"))


def _files_holding(home: Path, word: str) -> list[str]:
    needle = word.lower().encode()
    return [
        str(p.relative_to(home)) for p in home.rglob("*") if p.is_file() and needle in p.read_bytes().lower()
    ]


def _child(home: Path, body: str, *, wait: bool = False) -> subprocess.Popen[str]:
    code = textwrap.dedent(
        f"""
        import os, sys, json
        from hermes_memory.api.memory_api import MemoryAPI
        api = MemoryAPI(hermes_home={str(home)!r}, **{SETTINGS!r})
        """
    ) + textwrap.dedent(body)
    return subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, env={**os.environ})  # fmt: skip


def test_forget_with_another_process_holding_the_vector_store_deletes_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _populate(home)
    holder = _child(
        home,
        """
        assert api.semantic_search("lunch", limit=1)["success"]  # takes the engine
        print("holding", flush=True)
        sys.stdin.readline()
        api.close()
    """,
    )
    assert holder.stdout is not None and holder.stdin is not None
    try:
        assert holder.stdout.readline().strip() == "holding"
        with MemoryAPI(hermes_home=home, **SETTINGS) as api:
            before = _ok(api.export_json())
            result = api.forget_entity(NAME, confirm=True)
            assert not result["success"] and "nothing was deleted" in result["error"], result
            assert _ok(api.export_json()) == before  # not half-committed
            assert _ok(api.doctor())["clean"]
    finally:
        holder.communicate(timeout=60)
    assert holder.returncode == 0
    with MemoryAPI(hermes_home=home, **SETTINGS) as api:
        assert _ok(api.forget_entity(NAME, confirm=True))["confirmed"]  # the owner is gone: it works now
        assert _ok(api.doctor())["clean"]
    assert _files_holding(home, NAME) == []


def test_a_crash_after_the_commit_is_finished_on_the_next_open(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _populate(home)
    crashed = _child(
        home,
        f"""
        from hermes_memory.tier3.semantic import SemanticMemory
        SemanticMemory.drain = lambda self, *a, **k: os._exit(9)  # dies right after the Tier 2 commit
        api.forget_entity({NAME!r}, confirm=True)
        os._exit(0)
    """,
    )
    crashed.communicate(timeout=60)
    assert crashed.returncode == 9
    assert _files_holding(home, NAME)  # the crash left the text on disk (engine, graph, free pages)
    # A process that cannot take the engine finishes what it can; doctor names what is left.
    holder = _child(
        home,
        """
        print("holding", flush=True)
        sys.stdin.readline()
        assert api.semantic_search("lunch", limit=1)["success"]
        print(json.dumps(api.doctor()["data"]["clean"]), flush=True)
        api.close()
    """,
    )
    assert holder.stdout is not None and holder.stdin is not None
    try:
        assert holder.stdout.readline().strip() == "holding"
    finally:
        out, _ = holder.communicate("go\n", timeout=60)
    assert holder.returncode == 0
    assert json.loads(out) is True  # its open finished the erasure
    with MemoryAPI(hermes_home=home, **SETTINGS) as api:
        report = _ok(api.doctor())
        assert report["clean"], report["findings"]
        assert _ok(api.entity_query(NAME)) == []
        assert _ok(api.curated_entries("user")) == []
        assert (
            NAME.lower() not in json.dumps(_ok(api.semantic_search(f"lunch with {NAME}", limit=10))).lower()
        )
        assert "green tea" in json.dumps(_ok(api.get_latest(10)))  # unrelated memory stays
    assert _files_holding(home, NAME) == []


def test_doctor_reports_an_erasure_the_engine_holder_kept_from_finishing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _populate(home)
    crashed = _child(
        home,
        f"""
        from hermes_memory.tier3.semantic import SemanticMemory
        SemanticMemory.drain = lambda self, *a, **k: os._exit(9)
        api.forget_entity({NAME!r}, confirm=True)
    """,
    )
    crashed.communicate(timeout=60)
    assert crashed.returncode == 9
    # Another process holds the vector store (its lock files) while this one opens and runs doctor.
    qdrant = load_config(None, hermes_home=home).tier3_path / "qdrant"
    locks = [os.open(qdrant / f"{c}.lock", os.O_RDWR | os.O_CREAT, 0o600)
             for c in ("memory_chunks", "entity_embeddings")]  # fmt: skip
    try:
        for fd in locks:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        api = MemoryAPI(hermes_home=home, **SETTINGS)
        report = _ok(api.doctor())
        found = {f["check"]: f for f in report["findings"]}
        assert not report["clean"] and found["erasures"]["status"] == "error", found["erasures"]
        assert found["erasures"]["detail"].endswith("left to purge: engine"), found["erasures"]
        assert found["erasures"]["repairable"] is True
        assert _ok(api.entity_query(NAME)) == []  # the Tier 2 part and the other steps are done
        assert not _ok(api.doctor(repair=True))["clean"]  # still held: the step stays recorded
    finally:
        for fd in locks:
            os.close(fd)
    try:
        repaired = _ok(api.doctor(repair=True))  # the holder is gone: doctor --repair finishes it
        assert repaired["clean"], repaired["findings"]
        assert "finish_erasures" in [r["action"] for r in repaired["repairs"]]
    finally:
        api.close()
    assert _files_holding(home, NAME) == []


def test_another_process_graph_does_not_answer_with_a_forgotten_node(tmp_path: Path) -> None:
    """Below the engine threshold nothing holds the vector store; another open store's graph (a second
    MemoryAPI stands in for the other process) must not keep answering with what was forgotten, nor
    save it back to the graph file on close."""
    memory = {"tier3.embedding_model": "hashing", "tier3.backend": "memory"}
    other = MemoryAPI(hermes_home=tmp_path, **memory)
    try:
        person = _ok(other.entity_ensure(NAME, "person"))
        place = _ok(other.entity_ensure("Lisbon", "place"))
        _ok(other.entity_link(person["uuid"], place["uuid"], "lives_in"))
        assert NAME in json.dumps(_ok(other.graph_traverse("Lisbon")))
        with MemoryAPI(hermes_home=tmp_path, **memory) as api:
            _ok(api.forget_entity(NAME, confirm=True))
        assert NAME not in json.dumps(_ok(other.graph_traverse("Lisbon")))
        _ok(other.entity_ensure("Porto", "place"))  # the other graph has unsaved changes
    finally:
        other.close()
    assert _files_holding(tmp_path, NAME) == []
