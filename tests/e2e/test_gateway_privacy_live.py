"""Live: real Hermes agents, each in its own process, built as Hermes' gateway builds them for Alice's
and Bob's direct chats and a group thread on one home with default privacy settings (see
``gateway_session.py`` for why not ``hermes -z``). What the model receives — the memory block, the
tool results, the system prompt — never holds another person's memory; each person gets their own."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from harness import HERE, Home, block_of, home_fixture, require_hermes, run

require_hermes()

SETTINGS = """\
provider:
  prefetch_wait_ms: 3000
memory:
  tier3:
    embedding_model: hashing
    backend: memory
"""
SEARCH = [
    {
        "match": "search your memory",
        "tool_calls": [
            {
                "name": "nextlevel_search",
                "arguments": {"query": "bank PIN hint interviewing where does Carol live"},
            }
        ],
    }
]


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Home]:
    yield from home_fixture(tmp_path_factory, "gateway-live", SETTINGS)


def session(
    home: Home, name: str, source: dict[str, Any], *messages: str
) -> tuple[dict[str, Any], list[str]]:
    """Run one gateway session process; returns its output and the texts the model received."""
    before = len(home.chat_requests())
    src = home.path / f"{name}.source.json"
    src.write_text(json.dumps({"session_id": f"live-{name}", **source}), encoding="utf-8")
    out = home.path / f"{name}.out.json"
    done = run(
        [
            sys.executable,
            str(HERE / "gateway_session.py"),
            str(home.path),
            home.server.base_url,
            str(out),
            str(src),
            *messages,
        ],
        home.path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    assert result["providers"] == ["nextlevel"] and result["refused"] == []
    requests = home.chat_requests()[before:]
    seen = [json.dumps(r["messages"]) for r in requests]
    seen += [block_of(r) or "" for r in requests]
    return result, seen


def dm(user_id: str, name: str) -> dict[str, Any]:
    return {
        "platform": "telegram",
        "user_id": user_id,
        "user_name": name,
        "chat_id": user_id,
        "chat_type": "dm",
        "session_key": f"agent:main:telegram:dm:{user_id}",
    }


def test_alice_bob_and_a_group_thread_live(home: Home) -> None:
    home.script(SEARCH)
    session(
        home,
        "alice",
        dm("111", "Alice"),
        "My bank PIN hint is my first dog's name, Rexford.",
        "I'm secretly interviewing at Globex next week, don't tell anyone.",
    )
    thread = {
        "platform": "telegram",
        "user_id": "333",
        "user_name": "Carol",
        "chat_id": "-100",
        "chat_type": "group",
        "thread_id": "7",
        "session_key": "agent:main:telegram:group:-100:7",
    }
    session(home, "thread", thread, "I live in Porto.")
    _, bob = session(
        home,
        "bob",
        dm("222", "Bob"),
        "What is my bank PIN hint? Am I interviewing anywhere?",
        "Please search your memory for that.",
    )
    received = "\n".join(bob)
    for secret in ("Rexford", "Globex", "Porto"):
        assert secret not in received, f"{secret} reached Bob's model"
    _, alice = session(home, "alice2", dm("111", "Alice"), "Please search your memory: what is my PIN hint?")
    received = "\n".join(alice)
    assert "Rexford" in received and "Globex" in received and "Porto" not in received
    dave = dict(
        thread,
        user_id="444",
        user_name="Dave",
        thread_id=None,
        session_key="agent:main:telegram:group:-100:444",
    )
    _, group = session(home, "dave", dave, "Please search your memory: where does Carol live?")
    received = "\n".join(group)
    assert "Carol lives in Porto" in received and "Rexford" not in received and "Globex" not in received
