"""The curated actions of nextlevel_memory and the first-activation migration in the real agent: one
`hermes -z` process (hermes-agent 0.19.0, scripted fake LLM on 127.0.0.1) on a home whose MEMORY.md
existed before the provider was activated. The model calls nextlevel_memory add (target user); the
entry lands in Hermes' own USER.md, the pre-existing MEMORY.md entry becomes a fact (source curated)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from harness import Home, home_fixture, require_hermes

from hermes_memory.tier1.curated_store import ENTRY_DELIMITER

require_hermes()


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Home]:
    yield from home_fixture(tmp_path_factory, "curated")


def test_a_curated_add_through_hermes_and_the_first_activation_migration(home: Home) -> None:
    memories = home.path / "memories"
    memories.mkdir(exist_ok=True)
    (memories / "MEMORY.md").write_text(
        ENTRY_DELIMITER.join(["Deploys run from the main branch."]), encoding="utf-8"
    )
    home.script(
        [
            {
                "match": "remember my editor",
                "tool_calls": [
                    {
                        "name": "nextlevel_memory",
                        "arguments": {"action": "add", "target": "user", "content": "User edits with Helix."},
                    }
                ],
            }
        ]
    )
    turn = home.hermes("Please remember my editor: I use Helix.")
    assert turn.returncode == 0, turn.stderr[-3000:]
    (result,) = turn.tool_json()
    assert result["success"] is True and result["done"] is True and result["target"] == "user", result
    assert (memories / "USER.md").read_text(encoding="utf-8") == "User edits with Helix."
    with home.store() as api:
        facts = {f["content"]: f for f in api.fact_query(None, limit=100, min_confidence=0.0)["data"]}
    assert facts["Deploys run from the main branch."]["source_type"] == "curated"
    assert facts["User edits with Helix."]["source_type"] == "memory"  # the tool's write, mirrored
    assert home.refused() == []
