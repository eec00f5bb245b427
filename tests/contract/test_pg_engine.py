"""The PostgreSQL engine of Tier 2 at its edges: where a store lives, what the SQL becomes, and the
errors a user sees when the server is not there, the schema is newer or the URL is wrong."""

from __future__ import annotations

import socket
import threading
from pathlib import Path
from typing import Any

import psycopg
import pytest

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.errors import ConfigError, StorageError
from hermes_memory.tier2 import Tier2
from hermes_memory.tier2.engines import engine_of, profile_schema, safe_url, where, with_schema
from hermes_memory.tier2.pg.dialect import UnsupportedStatement, translate

FAST = {"tier3.embedding_model": "hashing", "tier3.backend": "memory"}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_an_unreachable_server_is_a_clear_error_without_the_password(tmp_path: Path) -> None:
    url = f"postgresql://memory:s3cret-pw@127.0.0.1:{_free_port()}/hermes"
    with pytest.raises(StorageError) as caught:
        Tier2.open(tmp_path / "tier2.db", url=url)
    text = str(caught.value)
    assert "unreachable" in text and "127.0.0.1" in text
    assert "s3cret-pw" not in text


def test_a_store_works_again_once_a_restarted_server_answers(
    pg_server_running: Any, pg_url: str, tmp_path: Path
) -> None:
    api = MemoryAPI(hermes_home=tmp_path, **FAST, **{"tier2.url": pg_url})
    try:
        assert api.fact_store("The boiler was serviced in March.")["success"]
        pg_server_running.restart()  # every connection of the store is cut
        first = api.fact_query("boiler serviced")
        if not first["success"]:  # the call that meets the cut says so
            assert first["meta"]["error_type"] == "storage_error" and "unreachable" in first["error"]
        assert api.fact_store("The boiler needs a new valve.")["success"]
        found = [f["content"] for f in api.fact_query("boiler")["data"]]
        assert sorted(found) == ["The boiler needs a new valve.", "The boiler was serviced in March."]
        recalled = api.recall("When was the boiler serviced?")
        assert recalled["success"] and recalled["meta"]["tiers_unavailable"] == {}, recalled
    finally:
        api.close()


def test_a_schema_newer_than_the_code_is_refused(pg_url: str, tmp_path: Path) -> None:
    Tier2.open(tmp_path / "tier2.db", url=pg_url).close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO hermes_default.memory_schema_version(version, name, applied_at) VALUES (99, 'x', 0)"
        )
    with pytest.raises(StorageError, match="schema version 99, newer than this release"):
        Tier2.open(tmp_path / "tier2.db", url=pg_url)


def test_an_unknown_engine_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="unknown engine"):
        engine_of("mysql://h/db")
    assert engine_of(None) == "sqlite" and engine_of("postgres://h/db") == "postgresql"


def test_status_lines_name_the_engine_and_hide_the_password(tmp_path: Path) -> None:
    url = "postgresql://memory:s3cret@db.internal:5432/hermes"
    assert safe_url(url) == "postgresql://memory:***@db.internal:5432/hermes"
    assert where(tmp_path / "t.db", url) == "postgresql postgresql://memory:***@db.internal:5432/hermes"
    assert where(tmp_path / "t.db", None) == str(tmp_path / "t.db")


def test_each_profile_is_a_schema_of_its_own(pg_url: str, tmp_path: Path) -> None:
    assert profile_schema("default") == "hermes_default"
    assert profile_schema("Work") != profile_schema("work")  # two profiles, two schemas
    stores: dict[str, Any] = {}
    for profile in ("alpha", "beta"):
        api = MemoryAPI(hermes_home=tmp_path / profile, profile=profile, **FAST, **{"tier2.url": pg_url})
        stores[profile] = api
        assert api.fact_store(f"The {profile} project ships on Friday.")["success"]
    try:
        alpha = [f["content"] for f in stores["alpha"].fact_query("project ships")["data"]]
        beta = [f["content"] for f in stores["beta"].fact_query("project ships")["data"]]
        assert alpha == ["The alpha project ships on Friday."]
        assert beta == ["The beta project ships on Friday."]
        assert stores["alpha"].stats()["data"]["tier2"]["db_engine"] == "postgresql"
    finally:
        for api in stores.values():
            api.close()


