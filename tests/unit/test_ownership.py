"""The distribution's own name, and what `status`, `doctor` and `install` say when another installed
distribution claims the import package ``hermes_memory`` or the ``hermes-memory`` command."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

from hermes_memory._dist import COMMAND, DIST_NAME, SECOND_COMMAND, SUMMARY
from hermes_memory.cli import main
from hermes_memory.hermes import install, ownership

ROOT = Path(__file__).resolve().parents[2]
OTHER_SUMMARY = "Persistent, structured memory layer for LLM agents — MCP-native"
HASHING = "memory:\n  tier3:\n    embedding_model: hashing\n    backend: memory\n"


def test_pyproject_names_the_distribution_its_summary_and_both_commands() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["name"] == DIST_NAME == "hermes-memory-tiers"
    assert project["description"] == SUMMARY
    assert project["scripts"] == {COMMAND: "hermes_memory.cli:main", SECOND_COMMAND: "hermes_memory.cli:main"}


def test_importlib_metadata_maps_hermes_memory_to_this_distribution() -> None:
    # Holds in an environment made by the README's commands (pip install -e '.[dev]').
    assert DIST_NAME in metadata.packages_distributions()["hermes_memory"]
    commands = metadata.entry_points(group="console_scripts", name=COMMAND)
    assert DIST_NAME in {ep.dist.name for ep in commands if ep.dist}


def test_another_project_is_a_clash_this_one_under_any_name_is_not() -> None:
    assert ownership.clashes(ownership.Owners({DIST_NAME: ""}, {"Hermes_Memory.Tiers": ""}), "py") == []
    assert ownership.clashes(ownership.Owners({"hermes-memory": SUMMARY}, {}), "py") == []  # earlier name
    other = ownership.Owners({"hermes-memory": OTHER_SUMMARY, DIST_NAME: SUMMARY}, {"hermes-memory": ""})
    found = ownership.clashes(other, "/venv/bin/python")
    assert [c.problem.split(" belongs")[0] for c in found] == [
        "in this Python, the import package hermes_memory",
        "in this Python, the `hermes-memory` command",
    ]
    assert "(hermes-memory), not hermes-memory-tiers" in found[0].problem
    assert found[0].fix == (
        "/venv/bin/python -m pip uninstall -y hermes-memory && /venv/bin/python -m pip install "
        f"--force-reinstall --no-deps -e {install.source_root()}"
    )


@pytest.fixture
def other_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The other project's install record on sys.path: it claims hermes_memory and the command."""
    site = tmp_path / "site"
    info = site / "hermes_memory-0.3.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: hermes-memory\nVersion: 0.3.0\nSummary: {OTHER_SUMMARY}\n"
    )
    (info / "top_level.txt").write_text("hermes_memory\n")
    (info / "entry_points.txt").write_text("[console_scripts]\nhermes-memory = hermes_memory.server:main\n")
    (info / "RECORD").write_text("hermes_memory/__init__.py,,\n")
    monkeypatch.syspath_prepend(str(site))
    return site


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "hermes"
    install.install(path, activate=True)
    (path / "nextlevel.yaml").write_text(HASHING)
    return path


def test_status_names_the_other_distribution_and_the_fix(
    other_project: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["status", "--hermes-home", str(home), "--hermes-python", sys.executable, "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert any("belongs to another distribution (hermes-memory)" in p for p in report["problems"])
    fix = f"{sys.executable} -m pip uninstall -y hermes-memory && "
    assert any(f.startswith(fix) for f in report["fixes"])


def test_doctor_names_the_other_distribution_and_fails(
    other_project: Path, home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["doctor", "--hermes-home", str(home)]) == 1
    out = capsys.readouterr().out
    assert "! install: in this Python, the import package hermes_memory belongs to another" in out
    assert f"fix: {sys.executable} -m pip uninstall -y hermes-memory && " in out


def test_install_says_it_is_not_active_and_prints_the_fix(
    other_project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "fresh"
    assert main(["install", "--hermes-home", str(home), "--activate", "--hermes-python", sys.executable]) == 1
    out = capsys.readouterr().out
    assert "NOT active" in out and "belongs to another distribution (hermes-memory)" in out
    assert f"fix: {sys.executable} -m pip uninstall -y hermes-memory && " in out


def test_status_checks_hermes_python_in_another_environment_too(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Hermes' own venv: it sees this environment's packages and, there only, the other project's record.
    other_site = tmp_path / "other-site"
    info = other_site / "hermes_memory-0.3.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: hermes-memory\nVersion: 0.3.0\nSummary: {OTHER_SUMMARY}\n"
    )
    (info / "top_level.txt").write_text("hermes_memory\n")
    venv = tmp_path / "hermes-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    purelib = next((venv / "lib").glob("python3*/site-packages"))
    seen = [str(other_site), *(p for p in sys.path if p and Path(p).is_dir())]
    (purelib / "zz_paths.pth").write_text("\n".join(seen) + "\n", encoding="utf-8")
    python = str(venv / "bin" / "python")
    assert main(["status", "--hermes-home", str(home), "--hermes-python", python, "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    claimed = "in Hermes' Python, the import package hermes_memory belongs to another distribution"
    assert any(p.startswith(claimed) for p in report["problems"]), report["problems"]
    assert any(f.startswith(f"{python} -m pip uninstall -y hermes-memory && ") for f in report["fixes"])
