"""One person's memory through the command line (``--scope``): exported alone, forgotten completely
(turns, facts, entities, chunks, vectors) while other people keep theirs, and imported back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from gateway_driver import Chat, Person, open_session, write_home

from hermes_memory.cli import main as cli
from hermes_memory.hermes import registry

ALICE = Person("Alice", {"telegram": "111"})
BOB = Person("Bob", {"telegram": "222"})
ASK = "What is my locker code word? What do I keep under the flowerpot?"


def _recall(home: Path, person: Person, sid: str) -> str:
    s = open_session(home, person, Chat("telegram", person.ids["telegram"]), sid)
    try:
        return s.say(person, ASK) + s.provider.handle_tool_call(
            "nextlevel_search", {"query": "locker flowerpot"}
        )
    finally:
        s.end()


def test_export_forget_and_import_one_person(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home = write_home(tmp_path)
    a = open_session(home, ALICE, Chat("telegram", "111"), "a")
    b = open_session(home, BOB, Chat("telegram", "222"), "b")
    a.say(ALICE, "My locker code word is Zymirtusix and I met Quentin Zydolfaxix at Globex.")
    b.say(BOB, "I keep a spare key under the flowerpot, said Zyrinwexix.")
    for shared in registry._stores.values():
        assert shared.api.flush(timeout=60)["data"]["drained"]
        shared.api.embed_pending()
    a.end()
    b.end()
    alice = ["--home", str(home), "--scope", "user:telegram:111"]
    out = tmp_path / "alice.json"
    assert cli(["export", str(out), *alice]) == 0
    exported = out.read_text(encoding="utf-8")
    assert "Zymirtusix" in exported and "Zyrinwexix" not in exported
    assert cli(["people", "forget", *alice]) == 0
    assert "would forget" in capsys.readouterr().out
    assert "Zymirtusix" in _recall(home, ALICE, "a2")  # a preview changes nothing
    assert cli(["people", "forget", "--yes", *alice]) == 0
    assert "forgot in scope user:telegram:111" in capsys.readouterr().out
    gone = _recall(home, ALICE, "a3")
    assert "Zymirtusix" not in gone and "Zydolfaxix" not in gone, gone
    assert "Zyrinwexix" in _recall(home, BOB, "b2")  # Bob keeps his
    assert cli(["import", str(out), "--merge", *alice]) == 0
    back = _recall(home, ALICE, "a4")
    assert "Zymirtusix" in back and "Zyrinwexix" not in back, back
    assert json.loads(exported)  # the export is one JSON document
