"""`hermes-memory status`: what is installed, which Python Hermes runs in, and whether it can import us."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

import pytest
from hermes_settings import listening_url

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.cli import main
from hermes_memory.hermes import install, status
from hermes_memory.hermes.settings import load_memory_config

HASHING = "memory:\n  tier3:\n    embedding_model: hashing\n    backend: memory\n"


def script(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "hermes"
    install.install(path, activate=True)
    (path / "nextlevel.yaml").write_text(HASHING)
    return path


def test_all_good_when_hermes_python_imports_the_package(home: Path) -> None:
    report = status.collect(home, hermes_python=sys.executable)
    assert report.problems == [] and report.ok
    assert report.plugin_ours and report.skill_installed and report.configured_provider == "nextlevel"
    assert report.probe["hermes_memory"]["version"] == report.version
    assert "status:          ok" in status.render(report)


def test_another_environment_is_named_with_the_fix(home: Path, tmp_path: Path) -> None:
    # A Python that cannot see this environment's packages (no site-packages), like another venv.
    other = script(tmp_path / "other-python", f'#!/bin/sh\nexec "{sys.executable}" -I -S "$@"\n')
    report = status.collect(home, hermes_python=str(other))
    assert not report.ok
    assert "cannot import hermes_memory" in report.problems[0]
    assert "Hermes will run without this provider" in report.problems[0]
    # The settings (hashing, in-memory vectors) need no extra; the other Python has no pip either.
    assert report.fixes[0] == f"{other} -m ensurepip && {other} -m pip install -e {install.source_root()}"
    text = status.render(report)
    assert "problems:" in text and f"fix: {report.fixes[0]}" in text


def test_missing_packages_for_the_configured_tiers_are_reported(home: Path) -> None:
    (home / "nextlevel.yaml").write_text(
        "memory:\n  tier3:\n    backend: chroma\n    embedding_model: hashing\n"
    )
    report = status.collect(home, hermes_python=sys.executable)
    assert "chromadb" in report.probe["modules"]
    assert report.ok == report.probe["modules"]["chromadb"]


def test_not_installed_not_active_and_no_hermes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setattr(sys, "executable", str(tmp_path / "bin" / "python"))  # no `hermes` beside it
    report = status.collect(tmp_path)
    assert report.hermes_python is None
    joined = " | ".join(report.problems)
    assert "not installed" in joined and "not using it" in joined and "cannot find the Python" in joined
    assert "--hermes-python" in " ".join(report.fixes)


def test_hermes_python_is_read_from_the_hermes_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script(bin_dir / "hermes", "#!/opt/hermes/venv/bin/python3.11\nimport sys\n")
    monkeypatch.setenv("PATH", str(bin_dir))
    assert status.find_hermes_python() == (str(bin_dir / "hermes"), "/opt/hermes/venv/bin/python3.11")
    script(bin_dir / "hermes", "#!/usr/bin/env python3\n")
    script(bin_dir / "python3", "#!/bin/sh\n")
    assert status.find_hermes_python()[1] == str(bin_dir / "python3")
    assert status.find_hermes_python("/explicit/python") == (None, "/explicit/python")
    # not on PATH: the `hermes` beside this Python (the same virtualenv, not activated)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    venv_bin = tmp_path / "venv" / "bin"
    venv_bin.mkdir(parents=True)
    script(venv_bin / "hermes", f"#!{venv_bin / 'python'}\n")
    monkeypatch.setattr(sys, "executable", str(venv_bin / "python"))
    assert status.find_hermes_python() == (str(venv_bin / "hermes"), str(venv_bin / "python"))


def test_cli_status_exit_codes_and_json(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["status", "--hermes-home", str(home), "--hermes-python", sys.executable]) == 0
    assert "ok, Hermes will load the nextlevel provider" in capsys.readouterr().out
    code = main(["status", "--hermes-home", str(home / "nowhere"), "--no-check", "--json",
                 "--hermes-python", sys.executable])  # fmt: skip
    report = json.loads(capsys.readouterr().out)
    assert code == 1 and report["ok"] is False and report["plugin_installed"] is False
    assert os.path.basename(report["settings_file"]) == "nextlevel.yaml"


def st_model(folder: Path, dim: int) -> Path:
    (folder / "1_Pooling").mkdir(parents=True)
    (folder / "modules.json").write_text("[]")
    (folder / "1_Pooling" / "config.json").write_text(json.dumps({"word_embedding_dimension": dim}))
    return folder


@pytest.mark.parametrize(
    ("tier3", "why"),
    [
        ("embedding_model: sentence-transformers", "has no model"),
        (
            "embedding_model: sentence-transformers\n    embedding_model_name: /nowhere/model",
            "neither a folder",
        ),
        ("embedding_model: openai", "has no endpoint"),
        (
            "embedding_model: openai\n    embedding_base_url: http://127.0.0.1:9/v1\n"
            "    api_key_env: HM_TEST_UNSET_KEY\n    embedding_dim: 1536",
            "HM_TEST_UNSET_KEY is not set",
        ),
        (
            "embedding_model: openai\n    embedding_base_url: http://127.0.0.1:9/v1",
            "makes 1536-dimensional vectors but memory.tier3.embedding_dim is 384",
        ),
    ],
)
def test_an_embedder_that_cannot_work_is_not_ok(home: Path, tier3: str, why: str) -> None:
    (home / "nextlevel.yaml").write_text(f"memory:\n  tier3:\n    backend: memory\n    {tier3}\n")
    report = status.collect(home, check=False)
    assert not report.ok
    assert any("the embedder cannot work" in p and why in p for p in report.problems), report.problems
    text = status.render(report)
    assert "status:          ok" not in text and "problems:" in text


def test_a_local_model_folder_and_a_key_in_dotenv_can_work(home: Path, tmp_path: Path) -> None:
    model = st_model(tmp_path / "my-model", 384)
    (home / "nextlevel.yaml").write_text(
        f"memory:\n  tier3:\n    backend: memory\n    embedding_model: sentence-transformers\n"
        f"    embedding_model_name: {model}\n"
    )
    report = status.collect(home, check=False, hermes_python=sys.executable)
    assert report.problems == [] and report.embedder == f"sentence-transformers ({model})"
    (home / ".env").write_text("HM_TEST_DOTENV_KEY=sk-local\n")
    yaml = (
        "memory:\n  tier3:\n    backend: memory\n    embedding_model: openai\n"
        "    embedding_base_url: {url}\n    api_key_env: HM_TEST_DOTENV_KEY\n    embedding_dim: 1536\n"
    )
    with listening_url() as url:
        (home / "nextlevel.yaml").write_text(yaml.format(url=url))
        assert status.collect(home, check=False, hermes_python=sys.executable).problems == []
    # the same endpoint with nothing listening: status says so instead of "ok"
    report = status.collect(home, check=False, hermes_python=sys.executable)
    assert any(f"nothing answers at {url}" in p for p in report.problems), report.problems
    assert "status:          ok" not in status.render(report)


def test_status_shows_the_settings_hermes_uses_and_what_is_pending(home: Path) -> None:
    from hermes_memory.api.memory_api import MemoryAPI
    from hermes_memory.hermes.settings import load_memory_config

    (home / "nextlevel.yaml").write_text(
        "memory:\n  tier3:\n    embedding_model: hashing\n    backend: chroma\n"
    )
    report = status.collect(home, check=False)
    assert report.embedder == "hashing (no model)" and report.vector_backend == "chroma"
    assert report.pending == {"turns_to_ingest": 0, "embeddings": 0, "turns_behind": 0}
    # A turn queued by a process that exits before ingesting it (no worker here) stays pending.
    config = load_memory_config(home).config
    with MemoryAPI(config) as api:
        assert api.remember_turn("I live in Lisbon.", "Noted.", "s1")["success"]
        assert api.remember_turn("I have a dog.", "Nice.", "s1")["success"]
    report = status.collect(home, check=False)
    assert report.pending["turns_to_ingest"] == 2
    assert "2 turn(s) waiting to be ingested" in status.render(report)
    with MemoryAPI(config) as api:
        assert api.flush(60)["success"]
    after = status.collect(home, check=False).pending
    assert after["turns_to_ingest"] == 0 and isinstance(after["embeddings"], int)


def test_status_names_the_process_that_holds_the_embedded_vector_store(home: Path) -> None:
    # the engine answers at any size (below tier3.engine_min_vectors no process opens it)
    engine = "backend: qdrant\n    engine_min_vectors: 0"
    (home / "nextlevel.yaml").write_text(HASHING.replace("backend: memory", engine))
    assert status.collect(home, check=False).vector_owner is None
    config = load_memory_config(home).config
    with MemoryAPI(config) as api:  # this process takes the store (a flock of its own file description)
        api.semantic_index("Kim plays the oboe.")
        assert api.embed_pending()["success"]
        report = status.collect(home, check=False)
        assert report.vector_owner == os.getpid()
        line = next(x for x in status.render(report).splitlines() if x.startswith("vector store:"))
        assert f"another process (pid {os.getpid()}) owns the vector store" in line
        assert "search the stored vectors exactly" in line
    assert status.collect(home, check=False).vector_owner is None  # closed: nobody holds it