def test_hosts_opening_a_new_store_at_once_all_open_it(pg_url: str, tmp_path: Path) -> None:
    # Six hosts start against a profile whose schema nobody made yet, released at the same instant.
    def open_store(profile: str, host: int, start: threading.Barrier, failures: list[BaseException]) -> None:
        start.wait()
        try:
            Tier2.open(tmp_path / f"{profile}h{host}" / "tier2.db", url=pg_url, profile=profile).close()
        except BaseException as exc:  # noqa: BLE001 - the test reports it
            failures.append(exc)

    for round_ in range(5):
        start, failures = threading.Barrier(6), []
        hosts = [
            threading.Thread(target=open_store, args=(f"fresh{round_}", n, start, failures)) for n in range(6)
        ]
        for thread in hosts:
            thread.start()
        for thread in hosts:
            thread.join()
        assert failures == []


def test_a_url_may_name_the_schema_itself(pg_url: str, tmp_path: Path) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA team1")
    store = Tier2.open(tmp_path / "tier2.db", url=with_schema(pg_url, "team1"))
    try:
        store.facts.store("Team one meets on Mondays.")
    finally:
        store.close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        team = conn.execute("SELECT content FROM team1.facts").fetchall()
        profile = conn.execute("SELECT count(*) FROM hermes_default.facts").fetchone()
    assert [r[0] for r in team] == ["Team one meets on Mondays."] and profile == (0,)


def test_the_data_version_moves_with_this_stores_commits_only(pg_url: str, tmp_path: Path) -> None:
    """Recall's caches hold while ``data_version`` does: a commit to another store on the same server, a
    vacuum or a checkpoint leaves it where it is; a commit to this store, from any host, moves it."""
    store = Tier2.open(tmp_path / "a" / "tier2.db", url=pg_url, profile="alpha")
    neighbour = Tier2.open(tmp_path / "b" / "tier2.db", url=pg_url, profile="beta")
    other_host = Tier2.open(tmp_path / "c" / "tier2.db", url=pg_url, profile="alpha")
    try:
        seen = store.db.data_version()
        neighbour.facts.store("The beta team meets on Tuesdays.")
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute("VACUUM")
            conn.execute("CHECKPOINT")
        assert store.db.data_version() == seen
        other_host.facts.store("The alpha team meets on Mondays.")
        assert store.db.data_version() > seen
    finally:
        for tier2 in (store, neighbour, other_host):
            tier2.close()


@pytest.mark.parametrize(
    ("sqlite", "postgresql"),
    [
        ("SELECT 1 FROM t WHERE a = ? AND b LIKE ?", "SELECT 1 FROM t WHERE a = %s AND b ILIKE %s"),
        (
            "INSERT OR IGNORE INTO t(a) VALUES (?)",
            "INSERT INTO t(a) VALUES (%s) ON CONFLICT DO NOTHING",
        ),
        ("SELECT 1 FROM t WHERE u IN (SELECT value FROM json_each(?))", "SELECT 1 FROM t WHERE u = ANY(%s)"),
        (
            "SELECT 1 FROM t WHERE u NOT IN (SELECT value FROM json_each(?))",
            "SELECT 1 FROM t WHERE u <> ALL(%s)",
        ),
        ("SELECT 1 FROM t WHERE a IS ? AND b IS NOT ?", "SELECT 1 FROM t WHERE a IS NOT DISTINCT FROM %s AND "
         "b IS DISTINCT FROM %s"),
        ("SELECT '50%' FROM t", "SELECT '50%%' FROM t"),
        ("SELECT 1 FROM a CROSS JOIN b x ON x.id = a.id WHERE +a.s = ?", "SELECT 1 FROM a JOIN b x ON x.id = "
         "a.id WHERE a.s = %s"),
        (
            "SELECT t.uuid, bm25(facts_fts) AS r FROM facts_fts JOIN facts t ON t.id = facts_fts.rowid "
            "WHERE facts_fts MATCH ? AND t.scope = ? ORDER BY r",
            "SELECT t.uuid, facts_fts.bm AS r FROM facts_fts_match(%s) AS facts_fts JOIN facts t ON "
            "t.id = facts_fts.rowid WHERE TRUE AND t.scope = %s ORDER BY r",
        ),
    ],
)  # fmt: skip
def test_the_stores_sql_is_translated(sqlite: str, postgresql: str) -> None:
    assert translate(sqlite).sql == postgresql


def test_a_json_list_parameter_is_passed_as_a_list() -> None:
    statement = translate("SELECT 1 FROM t WHERE a = ? AND u IN (SELECT value FROM json_each(?))")
    assert list(statement.bind(["x", '["u1", "u2"]'])) == ["x", ["u1", "u2"]]


@pytest.mark.parametrize(
    "sql", ["PRAGMA integrity_check", "SELECT name FROM sqlite_master", "REPLACE INTO t VALUES (1)"]
)
def test_sqlite_only_statements_never_reach_the_server(sql: str) -> None:
    with pytest.raises(UnsupportedStatement):
        translate(sql)
