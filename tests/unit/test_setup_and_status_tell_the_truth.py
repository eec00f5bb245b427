"""Setup, status, MCP and restore say what is true: an embedding endpoint nothing listens on is not
"ok", the MCP server reports hermes-memory's version (not the mcp library's), and restore says the
stored vectors are reused rather than "queued for re-embedding".
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from hermes_settings import listening_url

from hermes_memory import __version__
from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.cli import main as cli_main
from hermes_memory.hermes import status

SETTINGS: dict[str, Any] = {"tier3.embedding_model": "hashing", "tier3.backend": "memory"}


def test_an_openai_endpoint_nothing_listens_on_is_a_problem_not_ok(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HM_TRUTH_KEY", "sk-test")
    with listening_url() as url:
        pass  # closed: nothing listens there any more
    home = tmp_path / "home"
    home.mkdir()
    (home / "nextlevel.yaml").write_text(
        "memory:\n  tier3:\n    backend: memory\n    embedding_model: openai\n"
        f"    embedding_base_url: {url}\n    api_key_env: HM_TRUTH_KEY\n    embedding_dim: 1536\n"
    )
    report = status.collect(home, check=False, hermes_python=sys.executable)
    assert any(f"nothing answers at {url}" in p for p in report.problems), report.problems
    assert "status:          ok" not in status.render(report)


def test_the_mcp_server_reports_the_hermes_memory_version(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    from hermes_memory.mcp_server import build_server

    with MemoryAPI(hermes_home=tmp_path, **SETTINGS) as api:
        server = build_server(api)
        options = server._mcp_server.create_initialization_options()
    assert options.server_version == __version__, options.server_version


def test_restore_says_stored_vectors_are_reused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "nextlevel.yaml").write_text(
        "memory:\n  tier3:\n    embedding_model: hashing\n    backend: memory\n"
    )
    with MemoryAPI(hermes_home=home, **SETTINGS) as api:
        assert api.remember_turn("I work at Siemens as an engineer.", "Noted.", "s1")["success"]
        assert api.flush(60)["success"]
        assert api.backup(str(tmp_path / "backup"))["success"]
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    (fresh / "nextlevel.yaml").write_text((home / "nextlevel.yaml").read_text())
    assert cli_main(["restore", str(tmp_path / "backup"), "--home", str(fresh)]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "queued for re-embedding" not in out
    assert "stored vectors came with the backup and are reused" in out, out
