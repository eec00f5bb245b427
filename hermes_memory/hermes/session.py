"""Reading Hermes' OpenAI-style message lists: turn pairs, stable turn ids, session summaries, and
the key facts of messages about to be compressed. Pure functions, no I/O."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from hermes_memory.extract import MessageInput, extract
from hermes_memory.extract.speech import strip_memory_context
from hermes_memory.security.threats import neutralise

Message = Mapping[str, Any]
_MAX_TITLE = 120


@dataclass(frozen=True)
class TurnPair:
    ordinal: int  # 1-based count of user messages up to and including this one
    user: str
    assistant: str


def message_text(message: Message) -> str:
    """The text of a message whose content is a string or a list of content parts, without any
    recalled-memory fence (what memory gave the model is never taken back as said)."""
    content = message.get("content")
    if isinstance(content, str):
        return strip_memory_context(content)
    if isinstance(content, list):
        parts = [
            p.get("text", "") for p in content if isinstance(p, Mapping) and p.get("type", "text") == "text"
        ]
        return strip_memory_context(" ".join(part for part in parts if isinstance(part, str)))
    return ""


def user_ordinal(messages: Sequence[Message]) -> int:
    """How many user messages the list holds: the ordinal of the turn that just completed."""
    return sum(1 for m in messages if isinstance(m, Mapping) and m.get("role") == "user")


def turn_id(session_id: str, ordinal: int) -> str:
    """A stable id for a session's n-th turn, so a turn stored by sync_turn and again at session end
    is written once (remember_turn is idempotent per turn id)."""
    digest = hashlib.sha256(f"{session_id}\x00{ordinal}".encode()).hexdigest()[:32]
    return f"hermes-{digest}"


def turn_pairs(messages: Iterable[Message]) -> list[TurnPair]:
    """Each user message with the last non-empty assistant text that answered it (tool-call steps
    in between are skipped); user messages that got no answer are left out, as Hermes does."""
    pairs: list[TurnPair] = []
    ordinal = 0
    user: str | None = None
    answer = ""
    for message in messages:
        if not isinstance(message, Mapping):
            continue
        role = message.get("role")
        if role == "user":
            if user is not None and answer.strip():
                pairs.append(TurnPair(ordinal, user, answer))
            ordinal += 1
            user, answer = message_text(message), ""
        elif role == "assistant" and user is not None:
            text = message_text(message)
            if text.strip():
                answer = text
    if user is not None and answer.strip():
        pairs.append(TurnPair(ordinal, user, answer))
    return pairs


def session_summary(messages: Sequence[Message], session_id: str, platform: str) -> tuple[str, str]:
    """(title, description) of a session for its timeline event; threat patterns are neutralised."""
    users = [message_text(m) for m in messages if isinstance(m, Mapping) and m.get("role") == "user"]
    users = [" ".join(u.split()) for u in users if u.strip()]
    tools = sum(len(m.get("tool_calls") or []) for m in messages if isinstance(m, Mapping))
    first = _clip(users[0], 80) if users else "(no user messages)"
    title = _clip(f"Hermes session on {platform or 'unknown'}: {first}", _MAX_TITLE)
    parts = [f"session {session_id}", f"{len(users)} user turn(s)", f"{tools} tool call(s)"]
    if len(users) > 1:
        parts.append(f"last message: {_clip(users[-1], 200)}")
    return neutralise(title), neutralise("; ".join(parts))


def key_facts(messages: Sequence[Message], *, user_name: str | None, limit: int = 12) -> list[str]:
    """The most salient facts stated in these messages (rule-based extraction, no model, no I/O)."""
    now = datetime.now(tz=UTC)
    scored: dict[str, float] = {}
    for message in messages:
        if not isinstance(message, Mapping) or message.get("role") not in ("user", "assistant"):
            continue
        text = message_text(message)
        if not text.strip():
            continue
        role = str(message["role"])
        result = extract(
            MessageInput(text=text, time=now, speaker=user_name if role == "user" else None, role=role)
        )
        for fact in result.facts:
            scored[fact.content] = max(scored.get(fact.content, 0.0), fact.salience * fact.confidence)
    ranked = sorted(scored, key=lambda content: scored[content], reverse=True)
    return [neutralise(content) for content in ranked[:limit]]


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


__all__ = [
    "TurnPair",
    "key_facts",
    "message_text",
    "session_summary",
    "turn_id",
    "turn_pairs",
    "user_ordinal",
]
