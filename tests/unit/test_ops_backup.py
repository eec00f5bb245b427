"""backup while another thread writes, restore into a new home, compare; refusals are typed; the CLI."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.cli import main

SETTINGS: dict[str, Any] = {"tier3.embedding_model": "hashing", "tier3.backend": "memory"}


def _ok(envelope: dict[str, Any]) -> Any:
    assert envelope["success"], envelope["error"]
    return envelope["data"]


def _open(home: Path) -> MemoryAPI:
    return MemoryAPI(hermes_home=home, **SETTINGS)


def test_hot_backup_while_writing_then_restore(tmp_path: Path) -> None:
    src_home, dest = tmp_path / "src", tmp_path / "backup"
    stop = threading.Event()
    written: list[str] = []
    errors: list[str] = []
    with _open(src_home) as api:
        _ok(api.curated_add("User likes tea"))
        person = _ok(api.entity_ensure("Alice", "person"))
        _ok(api.graph_traverse(person["uuid"]))

        def writer() -> None:
            n = 0
            while not stop.is_set() or n < 20:
                envelope = api.fact_store(f"Measurement number {n} is {n * 7}")
                if envelope["success"]:
                    written.append(envelope["data"]["uuid"])
                else:
                    errors.append(envelope["error"])
                n += 1

        thread = threading.Thread(target=writer)
        thread.start()
        while len(written) < 10:
            threading.Event().wait(0.01)
        manifest = _ok(api.backup(dest))
        stop.set()
        thread.join(timeout=60)
        assert not thread.is_alive() and errors == []
        assert 10 <= manifest["counts"]["facts"] <= len(written)
        # A second backup into the same (now non-empty) directory is refused.
        assert api.backup(dest)["meta"]["error_type"] == "conflict"
    restored_home = tmp_path / "restored"
    result = _ok(MemoryAPI.restore(dest, hermes_home=restored_home, **SETTINGS))
    assert result["check"]["ok"], result["check"]["problems"]
    assert result["check"]["counts"] == manifest["counts"]
    with _open(restored_home) as restored:
        stats = _ok(restored.stats())["tier2"]
        assert stats["facts"] == manifest["counts"]["facts"]
        assert _ok(restored.curated_entries("memory")) == ["User likes tea"]
        assert stats["embed_pending"] >= stats["chunks"]  # every vector re-derived from the chunks
        _ok(restored.embed_pending())
        assert _ok(restored.semantic_search("Measurement number 3", limit=3))
        assert _ok(restored.graph_traverse("Alice"))
    # Restoring over existing memory needs force.
    again = MemoryAPI.restore(dest, hermes_home=restored_home, **SETTINGS)
    assert again["meta"]["error_type"] == "conflict"
    _ok(MemoryAPI.restore(dest, hermes_home=restored_home, force=True, **SETTINGS))


def test_restore_refuses_what_is_not_a_backup(tmp_path: Path) -> None:
    (tmp_path / "nothing").mkdir()
    envelope = MemoryAPI.restore(tmp_path / "nothing", hermes_home=tmp_path / "h", **SETTINGS)
    assert envelope["meta"]["error_type"] == "invalid_input"
    (tmp_path / "fake").mkdir()
    (tmp_path / "fake" / "manifest.json").write_text('{"format": "other"}', encoding="utf-8")
    envelope = MemoryAPI.restore(tmp_path / "fake", hermes_home=tmp_path / "h", **SETTINGS)
    assert envelope["meta"]["error_type"] == "invalid_input"


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text("tier3:\n  embedding_model: hashing\n  backend: memory\n", encoding="utf-8")
    return path


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_ops_commands(tmp_path: Path, config_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home, other = str(tmp_path / "home"), str(tmp_path / "other")
    for made in ("home", "other", "new"):  # the CLI refuses a --home that does not exist (a typo)
        (tmp_path / made).mkdir()
    opts = ["--home", home, "--config", str(config_file)]
    with MemoryAPI(hermes_home=home, config_path=config_file) as api:
        _ok(api.fact_store("Quentin plays the oboe"))
        _ok(api.fact_store("The garden has roses"))
    export = str(tmp_path / "out.json")
    assert _cli(capsys, "export", export, *opts)[0] == 0
    assert json.loads(Path(export).read_text(encoding="utf-8"))["format"] == "hermes-memory/export"
    assert _cli(capsys, "import", export, "--home", other, "--config", str(config_file))[0] == 0
    code, _, err = _cli(capsys, "import", export, "--home", other, "--config", str(config_file))
    assert code == 1 and err.count("\n") == 1  # not empty: needs --merge
    assert _cli(capsys, "import", export, "--merge", "--home", other, "--config", str(config_file))[0] == 0
    code, out, _ = _cli(capsys, "forget", "--entity", "Quentin", *opts)
    assert code == 0 and "would forget" in out
    code, out, _ = _cli(capsys, "forget", "--entity", "Quentin", "--yes", *opts)
    assert code == 0 and "forgotten" in out
    code, _, err = _cli(capsys, "forget", "--id", "no-such-id", *opts)
    assert code == 1 and err.startswith("error:")
    backup_dir = str(tmp_path / "bk")
    assert _cli(capsys, "backup", backup_dir, *opts)[0] == 0
    target = ["--home", str(tmp_path / "new"), "--config", str(config_file)]
    code, out, _ = _cli(capsys, "restore", backup_dir, *target)
    assert code == 0 and "consistency check: ok" in out
    assert _cli(capsys, "restore", backup_dir, *target)[0] == 1
    assert _cli(capsys, "restore", backup_dir, "--force", *target)[0] == 0
    with MemoryAPI(hermes_home=str(tmp_path / "new"), config_path=config_file) as api:
        contents = [f["content"] for f in _ok(api.fact_query(None, limit=10, min_confidence=0.0))]
        assert contents == ["The garden has roses"]


def test_restore_refuses_while_another_process_has_the_store_open(tmp_path: Path) -> None:
    home, dest = tmp_path / "home", tmp_path / "backup"
    with _open(home) as api:
        _ok(api.fact_store("The backup holds this fact"))
        _ok(api.backup(dest))
        _ok(api.fact_store("Only the live store holds this one"))
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(home)], stdout=subprocess.PIPE, stdin=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
        refused = MemoryAPI.restore(dest, hermes_home=home, force=True, **SETTINGS)
        assert refused["meta"]["error_type"] == "conflict" and "another process" in refused["error"]
    finally:
        holder.communicate("", timeout=60)
    with _open(home) as api:  # untouched by the refused restore
        assert _ok(api.stats())["tier2"]["facts"] == 2
    _ok(MemoryAPI.restore(dest, hermes_home=home, force=True, **SETTINGS))
    with _open(home) as api:
        assert _ok(api.stats())["tier2"]["facts"] == 1


# A running agent: opens the store, says so, and keeps it open until its stdin closes.
HOLDER = """
import sys
from hermes_memory.api.memory_api import MemoryAPI
api = MemoryAPI(hermes_home=sys.argv[1], **{"tier3.embedding_model": "hashing", "tier3.backend": "memory"})
api.stats()
print("open", flush=True)
sys.stdin.read()
api.close()
"""
