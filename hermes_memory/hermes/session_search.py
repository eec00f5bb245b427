"""Hermes' ``session_search`` results, taken into Tier 3 (seed §9.2).

The seed edits Hermes' session-search tool to push its top results into ``semantic_index`` in the
background. Hermes 0.19 gives a memory provider no hook on another tool's call (``post_tool_call`` is a
general-plugin hook; the memory-provider loader's ``register_hook`` is a no-op), but ``sync_turn``
receives the turn's whole message list, tool calls and tool results included, on Hermes' memory worker
thread. So the provider reads the ``session_search`` results from there: each discovered session's
matched (anchored) message becomes a Tier 3 text of source type ``session`` with its session and message
id and time — once (``Semantic.index_session_message``), and not for sessions whose turns the provider
stored itself. Pure functions here; no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hermes_memory.hermes.session import message_text

TOOL_NAME = "session_search"
# A result larger than this is not parsed (Hermes' own results are a few KB).
_MAX_RESULT_CHARS = 200_000
_MAX_SESSION_ID = 200


@dataclass(frozen=True, slots=True)
class FoundMessage:
    """One message a session search found: the matched message of an earlier session."""

    session_id: str
    message_id: int | None
    text: str
    timestamp: float | None


def last_turn(messages: Sequence[Mapping[str, Any]]) -> Sequence[Mapping[str, Any]]:
    """The messages after the last user message (the turn that just completed)."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, Mapping) and message.get("role") == "user":
            return messages[index + 1 :]
    return messages


def found_messages(messages: Iterable[Mapping[str, Any]]) -> list[FoundMessage]:
    """The matched messages of every ``session_search`` result in ``messages`` (in order, each once).
    A result that is not the tool's JSON (an error, a read or browse of one session, a cut result) is
    skipped."""
    calls: set[str] = set()
    out: dict[tuple[str, int | None], FoundMessage] = {}
    for message in messages:
        if not isinstance(message, Mapping):
            continue
        if message.get("role") == "assistant":
            calls.update(_search_call_ids(message.get("tool_calls")))
        elif message.get("role") == "tool" and message.get("tool_call_id") in calls:
            for found in _results(message):
                out.setdefault((found.session_id, found.message_id), found)
    return list(out.values())


def _search_call_ids(tool_calls: object) -> list[str]:
    ids = []
    for call in tool_calls if isinstance(tool_calls, list) else []:
        function = call.get("function") if isinstance(call, Mapping) else None
        if (
            isinstance(function, Mapping)
            and function.get("name") == TOOL_NAME
            and isinstance(call.get("id"), str)
        ):
            ids.append(call["id"])
    return ids


def _results(message: Mapping[str, Any]) -> list[FoundMessage]:
    content = message.get("content")
    text = content if isinstance(content, str) else message_text(message)
    if not text or len(text) > _MAX_RESULT_CHARS:
        return []
    try:
        # Hermes may append a note after the JSON (a guardrail observation): read the object only.
        data, _ = json.JSONDecoder().raw_decode(text.lstrip())
    except ValueError:
        return []
    if (
        not isinstance(data, dict)
        or data.get("success") is False
        or not isinstance(data.get("results"), list)
    ):
        return []
    out = []
    for result in data["results"]:
        found = _matched(result)
        if found is not None:
            out.append(found)
    return out


def _matched(result: object) -> FoundMessage | None:
    """The anchored (matched) message of one discovered session, if the result has one with text."""
    if not isinstance(result, Mapping):
        return None
    session_id = result.get("session_id")
    if not isinstance(session_id, str) or not session_id.strip() or len(session_id) > _MAX_SESSION_ID:
        return None
    for shown in result.get("messages") or []:
        if not isinstance(shown, Mapping) or not shown.get("anchor"):
            continue
        body = shown.get("content")
        if not isinstance(body, str) or not body.strip():
            return None
        raw_id = shown.get("id")
        message_id = raw_id if isinstance(raw_id, int) and not isinstance(raw_id, bool) else None
        return FoundMessage(session_id.strip(), message_id, body.strip(), _time(shown.get("timestamp")))
    return None


def _time(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


__all__ = ["TOOL_NAME", "FoundMessage", "found_messages", "last_turn"]
