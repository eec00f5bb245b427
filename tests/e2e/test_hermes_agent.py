"""End to end against the real Hermes Agent (hermes-agent 0.19.0): `hermes-memory install --activate`
into a temporary HERMES_HOME, a scripted LLM on 127.0.0.1, and the agent run in subprocesses (its
in-process API through agent_driver.py, and the `hermes` command itself). Every Hermes process runs
under the offline guard; the tests assert nothing tried to leave the machine.

The provider runs with its default configuration (the local MiniLM embedder, the embedded Qdrant
store); see harness.py for the one setting raised (prefetch_wait_ms) and why. The agent of
agent_driver.py is long-lived: while it owns the store, a `hermes -z` process runs on the same home
and searches by meaning over the vectors stored in Tier 2 (no tier is reported as held elsewhere).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import harness
import pytest
from harness import HERE, HERMES, Home, Turn, block_of, home_fixture, require_hermes, run, user_text

require_hermes()


# -- the conversation (one agent process, asserted on by several tests) ------------------------------
ENGINE_AT_ANY_SIZE = "memory:\n  tier3:\n    engine_min_vectors: 0\n"


@pytest.fixture(scope="module")
def conversation(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The driver's conversation; while its agent holds the store, one `hermes -z` on the same home."""
    # The engine answers at any size, so the agent really holds it while the second process runs.
    home = Home(tmp_path_factory.mktemp("conversation"), harness.SETTINGS + ENGINE_AT_ANY_SIZE)
    hold = home.path / "hold"
    hold.mkdir()
    out = home.path / "driver.json"
    argv = [
        sys.executable,
        str(HERE / "agent_driver.py"),
        str(home.path),
        home.server.base_url,
        str(out),
        str(hold),
    ]
    stderr = home.path / "driver.stderr"
    with stderr.open("w") as err:
        driver = subprocess.Popen(
            argv,
            env=harness.env_for(home.path),
            cwd=home.path,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
        )
    try:
        deadline = time.monotonic() + 240
        while not (hold / "ready").exists():
            assert driver.poll() is None, f"driver exited early:\n{stderr.read_text()[-6000:]}"
            assert time.monotonic() < deadline, f"driver never got ready:\n{stderr.read_text()[-6000:]}"
            time.sleep(0.2)
        second = home.hermes("Search your memory for my dog, please.")
    finally:
        (hold / "release").write_text("done")
        returncode = driver.wait(timeout=240)
    assert returncode == 0, f"driver failed:\n{stderr.read_text()[-6000:]}"
    result: dict[str, Any] = json.loads(out.read_text())
    result.update(read_back(home))
    # The driver's requests (the second process ran while the driver waited).
    result["requests"] = [r for r in home.chat_requests() if r not in second.requests]
    result["second"] = second
    result["home"] = home.path
    result["refused_log"] = home.refused()
    yield result
    home.stop()


def read_back(home: Home) -> dict[str, Any]:
    """What the store holds after the driver exited, read as the next process would: first what the
    exit left queued, then (after ingesting and flushing it) the records."""
    with home.store() as api:
        out: dict[str, Any] = {
            "pending_at_exit": {
                "turns": api.tier2.ingest_queue.count(),
                "embeddings": api.tier2.embed_queue.count(),
            }
        }
        assert api.ingest_pending(timeout=120)["success"]
        flushed = api.flush(timeout=120)
        assert flushed["success"] and flushed["data"]["drained"], flushed
        out["episodes_biscuit"] = [s.episode.text for s in api.tier2.episodes.search("Biscuit", limit=10)]
        facts = api.fact_query(None, limit=200, min_confidence=0.0)["data"]
        out["facts"] = [
            {"content": f["content"], "source_type": f["source_type"], "source_id": f["source_id"]}
            for f in facts
        ]
        events = api.timeline_query(event_type="session", limit=10)["data"]
        out["session_events"] = [{"title": e["title"], "session_id": e["session_id"]} for e in events]
        out["pending"] = {
            "turns": api.tier2.ingest_queue.count(),
            "embeddings": api.tier2.embed_queue.count(),
        }
    return out


def test_activation_kept_the_rest_of_config_yaml(conversation: dict[str, Any]) -> None:
    text = (conversation["home"] / "config.yaml").read_text()
    assert text.startswith("# written by the e2e test; this comment must survive activation\n")
    assert "memory:\n  provider: nextlevel\n  memory_enabled: true\n" in text
    assert "context_length: 128000  # no endpoint probing" in text


def test_the_agent_loads_the_provider_its_tools_and_the_skill(conversation: dict[str, Any]) -> None:
    assert conversation["providers"] == ["nextlevel"]
    assert {"nextlevel_search", "nextlevel_remember", "nextlevel_memory", "memory"} <= set(
        conversation["tools"]
    )
    system = conversation["requests"][0]["messages"][0]["content"]
    assert "# Long-term memory (nextlevel)" in system
    assert "memory-recall" in system  # the skill is listed because nextlevel_search exists


def test_1_a_fact_from_turn_one_is_in_the_memory_context_of_a_later_turn(
    conversation: dict[str, Any],
) -> None:
    requests = conversation["requests"]
    first = next(r for r in requests if user_text(r).startswith("I adopted a beagle"))
    assert "Biscuit" not in (block_of(first) or "")  # nothing to recall yet (a block may say why)
    later = next(r for r in requests if user_text(r).startswith("What do you remember about my beagle?"))
    block = user_text(later).split("<memory-context>", 1)[1]
    assert "Biscuit" in block
    assert "</memory-context>" in block
    assert conversation["turns"]["later"]["final"] == "Plain answer (memory context attached: True)"


