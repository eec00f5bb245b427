"""What reaches the model, smaller: a greeting gets no block; no junk entity or run-on fact; a reply
that reads out a tool's JSON is not recalled; `latest` says when and who; the graph PNG labels its
relations and points to the HTML view.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hermes_settings import api_of

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.cli import main as cli_main
from hermes_memory.extract import MessageInput, extract
from hermes_memory.extract.speech import chatter_kind

YAML = "memory:\n  tier3:\n    embedding_model: hashing\n    backend: memory\n"
NOW = datetime(2026, 11, 24, 10, 0, tzinfo=UTC)
TOOL_ECHO = (
    'TOOLRESULTS: {"results": [{"text": "Biscuit is a beagle who loves the beach", "score": 0.9, '
    '"tier": "tier2"}], "success": true}'
)


def test_a_greeting_gets_no_block(home: Path, make: Any) -> None:
    provider = make("s1")
    for said in ("I work at Siemens.", "My dog Biscuit is a beagle.", "I live in Lisbon."):
        provider.sync_turn(said, "Noted.", session_id="s1")
    assert api_of(home).flush(60)["success"]
    other = make("s2")
    assert other.prefetch("Hello there") == ""
    assert "Siemens" in other.prefetch("Where do I work?")


def test_no_junk_entity_and_no_fact_running_on_into_a_request() -> None:
    prefer = extract(MessageInput("I prefer tea over coffee.", NOW))
    assert not [e.name for e in prefer.entities if "over" in e.name], prefer.entities
    runs_on = extract(MessageInput("I live in Lisbon and please keep answers short.", NOW))
    contents = [f.content for f in runs_on.facts]
    assert any("Lisbon" in c for c in contents), contents
    assert not [c for c in contents if "please" in c], contents
    # "so long ago" is a time, no request split off: the fact keeps it
    opened = extract(MessageInput("I opened my own pottery studio not so long ago.", NOW))
    assert [f.content for f in opened.facts if f.content.endswith("not so long ago")], opened.facts


def test_a_reply_reading_out_tool_output_is_not_recalled(home: Path, make: Any) -> None:
    assert chatter_kind(TOOL_ECHO, role="assistant", replying_to="Search your memory for my dog") == "echo"
    provider = make("s1")
    provider.sync_turn("Search your memory for my dog.", TOOL_ECHO, session_id="s1")
    provider.sync_turn("My dog Biscuit loves the beach.", "Noted.", session_id="s1")
    assert api_of(home).flush(60)["success"]
    block = make("s2").prefetch("What does Biscuit love?")
    assert "beach" in block and "TOOLRESULTS" not in block, block


def test_latest_says_when_and_who(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "nextlevel.yaml").write_text(YAML)
    with MemoryAPI(hermes_home=home, tier3={"embedding_model": "hashing", "backend": "memory"}) as api:
        sent = api.remember_turn("I live in Lisbon.", "Noted.", "s1", "2026-11-20T09:30:00", user_name="Maya")
        assert sent["success"] and api.flush(60)["success"]
    assert cli_main(["latest", "--count", "2", "--home", str(home)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1].startswith("2026-11-20 09:30") and "Maya: I live in Lisbon." in out[1], out


def test_the_graph_png_labels_its_relations_and_points_to_the_html_view(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("matplotlib")
    home = tmp_path / "home"
    home.mkdir()
    (home / "nextlevel.yaml").write_text(YAML)
    with MemoryAPI(hermes_home=home, tier3={"embedding_model": "hashing", "backend": "memory"}) as api:
        for name, kind in (("Maya", "person"), ("Siemens", "org"), ("Lena", "person")):
            assert api.entity_ensure(name, kind)["success"]
        for src, rel, dst in (("Maya", "works_at", "Siemens"), ("Maya", "sibling_of", "Lena")):
            linked = api.entity_link(src, dst, rel)
            assert linked["success"], linked
        from hermes_memory.graph.render import render_png

        drawn = render_png(api.knowledge_graph(), tmp_path / "g.png")
    assert drawn["relations_labelled"] == 2, drawn
    assert cli_main(["graph", "--out", str(tmp_path / "cli.png"), "--home", str(home)]) == 0
    assert "interactive view" in capsys.readouterr().out
