"""Issue 14, defect 6 (second half): the store, its WAL, the turn inbox, the vector and graph files, lock
files, exports and backups are owner-only (files 0600, directories 0700) under the usual umask 022 —
without memory changing the host process's umask (Hermes owns it)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from hermes_memory.api.memory_api import MemoryAPI


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _modes(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): stat.S_IMODE(p.lstat().st_mode) for p in root.rglob("*")}


def _loose(root: Path) -> dict[str, str]:
    """Every path under ``root`` that group or others can use, with its mode."""
    return {name: oct(mode) for name, mode in _modes(root).items() if mode & 0o077}


def _use_the_store(api: MemoryAPI, out: Path) -> None:
    assert api.remember_turn("Maya moved to Lisbon in May.", "Noted, Lisbon.", "s1")["success"]
    assert api.flush(timeout=30)["data"]["drained"]
    assert api.recall("Where does Maya live?")["success"]
    assert api.curated_add("Maya prefers tea.")["success"]
    assert api.fact_store("Atlas stores routes in Postgres.")["success"]
    assert api.graph_rebuild()["success"]
    assert api.export_json(out / "export.json")["success"]
    backup = api.backup(out / "backup")
    assert backup["success"], backup


@pytest.mark.parametrize("backend", ["memory", "qdrant"])
def test_every_file_memory_writes_is_owner_only_under_umask_022(
    tmp_path: Path, umask_022: None, backend: str
) -> None:
    home, out = tmp_path / "home", tmp_path / "out"
    home.mkdir()
    out.mkdir()
    api = MemoryAPI(hermes_home=home, **{"tier3.embedding_model": "hashing", "tier3.backend": backend})
    try:
        _use_the_store(api, out)
        db = api.config.db_path
        assert Path(f"{db}-wal").exists()  # the WAL is checked while it exists
        assert _loose(home) == {}
    finally:
        api.close()
    assert _loose(home) == {}
    assert _loose(out) == {}
    names = set(_modes(home))
    # The checks covered what they claim to: the database, the inbox, the graph, the curated files.
    assert any(n.endswith("tier2.db") for n in names), names
    assert any("inbox" in n for n in names), names
    assert any("graph" in n for n in names), names
    assert any(n.endswith("MEMORY.md") for n in names), names
    assert any(n.endswith(".lock") for n in names), names
    assert os.umask(0o022) == 0o022  # memory never changed the process umask


def test_an_existing_world_readable_store_is_tightened_on_open(tmp_path: Path, umask_022: None) -> None:
    settings = {"tier3.embedding_model": "hashing", "tier3.backend": "memory"}
    api = MemoryAPI(hermes_home=tmp_path, **settings)
    api.remember_turn("Maya moved to Lisbon.", None, "s1")
    api.flush(timeout=30)
    db = api.config.db_path
    api.close()
    os.chmod(db, 0o644)  # as an older release left it
    api = MemoryAPI(hermes_home=tmp_path, **settings)
    try:
        assert stat.S_IMODE(db.stat().st_mode) == 0o600
    finally:
        api.close()


def test_a_read_only_file_stays_read_only(tmp_path: Path) -> None:
    from hermes_memory.security.permissions import tighten

    path = tmp_path / "f"
    path.write_text("x")
    os.chmod(path, 0o444)
    tighten(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o400


def test_private_dir_creates_0700_and_leaves_existing_dirs_alone(tmp_path: Path, umask_022: None) -> None:
    from hermes_memory.security.permissions import private_dir, write_private_text

    existing = tmp_path / "existing"
    existing.mkdir(mode=0o755)
    os.chmod(existing, 0o755)
    made = private_dir(existing / "a" / "b")
    assert stat.S_IMODE(existing.stat().st_mode) == 0o755  # e.g. the user's home: never changed
    assert stat.S_IMODE((existing / "a").stat().st_mode) == 0o700
    assert stat.S_IMODE(made.stat().st_mode) == 0o700
    write_private_text(made / "t.txt", "x")
    assert stat.S_IMODE((made / "t.txt").stat().st_mode) == 0o600


def test_tighten_tree_never_follows_a_symlink(tmp_path: Path) -> None:
    from hermes_memory.security.permissions import tighten_tree

    outside = tmp_path / "outside.txt"
    outside.write_text("x")
    os.chmod(outside, 0o644)
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "link").symlink_to(outside)
    tighten_tree(tree)
    assert stat.S_IMODE(outside.stat().st_mode) == 0o644
