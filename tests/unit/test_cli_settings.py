"""One configuration: the CLI, doctor and status read the settings Hermes' provider reads
(``$HERMES_HOME/nextlevel.yaml``), global options go before or after the command, hints repeat the home
that was given, `history` knows the user by every name, and exports and backups are private."""

from __future__ import annotations

import argparse
import json
import os
import stat
from pathlib import Path

import pytest

from hermes_memory.cli import main
from hermes_memory.cli._common import with_home
from hermes_memory.errors import ConfigError
from hermes_memory.hermes.settings import hermes_profile, load_memory_config, load_settings

SETTINGS = (
    "provider:\n  prefetch_budget_tokens: 200\n"
    "memory:\n  tier3:\n    embedding_model: hashing\n    backend: memory\n"
)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("HERMES_HOME", raising=False)
    path = tmp_path / "hermes"
    path.mkdir()
    (path / "nextlevel.yaml").write_text(SETTINGS)
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse usage errors
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


def stats_tier3(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    tier3: dict[str, object] = json.loads(out)["data"]["tier3"]
    return tier3


def test_the_cli_reads_the_settings_hermes_reads(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The default is the embedded qdrant with the local model; the home's settings say otherwise.
    assert stats_tier3(capsys, "stats", "--json", "--home", str(home))["backend"] == "memory"
    monkeypatch.setenv("HERMES_HOME", str(home))
    assert stats_tier3(capsys, "stats", "--json") == {
        **stats_tier3(capsys, "stats", "--json"),
        "backend": "memory",
    }
    assert stats_tier3(capsys, "stats", "--json")["embedder"] == "hashing"
    # exactly the Config the provider opens for this home (registry: realpath home, Hermes' profile)
    provider_config = load_settings(home).memory_config(os.path.realpath(home), hermes_profile(home))
    assert load_memory_config(home).config == provider_config
    assert load_memory_config().config == provider_config  # from $HERMES_HOME


def test_config_takes_a_nextlevel_yaml_or_a_plain_config(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "elsewhere"
    other.mkdir()
    settings_file = str(home / "nextlevel.yaml")
    assert (
        stats_tier3(capsys, "stats", "--json", "--home", str(other), "--config", settings_file)["backend"]
        == "memory"
    )
    plain = tmp_path / "plain.yaml"
    plain.write_text("tier3:\n  embedding_model: hashing\n  backend: memory\nprofile: work\n")
    resolved = load_memory_config(other, config_path=plain)
    assert resolved.config.profile == "work" and resolved.config.tier3.backend == "memory"
    assert resolved.source == plain
    typo = tmp_path / "typo.yaml"
    typo.write_text("provider: {}\nmemroy: {}\n")
    with pytest.raises(ConfigError, match="unknown section"):
        load_memory_config(other, config_path=typo)
    empty = tmp_path / "empty.yaml"
    empty.write_text("")  # an empty file is a plain config file with every default
    assert load_memory_config(other, config_path=empty).config == load_memory_config(other).config
    listed = tmp_path / "list.yaml"
    listed.write_text("- tier3\n")
    with pytest.raises(ConfigError, match="expected a mapping"):
        load_memory_config(other, config_path=listed)


def test_a_profile_home_uses_the_profile_hermes_uses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    profile_home = tmp_path / ".hermes" / "profiles" / "work"
    profile_home.mkdir(parents=True)
    config = load_memory_config(profile_home).config
    assert config.profile == "work" == hermes_profile(profile_home)
    assert config.db_path == profile_home / "work" / "memory" / "tier2.db"
    assert load_memory_config(profile_home, profile="other").config.profile == "other"


def test_global_options_before_or_after_the_command(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = run(capsys, "--home", str(home), "--json", "stats")
    after = run(capsys, "stats", "--home", str(home), "--json")
    assert before[0] == after[0] == 0
    assert (
        json.loads(before[1])["data"]["tier2"]["db_path"] == json.loads(after[1])["data"]["tier2"]["db_path"]
    )
    assert str(home) in json.loads(before[1])["data"]["tier2"]["db_path"]
    code, out, _ = run(capsys, "--hermes-home", str(home), "fact", "add", "Project Atlas ships on Fridays")
    assert code == 0 and out.startswith("stored")
    code, out, _ = run(capsys, "--json", "fact", "query", "Atlas", "--home", str(home))
    assert code == 0 and json.loads(out)["data"][0]["content"] == "Project Atlas ships on Fridays"
    # an option the command does not take is one usage error, wherever it is written
    code, _, err = run(capsys, "--profile", "x", "install")
    assert code == 2 and err.count("\n") == 1 and "--profile does not apply to 'install'" in err


def test_hints_repeat_the_home_that_was_given(home: Path) -> None:
    args = argparse.Namespace(home=str(home))
    text = "run `hermes-memory reindex` to rebuild it, then `hermes-memory doctor --repair`"
    assert with_home(args, text) == (
        f"run `hermes-memory reindex --hermes-home {home}` to rebuild it, "
        f"then `hermes-memory doctor --repair --hermes-home {home}`"
    )
    assert with_home(argparse.Namespace(home=None), text) == text


def test_doctor_checks_the_store_hermes_uses(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "doctor", "--home", str(home))
    first = out.splitlines()[0]
    assert code == 0 and first.startswith(f"checking {os.path.realpath(home)}/default/memory/tier2.db")
    assert "vectors: memory, embedder hashing" in first and f"settings {home / 'nextlevel.yaml'}" in first


def test_history_finds_the_user_by_every_name(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (home / "memories").mkdir()
    (home / "memories" / "USER.md").write_text("Name: Maya\n§\nPrefers short answers")
    for text in ("I live in Hamburg.", "I moved to Lisbon."):
        assert run(capsys, "remember", text, "--home", str(home))[0] == 0
    code, out, _ = run(capsys, "history", "the user", "--home", str(home), "--json")
    stored = json.loads(out)["data"]
    assert code == 0 and any("Lisbon" in row["content"] for row in stored)
    for name in ("user", "me", "Maya", "maya"):
        code, out, _ = run(capsys, "history", name, "--home", str(home), "--json")
        assert code == 0 and json.loads(out)["data"] == stored, name
    code, out, _ = run(capsys, "history", "Lena", "--home", str(home))
    assert code == 0 and out.strip() == "(no facts)"  # another person is not the user


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_exports_and_backups_are_private(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run(capsys, "remember", "I live in Lisbon.", "--home", str(home))
    (home / "memories").mkdir(exist_ok=True)
    (home / "memories" / "USER.md").write_text("Name: Maya")
    os.chmod(home / "memories" / "USER.md", 0o644)
    export = tmp_path / "export.json"
    export.write_text("old")
    os.chmod(export, 0o644)  # an existing, readable file is made private too
    assert run(capsys, "export", str(export), "--home", str(home))[0] == 0
    assert mode(export) == 0o600 and json.loads(export.read_text())["tier2"]["episodes"]
    backup = tmp_path / "backup"
    assert run(capsys, "backup", str(backup), "--home", str(home))[0] == 0
    found = [backup, *backup.rglob("*")]
    assert any(p.name == "USER.md" for p in found)
    assert all(mode(p) == (0o700 if p.is_dir() else 0o600) for p in found), {
        str(p): oct(mode(p)) for p in found
    }
