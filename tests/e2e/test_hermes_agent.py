"""End to end against the real Hermes Agent (hermes-agent 0.19.0): `hermes-memory install --activate`
into a temporary HERMES_HOME, a scripted LLM on 127.0.0.1, and the agent run in subprocesses (its
in-process API through agent_driver.py, and the `hermes` command itself). Every Hermes process runs
under the offline guard; the tests assert nothing tried to leave the machine.

The provider uses the hashing embedder and the in-process vector backend here (nextlevel.yaml), so
the run needs no model; prefetch may wait up to 3 s instead of 150 ms because CI machines are slow
and a miss would make the memory-context assertion flaky.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import fake_llm
import offline_guard
import pytest

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.cli import main as hermes_memory_cli
from hermes_memory.hermes.settings import hermes_profile, load_settings

HERE = Path(__file__).resolve().parent
HERMES = Path(sys.executable).parent / "hermes"
SETTINGS = """\
provider:
  prefetch_wait_ms: 3000
memory:
  tier3:
    embedding_model: hashing
    backend: memory
"""


def _hermes_installed() -> bool:
    try:
        import agent.memory_provider  # noqa: F401  (Hermes' package)
    except ImportError:
        return False
    return HERMES.exists()


if not _hermes_installed():
    if os.environ.get("CI"):
        pytest.fail("hermes-agent is not installed: the dev extra pins it for these tests", pytrace=False)
    pytest.skip("hermes-agent is not installed (pip install -e '.[dev]')", allow_module_level=True)


def make_home(root: Path, base_url: str) -> Path:
    """A HERMES_HOME with a hand-written config.yaml, then `hermes-memory install --activate`."""
    home = root / "hermes-home"
    home.mkdir()
    (home / "config.yaml").write_text(
        "# written by the e2e test; this comment must survive activation\n"
        "model:\n"
        "  default: fake-model\n"
        "  provider: custom\n"
        f"  base_url: {base_url}\n"
        "  api_key: sk-fake-local\n"
        "  context_length: 128000  # no endpoint probing\n"
        "memory:\n"
        "  memory_enabled: true\n"
        "  user_profile_enabled: true\n",
        encoding="utf-8",
    )
    assert hermes_memory_cli(["install", "--hermes-home", str(home), "--activate"]) == 0
    (home / "nextlevel.yaml").write_text(SETTINGS, encoding="utf-8")
    return home


def env_for(home: Path, *extra_path: Path) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("OPENROUTER")
    }
    python_path = [str(p) for p in extra_path] + [str(HERE / "guard_site")]
    if env.get("PYTHONPATH"):
        python_path.append(env["PYTHONPATH"])
    env.update(
        HERMES_HOME=str(home),
        PYTHONPATH=os.pathsep.join(python_path),
        E2E_GUARD_LOG=str(home / "refused.log"),
        NO_PROXY="127.0.0.1,localhost",
        no_proxy="127.0.0.1,localhost",
    )
    return env


def run(
    argv: list[str], home: Path, *extra_path: Path, timeout: float = 240
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        env=env_for(home, *extra_path),
        cwd=home,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def open_store(home: Path) -> MemoryAPI:
    return MemoryAPI(load_settings(home).memory_config(str(home), hermes_profile(home)))


def user_text(request: dict[str, Any]) -> str:
    users = [m for m in request["messages"] if m.get("role") == "user"]
    return fake_llm.text_of(users[-1]["content"])


# -- the conversation (one agent process, asserted on by several tests) ------------------------------
@pytest.fixture(scope="module")
def conversation(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    server = fake_llm.start()
    home = make_home(tmp_path_factory.mktemp("conversation"), server.base_url)
    out = home / "driver.json"
    done = run([sys.executable, str(HERE / "agent_driver.py"), str(home), server.base_url, str(out)], home)
    assert done.returncode == 0, f"driver failed:\n{done.stdout[-3000:]}\n{done.stderr[-6000:]}"
    result: dict[str, Any] = json.loads(out.read_text())
    result["requests"] = server.chat_requests()
    result["home"] = home
    result["refused_log"] = offline_guard.read_log(home / "refused.log")
    yield result
    server.stop()


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
    assert "<memory-context>" not in user_text(first)
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
    assert set(conversation["pending_at_exit"]) == {"turns", "embeddings"}  # left queued, not lost
    assert conversation["pending"] == {"turns": 0, "embeddings": 0}
    assert "I adopted a beagle named Biscuit last week." in conversation["episodes_biscuit"]
    events = conversation["session_events"]
    assert len(events) == 1 and events[0]["session_id"] == conversation["session_id"]


def test_the_conversation_stayed_on_loopback(conversation: dict[str, Any]) -> None:
    assert conversation["refused"] == []
    assert conversation["refused_log"] == []


# -- the `hermes` command ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def cli_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, fake_llm.FakeLLM]]:
    server = fake_llm.start()
    yield make_home(tmp_path_factory.mktemp("cli"), server.base_url), server
    server.stop()


def test_5_hermes_memory_status_lists_nextlevel_as_available(cli_home: tuple[Path, Any]) -> None:
    home, _ = cli_home
    done = run([str(HERMES), "memory", "status"], home)
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert "Provider:  nextlevel" in out
    assert "Plugin:    installed ✓" in out and "Status:    available ✓" in out
    assert "• nextlevel  (local) ← active" in out
    assert "database: " in out and "tier2.db" in out  # our get_status_config
    assert offline_guard.read_log(home / "refused.log") == []


def test_status_explains_a_hermes_python_without_the_package(
    cli_home: tuple[Path, Any], tmp_path: Path
) -> None:
    home, _ = cli_home
    shadow = tmp_path / "shadow"
    (shadow / "hermes_memory").mkdir(parents=True)
    (shadow / "hermes_memory" / "__init__.py").write_text(
        "raise ImportError('not installed in this Python')\n"
    )
    done = run([str(HERMES), "memory", "status"], home, shadow)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Status:    not available ✗" in done.stdout
    assert "hermes_memory cannot be imported by" in done.stdout
    assert "-m pip install" in done.stdout


def test_6_a_one_shot_run_leaves_its_turn_durable_for_the_next_process(
    cli_home: tuple[Path, fake_llm.FakeLLM],
) -> None:
    home, server = cli_home
    done = run([str(HERMES), "-z", "My cat Miso loves tuna.", "--toolsets", "memory"], home)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Plain answer" in done.stdout
    assert any(user_text(r).startswith("My cat Miso loves tuna.") for r in server.chat_requests())
    with open_store(home) as api:
        # The process exited without waiting for extraction or embedding; the next one finishes them.
        assert api.ingest_pending(timeout=30)["data"]["pending"]["turns"] == 0
        assert api.flush(timeout=60)["data"]["drained"]
        texts = [e["text"] for e in api.get_latest(count=10)["data"]]
        assert texts == ["My cat Miso loves tuna.", "Plain answer (memory context attached: False)"]
        assert (api.tier2.ingest_queue.count(), api.tier2.embed_queue.count()) == (0, 0)
        assert [e["event_type"] for e in api.timeline_query(event_type="session")["data"]] == ["session"]
        assert any("Miso" in f["content"] for f in api.fact_query("Miso", min_confidence=0.0)["data"])
    assert offline_guard.read_log(home / "refused.log") == []
