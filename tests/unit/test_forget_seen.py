"""A forget reaches what the agent saw: with recording on, every kept block or tool result that names
the forgotten person (in its text or in the message it served) is dropped from ``seen.jsonl``, as a
step of the erasure, so a forget interrupted before it is finished by the next open."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.cli import main as cli
from hermes_memory.hermes import seen
from hermes_memory.ops import seen_file
from hermes_memory.tier2 import erasures

NAME = "Zorblax"
ON = {"ui": {"record_context": True, "record_limit": 50}}


def _ok(envelope: dict[str, Any]) -> Any:
    assert envelope["success"], envelope["error"]
    return envelope["data"]


def _recorded(api: MemoryAPI) -> str:
    """Record four things the agent saw; returns the uuid of the green tea fact."""
    _ok(api.fact_store(f"{NAME} lives in Lisbon"))
    tea = _ok(api.fact_store("The user likes green tea"))
    said = [
        (seen.PREFETCH, "where does my friend live", f"- {NAME} lives in Lisbon\n- The user likes green tea"),
        (seen.PREFETCH, f"what about {NAME.lower()}'s job", "- The user likes green tea"),
        (seen.TOOL, seen.tool_served("fact_store", {"q": "tea"}), "- The user likes green tea"),
        (seen.PREFETCH, "Zorblaxian food?", "nothing"),  # another word, not the name
    ]
    for kind, served, text in said:
        seen.record(api.config, session_id="s1", scope=api.scope, kind=kind, served=served, text=text)
    return str(tea["uuid"])


def test_a_forget_drops_every_record_that_names_the_forgotten(open_api: Callable[..., MemoryAPI]) -> None:
    api = open_api(**ON)
    _recorded(api)
    _ok(api.forget_entity(NAME, confirm=True))
    body = api.config.seen_path.read_text(encoding="utf-8")
    assert f"{NAME} " not in body and f"{NAME.lower()}'" not in body
    assert [r.served for r in seen.read(api.config)] == ["Zorblaxian food?", 'fact_store {"q": "tea"}']
    assert api.config.seen_path.stat().st_mode & 0o077 == 0
    assert not list(api.config.seen_path.parent.glob(".seen.jsonl.*.tmp"))
    row = api.tier2.db.query_one("SELECT seen, finished_at FROM erasures ORDER BY id DESC LIMIT 1")
    assert row["seen"] is None and row["finished_at"] is not None  # the names are not kept for it either


def test_a_forget_by_id_drops_the_records_quoting_it(open_api: Callable[..., MemoryAPI]) -> None:
    api = open_api(**ON)
    _ok(api.forget(_recorded(api), confirm=True))
    assert [r.served for r in seen.read(api.config)] == ["Zorblaxian food?"]


def test_an_interrupted_scrub_is_finished_by_the_next_open(
    open_api: Callable[..., MemoryAPI], monkeypatch: pytest.MonkeyPatch
) -> None:
    api = open_api(**ON)
    _recorded(api)

    def crash(*_: Any, **__: Any) -> int:
        raise OSError("disk went away")

    monkeypatch.setattr(seen_file, "scrub", crash)
    assert not api.forget_entity(NAME, confirm=True)["success"]  # the rows are gone, the step is left
    assert next(e.steps for e in erasures.unfinished(api.tier2.db))[0] == "seen"
    assert NAME in api.config.seen_path.read_text(encoding="utf-8")
    api.close()
    monkeypatch.undo()
    again = open_api(**ON)  # its open finishes the erasure
    assert erasures.unfinished(again.tier2.db) == []
    assert f"{NAME} " not in again.config.seen_path.read_text(encoding="utf-8")
    assert len(seen.read(again.config)) == 2


def test_a_torn_line_and_a_killed_rewrite_copy_go_too(open_api: Callable[..., MemoryAPI]) -> None:
    api = open_api(**ON)
    _recorded(api)
    path = api.config.seen_path
    with path.open("a", encoding="utf-8") as fh:
        fh.write('{"at": 1, "text": "torn ' + NAME)
    stale = path.with_name(f".{path.name}.99999.tmp")
    stale.write_text(NAME, encoding="utf-8")
    _ok(api.forget_entity(NAME, confirm=True))
    assert f"torn {NAME}" not in path.read_text(encoding="utf-8") and not stale.exists()


def test_the_cli_forget_scrubs_it_too(open_api: Callable[..., MemoryAPI], tmp_path: Path) -> None:
    api = open_api(**ON)
    _recorded(api)
    api.close()
    assert cli(["forget", "--entity", NAME, "--yes", "--home", str(tmp_path)]) == 0
    assert f"{NAME} " not in api.config.seen_path.read_text(encoding="utf-8")


def test_forgetting_a_scope_drops_its_records(open_api: Callable[..., MemoryAPI]) -> None:
    api = open_api(scope="alice", **ON)
    _ok(api.fact_store("Alice likes chess"))
    seen.record(api.config, session_id="s1", scope="alice", kind=seen.PREFETCH, served="hi", text="- chess")
    seen.record(api.config, session_id="s2", scope="bob", kind=seen.PREFETCH, served="hi", text="- tennis")
    api.core.forgetting.forget_scope(confirm=True)
    assert [r.scope for r in seen.read(api.config)] == ["bob"]
