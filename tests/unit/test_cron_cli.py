"""`hermes-memory maintain`: runs every job (or one, or the due ones) with progress on stderr and a
summary line per job on stdout, exit 0; --json prints the envelope; --status shows the schedules; a
failing job exits 1 with one error line."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.cli import main
from hermes_memory.cron import jobs
from hermes_memory.cron.context import JobContext
from hermes_memory.errors import BackendError

Run = Callable[..., tuple[int, str, str]]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()  # the CLI refuses a --home that does not exist (a typo)
    return path


@pytest.fixture
def cli(
    tmp_path: Path, home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Run:
    monkeypatch.delenv("HERMES_HOME", raising=False)
    config = tmp_path / "config.yaml"
    config.write_text("tier3:\n  embedding_model: hashing\n  backend: memory\n", encoding="utf-8")

    def run(*args: str) -> tuple[int, str, str]:
        try:
            code = main([*args, "--home", str(home), "--config", str(config)])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        out, err = capsys.readouterr()
        return code, out, err

    return run


def seed(home: Path) -> None:
    fast: dict[str, Any] = {"tier3.embedding_model": "hashing", "tier3.backend": "memory"}
    with MemoryAPI(hermes_home=home, **fast) as api:
        api.fact_store("Maya adopted a beagle puppy named Rex")
        api.tier2.facts.store("maya adopted a beagle puppy named rex!")
        api.entity_ensure("Bob", "person")
        api.entity_ensure("Robert", "person", aliases=["Bob"])


def test_maintain_runs_every_job_with_progress_and_exits_0(cli: Run, home: Path) -> None:
    seed(home)
    code, out, err = cli("maintain")
    assert code == 0, err
    lines = out.splitlines()
    assert [line.split()[0] for line in lines] == list(jobs.JOB_NAMES)
    assert all(line.split()[1] == "ok" for line in lines)
    assert "near_duplicates_merged=1" in lines[0] and "entities_merged=1" in lines[0]
    for job in jobs.JOB_NAMES:  # a progress bar per job on stderr
        assert job in err
    assert "[##############################]" in err


def test_maintain_one_job_as_json(cli: Run, home: Path) -> None:
    seed(home)
    code, out, _ = cli("maintain", "--job", "consolidate", "--json")
    assert code == 0
    envelope: dict[str, Any] = json.loads(out)
    assert envelope["success"] and list(envelope["data"]["jobs"]) == ["consolidate"]
    run = envelope["data"]["jobs"]["consolidate"]
    assert run["status"] == "ok" and run["triggered_by"] == "manual"
    assert run["result"]["near_duplicates_merged"] == 1
    # the run is recorded: --status shows it
    code, out, _ = cli("maintain", "--status")
    assert code == 0
    rows = {line.split()[0]: line for line in out.splitlines()[1:-1]}
    assert set(rows) == set(jobs.JOB_NAMES)
    assert "0 3 * * *" in rows["consolidate"] and " ok " in rows["consolidate"]
    assert "never" in rows["prune"]


def test_maintain_due_exits_0(cli: Run) -> None:
    code, out, err = cli("maintain", "--due")
    assert code == 0, err
    assert out.strip() == "nothing due" or out.split()[0] == "embed_queue"


def test_a_failing_job_exits_1_after_the_others_ran(cli: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    def down(ctx: JobContext, *, now: float, progress: Any = None) -> dict[str, Any]:
        raise BackendError("vector server unreachable")

    monkeypatch.setitem(jobs._JOBS, "embed_queue", down)
    code, out, err = cli("maintain", "--all")
    assert code == 1
    assert "embed_queue   failed" in out and "graph_refresh ok" in out
    assert err.splitlines()[-1] == "error: embed_queue failed: vector server unreachable"


def test_unknown_job_is_a_usage_error(cli: Run) -> None:
    code, out, err = cli("maintain", "--job", "defrag")
    assert code == 2 and out == ""
    assert "invalid choice" in err
    code, _, err = cli("maintain", "--job", "prune", "--all")
    assert code == 2 and "not allowed with" in err
