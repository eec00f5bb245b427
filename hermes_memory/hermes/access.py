"""Access check of a tool call against the session it belongs to (seed §12: "MemoryAPI checks the
tool_call_id against the session_id").

The provider knows whom it serves from ``initialize`` (session, user, profile) and its store (scope). A
tool call acts in that session only: a call whose arguments — or, in a Hermes that passes them, its
keyword arguments (``session_id``, ``user_id``, ``tool_call_id``) — name another session, user, scope or
profile is refused with a clear error, before anything is read or written. Hermes 0.19 passes no keyword
arguments to ``handle_tool_call`` and no tool schema of ours has these arguments, so in practice this
refuses a model that tries to reach another conversation's or user's memory by naming it. The sessions
this agent itself was bound to (``initialize``, then ``/new``, ``/resume``, compression) count as its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hermes_memory import validation as v
from hermes_memory.errors import AccessDeniedError, ValidationError

# Arguments that name whose memory a call acts on, and the identity field each must match.
_NAMED = {
    "session_id": "session",
    "user_id": "user",
    "scope": "scope",
    "profile": "profile",
    "agent_identity": "profile",
}
_MAX_ID = 256


@dataclass(frozen=True, slots=True)
class CallIdentity:
    """Whom the provider's tool calls act for."""

    session_id: str  # the current session
    sessions: frozenset[str]  # every session this agent was bound to (its own)
    user_id: str | None
    scope: str
    profile: str


def check_call(identity: CallIdentity, args: Mapping[str, Any], kwargs: Mapping[str, Any]) -> None:
    """Refuse a call that names another session, user, scope or profile than ``identity``'s.

    Raises AccessDeniedError naming what the call named and what it may act on; ValidationError for an
    identifying argument that is not a string (or a ``tool_call_id`` that is not a short string).
    """
    call_id = kwargs.get("tool_call_id")
    if call_id is not None and (not isinstance(call_id, str) or not call_id or len(call_id) > _MAX_ID):
        raise ValidationError(f"tool_call_id must be a non-empty string of at most {_MAX_ID} characters")
    for values in (args, kwargs):
        for key, field in _NAMED.items():
            if values.get(key) is None:
                continue
            named = values[key]
            if not isinstance(named, str):
                raise ValidationError(f"'{key}' must be a string, got {type(named).__name__}")
            _check(identity, field, key, named, call_id)


def _check(identity: CallIdentity, field: str, key: str, named: str, call_id: object) -> None:
    ok = {
        "session": named in identity.sessions,
        "user": named == (identity.user_id or ""),
        "scope": named == identity.scope,
        "profile": named == identity.profile,
    }[field]
    if ok:
        return
    own = {
        "session": identity.session_id or "(none)",
        "user": identity.user_id or "(no user)",
        "scope": identity.scope,
        "profile": identity.profile,
    }[field]
    which = f"tool call {call_id}" if isinstance(call_id, str) else "this tool call"
    raise AccessDeniedError(
        f"access denied: {which} names {field} {v.shown(named)} ('{key}'), but it runs in {field} "
        f"{v.shown(own)}; a tool call may only use the memory of its own session. Leave '{key}' out."
    )


__all__ = ["CallIdentity", "check_call"]
