"""Who said a line in a group chat, so that what a group member says is a fact about that member.

Hermes' gateway opens one agent per group member by default (the agent's ``user_name`` is the speaker);
in a shared session (a thread, or a group with ``group_sessions_per_user: false``) it prefixes every
message with ``[<display name>] `` (``gateway/run.py``, after its own neutralising of the name), after
any channel backfill it puts before ``[New message]``. The prefix is taken off the stored text and
becomes the speaker; the user id recorded with the turn is the session's only when the speaker is the
person the session was opened for.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hermes_memory.audience import Identity

_PREFIX = re.compile(r"\[([^\[\]\n]{1,80})\] ")
_NEW_MESSAGE = "[New message]\n"
UNKNOWN_MEMBER = "a group member"


@dataclass(frozen=True)
class Spoken:
    """One user message of a session: its text (prefix removed), speaker, and the speaker's user id."""

    text: str
    speaker: str | None
    user_id: str | None


def spoken(text: str, identity: Identity) -> Spoken:
    """Who said ``text`` in this session: in a group, the ``[name] `` prefix Hermes put on it, else the
    session's person; in a direct chat (or the CLI) the session's person, text unchanged."""
    if not identity.in_group:
        return Spoken(text, identity.user_name, identity.user_id)
    start = text.rfind(_NEW_MESSAGE)
    start = 0 if start < 0 else start + len(_NEW_MESSAGE)
    match = _PREFIX.match(text, start)
    own = identity.user_name or identity.user_id
    if match is None:
        return Spoken(text, own or UNKNOWN_MEMBER, identity.user_id)
    name = match.group(1).strip()
    body = text[:start] + text[match.end() :]
    same = name in (identity.user_name, identity.user_id)
    return Spoken(body, name or UNKNOWN_MEMBER, identity.user_id if same else None)


__all__ = ["UNKNOWN_MEMBER", "Spoken", "spoken"]
