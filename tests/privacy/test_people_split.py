"""Upgrading a store that mixed people: a gateway that ran with one memory for everyone (as the old
default did) is split by the identity recorded with each turn; what cannot be attributed goes to the
quarantine scope that no gateway session reads; nothing is lost (rows per table before = after)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from gateway_driver import FAST_YAML, Chat, Person, open_session, write_home

from hermes_memory.cli import main as cli
from hermes_memory.hermes import registry, status

ALICE = Person("Alice", {"telegram": "111"})
BOB = Person("Bob", {"telegram": "222"})
MALLORY = Person("Mallory", {"telegram": "evil/id"})
TABLES = ("episodes", "facts", "timeline", "chunks")


def _counts(db: Path) -> dict[str, int]:
    """Rows per table, leaving out those of the sessions opened after the upgrade ("new-…")."""
    with sqlite3.connect(db) as conn:
        return {
            t: conn.execute(
                f"SELECT count(*) FROM {t} WHERE coalesce({col}, '') NOT LIKE 'new-%'"
            ).fetchone()[0]
            for t, col in zip(TABLES, ("session_id", "source_id", "session_id", "session_id"), strict=True)
        }


def _by_scope(db: Path) -> dict[str, int]:
    with sqlite3.connect(db) as conn:
        return dict(conn.execute("SELECT scope, count(*) FROM episodes GROUP BY scope").fetchall())


def _mixed_store(tmp_path: Path) -> Path:
    home = write_home(tmp_path, "scope:\n  per_user: false")
    sessions = [
        open_session(home, ALICE, Chat("telegram", "111"), "old-a"),
        open_session(home, BOB, Chat("telegram", "222"), "old-b"),
        open_session(home, MALLORY, Chat("telegram", "evil/id"), "old-anon"),
    ]
    sessions[0].say(ALICE, "My bank PIN hint is my first dog's name, Rexford.")
    sessions[1].say(BOB, "I keep my spare key under the blue flowerpot.")
    sessions[2].say(MALLORY, "The vault phrase is Quillon.")  # an id that cannot name a scope
    local = open_session(home, None, Chat("telegram", "", "dm"), "old-cli")  # names nobody: the local user
    local.say(ALICE, "Remember that the build server is named Tarragon.")
    for shared in registry._stores.values():
        assert shared.api.flush(timeout=60)["data"]["drained"]
    for s in [*sessions, local]:
        s.end()
    one_memory = status.collect(home, check=False)
    assert any("every person reads every other person's memory" in p for p in one_memory.problems)
    assert one_memory.people[0].startswith("ONE memory for everyone")
    (home / "nextlevel.yaml").write_text(FAST_YAML, encoding="utf-8")  # today's default: per person
    return home


def test_a_mixed_store_is_split_by_person_and_quarantined(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = _mixed_store(tmp_path)
    db = home / "default" / "memory" / "tier2.db"
    before = _counts(db)
    assert set(_by_scope(db)) == {"default"}
    assert cli(["people", "split", "--dry-run", "--home", str(home)]) == 0
    assert _by_scope(db) == {"default": sum(_by_scope(db).values())}  # a dry run changes nothing
    printed = capsys.readouterr().out
    assert "would move 2 episodes to user:telegram:111" in printed, printed
    assert "would move 2 episodes to user:telegram:222" in printed, printed
    assert "would move 2 episodes to quarantine" in printed, printed
    # The first gateway session after the upgrade splits the store (once) and logs the counts.
    bob = open_session(home, BOB, Chat("telegram", "222"), "new-b")
    try:
        block = bob.say(BOB, "What is my bank PIN hint? Where is my spare key? What is the vault phrase?")
    finally:
        bob.end()
    assert "Rexford" not in block and "Quillon" not in block and "Tarragon" not in block, block
    assert "flowerpot" in block, block
    scopes = _by_scope(db)
    assert scopes["user:telegram:111"] == 2 and scopes["quarantine"] == 2 and scopes["default"] == 2, scopes
    after = _counts(db)
    assert after == before  # nothing lost
    assert (db.with_name(db.name + ".people-split")).exists()
    alice = open_session(home, ALICE, Chat("telegram", "111"), "new-a")
    try:
        mine = alice.say(ALICE, "What is my bank PIN hint?")
    finally:
        alice.end()
    assert "Rexford" in mine and "flowerpot" not in mine, mine
    report = status.collect(home, check=False)
    assert report.people[0].startswith("private") and "people:          private" in status.render(report)
    assert any("wait in scope 'quarantine'" in p for p in report.problems), report.problems
    capsys.readouterr()
    assert cli(["people", "mode", "--home", str(home)]) == 0
    mode = capsys.readouterr().out
    assert "private: each person" in mode and "2 turn(s) of gateway sessions" in mode, mode
    # A quarantined session can be given to its person.
    assert cli(["people", "assign", "old-anon", "user:telegram:222", "--home", str(home)]) == 0
    assert "quarantine" not in _by_scope(db)
