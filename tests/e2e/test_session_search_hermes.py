"""Seed §9.2 through the real agent: a `hermes -z` turn in which the model calls Hermes' own
session_search over an earlier session (one the provider never saw: it is only in Hermes' state.db)
leaves the found message in Tier 3, as a 'session' text with its session id, for later recall."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from harness import HERMES, Home, home_fixture, require_hermes, run

require_hermes()

OLD_SESSION = "20250301_101500_abcdef"
SAID = "We agreed the offsite goes to Porto in June."


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Home]:
    yield from home_fixture(tmp_path_factory, "session-search")


def earlier_session(state_db: Path) -> None:
    """An earlier Hermes session, written with Hermes' own SessionDB (as Hermes wrote it then)."""
    import hermes_state

    db = hermes_state.SessionDB(db_path=state_db)
    try:
        db.create_session(OLD_SESSION, "cli")
        db.append_message(
            OLD_SESSION, "user", "Where should the offsite be?", timestamp=time.time() - 86400 * 30
        )
        db.append_message(OLD_SESSION, "assistant", SAID, timestamp=time.time() - 86400 * 30 + 60)
    finally:
        db.close()


def test_a_session_search_result_reaches_tier3(home: Home) -> None:
    earlier_session(home.path / "state.db")
    home.script(
        [{"match": "offsite", "tool_calls": [{"name": "session_search", "arguments": {"query": "Porto"}}]}]
    )
    done = run(
        [str(HERMES), "-z", "Where did we say the offsite would be?", "--toolsets", "memory,session_search"],
        home.path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    requests = home.chat_requests()
    tool_results = [m for m in requests[-1]["messages"] if m.get("role") == "tool"]
    assert any(SAID in str(m.get("content")) for m in tool_results), "session_search did not find it"
    assert home.refused() == []
    with home.store() as api:
        chunks = api.core.tiers.tier2().chunks
        found = [c for c, _ in chunks.search("offsite Porto", limit=20) if c.session_id == OLD_SESSION]
        assert [(c.text, c.source_type, c.source_kind) for c in found] == [(SAID, "session", "text")]
        assert found[0].message_id is not None
        assert api.flush(timeout=120)["data"]["drained"]  # its embedding: meaning search finds it too
        hits = api.semantic_search("Porto offsite in June", limit=10)["data"]
        assert any(h["metadata"].get("session_id") == OLD_SESSION for h in hits)
