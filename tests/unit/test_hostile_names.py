"""Hostile profile and scope names (issue 14, "Proofs extended"): a profile names a directory of the
memory home and a scope names an agent, so path-like names (``../``, separators, NUL, very long,
reserved names) get a clear ValidationError (ConfigError when read from a config file) at every edge —
MemoryAPI, the CLI, the Hermes provider, the provider's settings file, MCP and restore — and nothing is
ever created outside the memory home. Scope names that are accepted are data: no file is named by them.

Prints ``HOSTILE_NAMES=<tried> {edge: count}`` when the module finishes."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.cli import main
from hermes_memory.config import load_config
from hermes_memory.errors import ConfigError, HermesMemoryError, ValidationError
from hermes_memory.hermes import registry
from hermes_memory.hermes.provider import NextLevelProvider
from hermes_memory.mcp_server import serve_stdio

FAST: dict[str, Any] = {"tier3.embedding_model": "hashing", "tier3.backend": "memory"}
FAST_YAML = "memory:\n  tier3:\n    embedding_model: hashing\n    backend: memory\n"
PATHLIKE = [
    "..", ".", "../escape", "../../etc", "a/b", "/abs", "a\\b", "..\\..\\x", "x/../../y", "./x",
    "nul\x00byte", "line\nbreak", "tab\tx", "bell\x07", "\x7f", "x" * 65, "x" * 10_000, "", " ", "\u200b",
]  # fmt: skip
BAD_PROFILES = [
    *PATHLIKE,
    "-dash", ".hidden", "~", "~root", "$HOME", "${HOME}", "%2e%2e", "a b", "é", "🙂", "漢字",
    "con", "NUL", "aux", "com1", "LPT9", "con.txt", "skills", "memories", "profiles", "plugins", "Sessions",
]  # fmt: skip
BAD_SCOPES = [
    "..", ".", "../escape", "a/b", "/abs", "a\\b", "x/../../y", "nul\x00byte", "line\nbreak", "tab\tx",
    "\x7f", "x" * 101, "x" * 10_000, "", " ", "\ud800",
]  # fmt: skip
# Accepted as scope names (data, never a path): none of them may name a file.
ODD_SCOPES = ["user:alice", "con", "~", "$(id)", "%2e%2e", "Team Ω", "..hidden", "a..b", "🙂"]
NOT_TEXT: list[Any] = [7, 3.5, b"default", ["default"]]

COUNT: dict[str, int] = {}


def _count(edge: str) -> None:
    COUNT[edge] = COUNT.get(edge, 0) + 1


@pytest.fixture(scope="module", autouse=True)
def report(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    line = f"HOSTILE_NAMES={sum(COUNT.values())} " + " ".join(f"{k}={v}" for k, v in sorted(COUNT.items()))
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if reporter is None or capture is None:
        print(line)
        return
    with capture.global_and_fixture_disabled():  # shown even without -s
        reporter.write_line(line)


def _tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@pytest.fixture
def box(tmp_path: Path) -> Iterator[Path]:
    """A Hermes home inside a box: after the test nothing may exist in the box outside the home."""
    home = tmp_path / "home"
    home.mkdir()
    outside_before = _tree(tmp_path) - {"home"}
    yield home
    new = _tree(tmp_path) - outside_before
    escaped = {p for p in new if p != "home" and not p.startswith("home" + os.sep)}
    assert escaped == set(), escaped


@pytest.mark.parametrize("name", BAD_PROFILES + NOT_TEXT)
def test_memory_api_refuses_a_hostile_profile(box: Path, name: Any) -> None:
    _count("api_profile")
    with pytest.raises(ValidationError, match="profile"):
        MemoryAPI(hermes_home=box, profile=name, **FAST)
    _count("config_profile")
    with pytest.raises(ConfigError, match="profile"):
        load_config(hermes_home=box, profile=name)
    assert _tree(box) == set()  # refused before anything was created


@pytest.mark.parametrize("name", BAD_SCOPES + NOT_TEXT)
def test_memory_api_refuses_a_hostile_scope(box: Path, name: Any) -> None:
    _count("api_scope")
    with pytest.raises(ValidationError, match="scope"):
        MemoryAPI(hermes_home=box, scope=name, **FAST)
    _count("config_scope")
    with pytest.raises(ConfigError, match="scope"):
        load_config(hermes_home=box, **{"scope.name": name})
    assert _tree(box) == set()


def test_odd_but_valid_scopes_are_data_never_paths(box: Path) -> None:
    for scope in ODD_SCOPES:
        _count("api_scope_accepted")
        with MemoryAPI(hermes_home=box, scope=scope, **FAST) as api:
            assert api.remember_turn("Maya moved to Lisbon.", "Noted.", "s1")["success"]
            assert api.flush(timeout=30)["data"]["drained"]
            assert api.graph_rebuild()["success"]
            assert api.recall("Where does Maya live?")["data"]["hits"]
    names = {Path(p).name for p in _tree(box)}
    for scope in ODD_SCOPES:
        assert not any(scope in name for name in names if len(scope) > 2), (scope, names)


@pytest.mark.parametrize("name", BAD_PROFILES)
def test_cli_refuses_a_hostile_profile(box: Path, name: str, capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (("stats", "--json"), ("fact", "add", "Maya lives in Lisbon.")):
        _count("cli_profile")
        code = main([*argv, "--home", str(box), f"--profile={name}"])
        out, err = capsys.readouterr()
        assert code != 0 and out == "", out
        assert "--profile" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert _tree(box) == set()


@pytest.mark.parametrize("name", [s for s in BAD_SCOPES if "\ud800" not in s])
def test_cli_refuses_a_hostile_scope(box: Path, name: str, capsys: pytest.CaptureFixture[str]) -> None:
    _count("cli_scope")
    code = main(["stats", "--json", "--home", str(box), f"--scope={name}"])
    out, err = capsys.readouterr()
    assert code != 0 and out == "" and "--scope" in err and "Traceback" not in err, err
    assert _tree(box) == set()


# "" and None are how Hermes says "no profile": the default profile, by design.
@pytest.mark.parametrize("name", [n for n in BAD_PROFILES if n])
def test_provider_refuses_a_hostile_agent_identity(box: Path, name: str) -> None:
    _count("provider_identity")
    (box / "nextlevel.yaml").write_text(FAST_YAML)
    provider = NextLevelProvider()
    warnings: list[str] = []
    with pytest.raises(ValidationError, match="agent_identity"):
        provider.initialize(
            "s1", hermes_home=str(box), platform="cli", agent_identity=name, warning_callback=warnings.append
        )
    assert warnings and "agent_identity" in warnings[0]
    # Never silently "default": the tools say why memory is not there.
    assert "agent_identity" in provider.handle_tool_call("nextlevel_search", {"query": "x"})
    provider.sync_turn("Maya moved to Lisbon.", "Noted.", session_id="s1")  # a no-op, never a crash
    provider.shutdown()
    assert registry.open_stores() == {}
    assert _tree(box) == {"nextlevel.yaml"}


@pytest.mark.parametrize("name", [n for n in BAD_PROFILES if "\x00" not in n] + ["../../x", "a/b"])
def test_provider_settings_file_refuses_a_hostile_profile(box: Path, name: str) -> None:
    _count("settings_profile")
    import yaml

    (box / "nextlevel.yaml").write_text(
        yaml.safe_dump({"memory": {"profile": name, "tier3": {"embedding_model": "hashing"}}})
    )
    provider = NextLevelProvider()
    with pytest.raises(ConfigError, match="profile"):
        provider.initialize("s1", hermes_home=str(box), platform="cli", agent_identity="default")
    provider.shutdown()
    assert _tree(box) == {"nextlevel.yaml"}


@pytest.mark.parametrize("user_id", ["../x", "a/b", "x" * 200, "nul\x00x", "line\nx"])
def test_provider_per_user_scope_refuses_a_hostile_user_id(box: Path, user_id: str) -> None:
    _count("provider_user_id")
    (box / "nextlevel.yaml").write_text(
        "memory:\n  scope:\n    per_user: true\n  tier3:\n    embedding_model: hashing\n    backend: memory\n"
    )
    provider = NextLevelProvider()
    with pytest.raises(HermesMemoryError, match="scope"):
        provider.initialize(
            "s1", hermes_home=str(box), platform="cli", agent_identity="default", user_id=user_id
        )
    provider.shutdown()
    assert registry.open_stores() == {}


@pytest.mark.parametrize("name", BAD_PROFILES)
def test_mcp_refuses_a_hostile_profile_before_opening_anything(box: Path, name: str) -> None:
    _count("mcp_profile")
    with pytest.raises(ValidationError, match="profile"):
        serve_stdio(home=box, profile=name)
    assert _tree(box) == set()


@pytest.mark.parametrize("name", BAD_SCOPES)
def test_mcp_refuses_a_hostile_scope_before_opening_anything(box: Path, name: str) -> None:
    _count("mcp_scope")
    with pytest.raises(ValidationError, match="scope"):
        serve_stdio(home=box, scope=name)
    assert _tree(box) == set()


@pytest.mark.parametrize("name", BAD_PROFILES)
def test_restore_refuses_a_hostile_profile(box: Path, name: str, tmp_path: Path) -> None:
    _count("restore_profile")
    result = MemoryAPI.restore(tmp_path / "no-backup", hermes_home=box, profile=name)
    assert not result["success"] and result["meta"]["error_type"] == "invalid_input", result
    assert "profile" in result["error"]
    assert _tree(box) == set()
