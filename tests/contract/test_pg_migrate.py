"""``hermes-memory migrate``: a filled store copied SQLite -> PostgreSQL -> SQLite exports the same file,
byte for byte; an export imports into a store on the server and exports the same; a copy into a store that
holds records is refused without writing anything."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from hermes_memory import cli
from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.config import TIER2_URL_ENV

FAST = {"tier3.embedding_model": "hashing", "tier3.backend": "memory"}
TURNS = [
    ("I moved to Lisbon in May, and I work at Bosch as a tester.", "Noted."),
    ("My sister Ana lives in Porto; she teaches chemistry.", "Good to know."),
    ("These days I'm with Siemens, not Bosch.", "Congratulations!"),
    ("Maya Okafor is my manager now. Her API key is sk-live-0123456789abcdef0123.", "Got it."),
]


def _fill(home: Path) -> None:
    api = MemoryAPI(hermes_home=home, **FAST)
    try:
        for i, (user, assistant) in enumerate(TURNS):
            assert api.remember_turn(user, assistant, session_id=f"s{i % 2}")["success"]
        assert api.flush()["data"]["drained"]
        assert api.fact_store("The wifi network is called Nordlicht.", "general", 0.9)["success"]
        assert api.curated_add("Prefers short answers.")["success"]
        ana = api.entity_query("Ana")["data"]
        assert ana, "the extractor found no entity to forget"
        assert api.remember_turn("Forget-me note about Quillon.", "ok", session_id="s9")["success"]
        api.flush()
        assert api.forget_entity("Quillon", confirm=True)["success"]
    finally:
        api.close()


def _export(home: Path, path: Path) -> bytes:
    api = MemoryAPI(hermes_home=home, **FAST)
    try:
        assert api.export_json(path)["success"]
    finally:
        api.close()
    return path.read_bytes()


def _migrate(home: Path, to: str, capsys: pytest.CaptureFixture[str]) -> str:
    code = cli.main(["migrate", "--hermes-home", str(home), "--to", to])
    out = capsys.readouterr()
    assert code == 0, out.err
    return out.out


def test_a_store_round_trips_sqlite_postgresql_sqlite_with_an_identical_export(
    pg_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    _fill(first)
    before = _export(first, tmp_path / "before.json")
    assert b"Lisbon" in before and b"Quillon" not in before
    said = _migrate(first, pg_url, capsys)
    assert "-> postgresql" in said and "episodes" in said
    shutil.copytree(first / "memories", second / "memories")  # curated entries are per home
    monkeypatch.setenv(TIER2_URL_ENV, pg_url)
    on_server = _export(second, tmp_path / "server.json")
    assert on_server == before
    _migrate(second, "sqlite", capsys)
    monkeypatch.delenv(TIER2_URL_ENV)
    assert _export(second, tmp_path / "after.json") == before
    monkeypatch.setenv(TIER2_URL_ENV, pg_url)
    _changes_are_logged_again(second)


def _changes_are_logged_again(home: Path) -> None:
    """The copy paused the change log of recall's caches for its load only: a turn written after it is
    logged (the generation moves, and the turn is among the changes)."""
    from hermes_memory.tier2.recall_log import recall_changes, recall_generation

    api = MemoryAPI(hermes_home=home, **FAST)
    try:
        before = recall_generation(api.tier2.db)
        assert api.remember_turn("We adopted a grey cat called Miso.", "Lovely.", session_id="s5")["success"]
        assert api.flush()["data"]["drained"]
        generation, changes = recall_changes(api.tier2.db, before, 1000)
        assert generation > before and changes is not None and changes
    finally:
        api.close()


def test_a_copy_into_a_store_with_records_is_refused_and_writes_nothing(
    pg_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    _fill(home)
    monkeypatch.setenv(TIER2_URL_ENV, pg_url)
    api = MemoryAPI(hermes_home=tmp_path / "other", **FAST)
    try:
        assert api.fact_store("Already here.")["success"]
    finally:
        api.close()
    monkeypatch.delenv(TIER2_URL_ENV)
    code = cli.main(["migrate", "--hermes-home", str(home), "--to", pg_url])
    assert code != 0 and "not empty" in capsys.readouterr().err
    monkeypatch.setenv(TIER2_URL_ENV, pg_url)
    api = MemoryAPI(hermes_home=tmp_path / "other", **FAST)
    try:
        stats: dict[str, Any] = api.stats()["data"]["tier2"]
    finally:
        api.close()
    assert (stats["facts"], stats["episodes"]) == (1, 0)


def test_an_export_imports_into_a_store_on_the_server_and_exports_the_same(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source, server = tmp_path / "source", tmp_path / "server"
    _fill(source)
    path = tmp_path / "export.json"
    before = _export(source, path)
    monkeypatch.setenv(TIER2_URL_ENV, pg_url)
    api = MemoryAPI(hermes_home=server, **FAST)
    try:
        result = api.import_json(str(path), merge=False)
        assert result["success"], result["error"]
    finally:
        api.close()
    assert _export(server, tmp_path / "again.json") == before
    api = MemoryAPI(hermes_home=server, **FAST)
    try:  # (after the export: a query counts as a use of the fact it finds)
        assert api.fact_query("Nordlicht", min_confidence=0.0)["data"]  # in the server's full-text index
    finally:
        api.close()