def test_2_a_scripted_nextlevel_search_returns_it(conversation: dict[str, Any]) -> None:
    results = conversation["turns"]["search"]["tool_results"]
    answer = json.loads(results[-1])
    texts = [hit["text"] for hit in answer["results"]]
    assert any("Biscuit" in text for text in texts), texts
    assert all(hit["date"] for hit in answer["results"])


def test_3_a_builtin_memory_write_is_mirrored_into_tier2(conversation: dict[str, Any]) -> None:
    mirrored = [f for f in conversation["facts"] if f["source_type"] == "memory"]
    assert [f["content"] for f in mirrored] == ["User prefers window seats."]
    assert mirrored[0]["source_id"].startswith("call_")  # provenance: the built-in tool call
    tool_written = [f for f in conversation["facts"] if f["source_type"] == "tool"]
    assert [f["content"] for f in tool_written] == ["Dana's sister Lena lives in Porto."]


def test_4_provider_errors_do_not_break_the_turn(conversation: dict[str, Any]) -> None:
    failed = conversation["turns"]["store_error"]
    assert failed["final"].startswith("Tool results:")
    assert json.loads(failed["tool_results"][-1]) == {
        "error": "disk I/O error (injected by the e2e test)",
        "error_type": "storage_error",
    }
    crashed = conversation["turns"]["exception"]
    assert crashed["final"].startswith("Tool results:")
    assert "unexpected failure (injected by the e2e test)" in json.loads(crashed["tool_results"][-1])["error"]


def test_session_end_recorded_the_session_and_the_next_open_finished_the_queues(
    conversation: dict[str, Any],
) -> None:
    assert conversation["open_stores_after_shutdown"] == 0
    # Shutdown need not wait for extraction (issue 12: exit at once); the next open finishes it.
    assert set(conversation["pending_at_exit"]) == {"turns", "embeddings"}  # left queued, not lost
    assert conversation["pending"] == {"turns": 0, "embeddings": 0}
    assert "I adopted a beagle named Biscuit last week." in conversation["episodes_biscuit"]
    events = [e for e in conversation["session_events"] if e["session_id"] == conversation["session_id"]]
    assert len(events) == 1, conversation["session_events"]


# -- a second process while the long-lived agent owns the engine (issue 13: it recalls by meaning) --
def test_a_second_process_searches_by_meaning_from_the_stored_vectors(
    conversation: dict[str, Any],
) -> None:
    second: Turn = conversation["second"]
    answer = second.tool_json()[-1]
    assert "meaning search (vectors)" in answer.get("tiers_answered", []), answer
    assert "meaning search (vectors)" not in answer.get("tiers_unavailable", {}), answer
    assert "owns the vector store" not in answer.get("note", ""), answer


def test_a_second_process_finds_the_owners_memories(conversation: dict[str, Any]) -> None:
    second: Turn = conversation["second"]
    answer = second.tool_json()[-1]
    assert any("Biscuit" in hit["text"] for hit in answer.get("results", [])), answer


def test_a_second_process_does_not_report_the_vectors_as_held_in_its_memory_block(
    conversation: dict[str, Any],
) -> None:
    second: Turn = conversation["second"]
    block = second.block or ""
    assert block.splitlines()[-1].startswith(("Tiers answered:", "Could not answer:")), block
    assert "owns the vector store" not in block, block


def test_the_conversation_stayed_on_loopback(conversation: dict[str, Any]) -> None:
    assert conversation["refused"] == []
    assert conversation["refused_log"] == []


# -- the `hermes` command ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def cli_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Home]:
    yield from home_fixture(tmp_path_factory, "cli")


def test_5_hermes_memory_status_lists_nextlevel_as_available(cli_home: Home) -> None:
    done = run([str(HERMES), "memory", "status"], cli_home.path)
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert "Provider:  nextlevel" in out
    assert "Plugin:    installed ✓" in out and "Status:    available ✓" in out
    assert "• nextlevel  (local) ← active" in out
    assert "database: " in out and "tier2.db" in out  # our get_status_config
    assert cli_home.refused() == []


def test_status_explains_a_hermes_python_without_the_package(cli_home: Home, tmp_path: Path) -> None:
    shadow = tmp_path / "shadow"
    (shadow / "hermes_memory").mkdir(parents=True)
    (shadow / "hermes_memory" / "__init__.py").write_text(
        "raise ImportError('not installed in this Python')\n"
    )
    done = run([str(HERMES), "memory", "status"], cli_home.path, shadow)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Status:    not available ✗" in done.stdout
    assert "hermes_memory cannot be imported by" in done.stdout
    assert "-m pip install" in done.stdout


def test_6_a_one_shot_run_leaves_its_turn_durable_for_the_next_process(cli_home: Home) -> None:
    turn = cli_home.hermes("My cat Miso loves tuna.")
    assert "Plain answer" in turn.stdout
    assert user_text(turn.requests[0]).startswith("My cat Miso loves tuna.")
    with cli_home.store() as api:
        # The process exited without waiting for extraction or embedding; the next one finishes them.
        assert api.ingest_pending(timeout=120)["data"]["pending"]["turns"] == 0
        flushed = api.flush(timeout=120)
        assert flushed["success"] and flushed["data"]["drained"], flushed
        texts = [e["text"] for e in api.get_latest(count=10)["data"]]
        assert texts[0] == "My cat Miso loves tuna." and len(texts) == 2, texts
        assert texts[1].startswith("Plain answer (memory context attached: "), texts
        assert [e["event_type"] for e in api.timeline_query(event_type="session")["data"]] == ["session"]
        assert any("Miso" in f["content"] for f in api.fact_query("Miso", min_confidence=0.0)["data"])
    assert cli_home.refused() == []
