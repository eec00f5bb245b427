"""Tool calls are checked against the session they belong to (seed §12): a call naming another session,
user, scope or profile — in its arguments or in the keyword arguments a Hermes may pass — is refused
with a clear error before anything is read or written; the agent's own sessions pass."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hermes_memory.errors import AccessDeniedError, ValidationError
from hermes_memory.hermes import registry
from hermes_memory.hermes.access import CallIdentity, check_call

ME = CallIdentity(session_id="s2", sessions=frozenset({"s1", "s2"}), user_id="u1", scope="default",
                  profile="default")  # fmt: skip


@pytest.mark.parametrize(
    ("args", "kwargs", "named"),
    [
        ({"session_id": "other"}, {}, "session 'other'"),
        ({}, {"session_id": "other", "tool_call_id": "call_9"}, "session 'other'"),
        ({"user_id": "u2"}, {}, "user 'u2'"),
        ({}, {"user_id": "u2"}, "user 'u2'"),
        ({"scope": "user:u2"}, {}, "scope 'user:u2'"),
        ({"profile": "work"}, {}, "profile 'work'"),
        ({"agent_identity": "work"}, {}, "profile 'work'"),
    ],
)
def test_a_call_naming_someone_else_is_refused(
    args: dict[str, Any], kwargs: dict[str, Any], named: str
) -> None:
    with pytest.raises(AccessDeniedError, match=f"names {named}") as caught:
        check_call(ME, {"query": "x", **args}, kwargs)
    assert "only use the memory of its own session" in str(caught.value)
    if "tool_call_id" in kwargs:
        assert "tool call call_9" in str(caught.value)


def test_the_agents_own_identity_passes() -> None:
    check_call(ME, {"query": "x"}, {})
    check_call(ME, {"session_id": "s1", "user_id": "u1", "scope": "default", "profile": "default"}, {})
    check_call(ME, {}, {"session_id": "s2", "tool_call_id": "call_1"})


def test_malformed_identity_arguments_are_bad_input() -> None:
    with pytest.raises(ValidationError, match="'session_id' must be a string"):
        check_call(ME, {"session_id": 7}, {})
    with pytest.raises(ValidationError, match="tool_call_id"):
        check_call(ME, {}, {"tool_call_id": ""})


def test_the_provider_refuses_another_sessions_call_before_touching_memory(make: Any, home: Path) -> None:
    provider = make("s1", user_id="alice")
    provider.on_session_switch("s2", parent_session_id="s1", reset=True)
    alice = registry.find(str(home), "default", "user:cli:alice")  # a named user has their own scope
    assert alice is not None
    before = alice.api.core.tiers.tier2().facts.count()
    refused = json.loads(
        provider.handle_tool_call(
            "nextlevel_remember", {"content": "Bob's password hint is 'tulip'.", "session_id": "someone-else"}
        )
    )
    assert refused["error_type"] == "access_denied"
    assert "names session 'someone-else'" in refused["error"] and "runs in session 's2'" in refused["error"]
    assert alice.api.core.tiers.tier2().facts.count() == before
    other_user = json.loads(provider.handle_tool_call("nextlevel_search", {"query": "x", "user_id": "bob"}))
    assert other_user["error_type"] == "access_denied" and "user 'bob'" in other_user["error"]
    hermes_kwargs = json.loads(
        provider.handle_tool_call("nextlevel_search", {"query": "x"}, session_id="s9", tool_call_id="call_3")
    )
    assert hermes_kwargs["error_type"] == "access_denied" and "tool call call_3" in hermes_kwargs["error"]
    # its own sessions (the one it started in and the current one) and no identity at all pass
    for args in ({"query": "x"}, {"query": "x", "session_id": "s1"}, {"query": "x", "session_id": "s2"}):
        assert "error" not in json.loads(provider.handle_tool_call("nextlevel_search", args))
