"""Input checks of MemoryAPI's write methods (remembered turns, facts, entities, events): each raises
ValidationError naming the argument, and returns the value as the core takes it.

``turn``, ``message``, ``mirror_write`` and ``event`` check a whole write and return the core service's
keyword arguments (``core.ingest.remember_turn(**turn(...))``): MemoryAPI and the Hermes provider, which
calls the core directly, refuse the same input the same way."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypedDict

from hermes_memory import validation as v
from hermes_memory.errors import ValidationError
from hermes_memory.ingest.turns import to_timestamp
from hermes_memory.records import AsOf, TurnMessage

if TYPE_CHECKING:
    from hermes_memory.core.triples import Triple

# A turn may be long (pasted logs, code); it is chunked, not refused, up to this size per message.
MAX_TURN_CHARS = 1_000_000
_MAX_METADATA_CHARS = 20_000
# ingest_pending waits at most a day (beyond it, pass None: no bound).
_MAX_INGEST_WAIT_S = 86400.0
# The most rows a query returns.
MAX_LIMIT = 1000
_PREDICATE = re.compile(r"^[^\W\d][\w]*(?: [^\W\d][\w]*)*$")
# The most turns one ``observe_many`` call queues.
MAX_OBSERVE_ITEMS = 1000
_TURN_KEYS = frozenset({"user", "assistant", "user_name", "assistant_name"})
_MESSAGE_KEYS = frozenset({"text", "role", "speaker"})
_COMMON_KEYS = frozenset({"session_id", "time", "metadata", "turn_id"})


class TurnArgs(TypedDict):
    """``Ingest.remember_turn``'s arguments, checked."""

    messages: list[TurnMessage]
    session_id: str
    time_: float
    metadata: dict[str, Any]
    turn_id: str | None


class MessageArgs(TypedDict):
    """``Ingest.remember_message``'s arguments, checked."""

    message: TurnMessage
    session_id: str
    time_: float
    metadata: dict[str, Any]
    turn_id: str | None


class MirrorArgs(TypedDict):
    """``Mirror.write``'s arguments, checked (``content`` stripped)."""

    action: str
    store: str
    content: str
    old_text: str | None
    speaker: str | None
    source_id: str | None


class EventArgs(TypedDict):
    """``Knowledge.add_event``'s arguments, checked."""

    event_type: str
    title: str
    description: str | None
    importance: float
    related_entities: list[str]
    timestamp: float | None
    session_id: str | None


def turn(
    user: Any,
    assistant: Any,
    session_id: Any,
    time_: Any = None,
    *,
    user_name: Any = None,
    assistant_name: Any = None,
    metadata: Any = None,
    turn_id: Any = None,
) -> TurnArgs:
    """A remembered exchange (``MemoryAPI.remember_turn``): each message at most ``MAX_TURN_CHARS``, a
    side that is None is left out. Raises ValidationError."""
    messages = [
        TurnMessage(role, v.text(role, text, max_chars=MAX_TURN_CHARS, allow_empty=True),
                    v.optional_text(f"{role}_name", name, max_chars=200))
        for role, text, name in (("user", user, user_name), ("assistant", assistant, assistant_name))
        if text is not None
    ]  # fmt: skip
    return TurnArgs(
        messages=messages, session_id=_session_id(session_id), time_=turn_time(time_),
        metadata=_metadata(metadata), turn_id=_turn_id(turn_id),
    )  # fmt: skip


def message(
    text: Any,
    session_id: Any,
    time_: Any = None,
    *,
    role: Any = "user",
    speaker: Any = None,
    metadata: Any = None,
    turn_id: Any = None,
) -> MessageArgs:
    """A single remembered message (``MemoryAPI.remember_message``). Raises ValidationError."""
    body = v.text("text", text, max_chars=MAX_TURN_CHARS)
    checked = TurnMessage(v.choice("role", role, {"user", "assistant"}), body,
                          v.optional_text("speaker", speaker, max_chars=200))  # fmt: skip
    return MessageArgs(
        message=checked, session_id=_session_id(session_id), time_=turn_time(time_),
        metadata=_metadata(metadata), turn_id=_turn_id(turn_id),
    )  # fmt: skip


def mirror_write(
    action: Any,
    store: Any,
    content: Any,
    old_text: Any = None,
    *,
    speaker: Any = None,
    source_id: Any = None,
    max_chars: int,
) -> MirrorArgs:
    """A mirrored curated write (``MemoryAPI.mirror_curated_write``); ``max_chars`` is the store's
    limit for a text. Raises ValidationError."""
    from hermes_memory.core.mirror import ACTIONS  # the write path: a read never imports it

    v.choice("action", action, set(ACTIONS))
    v.choice("store", store, {"memory", "user"})
    return MirrorArgs(
        action=action,
        store=store,
        content=v.text("content", content, max_chars=max_chars, allow_empty=True).strip(),
        old_text=v.optional_text("old_text", old_text, max_chars=max_chars),
        speaker=v.optional_text("speaker", speaker, max_chars=200),
        source_id=v.optional_text("source_id", source_id, max_chars=500),
    )


def event(
    event_type: Any,
    title: Any,
    description: Any = None,
    importance: Any = 0.5,
    related_entities: Any = None,
    *,
    timestamp: Any = None,
    session_id: Any = None,
    max_chars: int,
) -> EventArgs:
    """A timeline event (``MemoryAPI.timeline_add``); ``max_chars`` is the store's limit for the
    description. Raises ValidationError."""
    refs = v.string_list("related_entities", related_entities, max_chars=200)
    return EventArgs(
        event_type=v.choice("event_type", event_type, v.EVENT_TYPES),
        title=v.text("title", title, max_chars=500).strip(),
        description=v.optional_text("description", description, max_chars=max_chars),
        importance=v.unit_interval("importance", importance),
        related_entities=[ref.strip() for ref in refs],
        timestamp=v.optional_time("timestamp", timestamp),
        session_id=v.optional_text("session_id", session_id, max_chars=200),
    )


def observe_items(items: Any, session_id: Any = None) -> list[TurnArgs]:
    """``MemoryAPI.observe_many``'s items, every one checked before anything is written: each a mapping,
    either a message (``text``, optional ``role``, ``speaker``) or a turn (``user`` and/or ``assistant``,
    optional ``user_name``, ``assistant_name``), with optional ``session_id`` (default: the call's),
    ``time``, ``metadata`` and ``turn_id`` (unique within the call). Raises ValidationError naming the
    item (``items[i]``)."""
    if isinstance(items, str | bytes | Mapping) or not isinstance(items, Sequence):
        raise ValidationError(f"items must be a list of mappings, got {type(items).__name__}")
    if not items:
        raise ValidationError("items must hold at least one message or turn")
    if len(items) > MAX_OBSERVE_ITEMS:
        raise ValidationError(f"items holds {len(items)} entries; the limit is {MAX_OBSERVE_ITEMS} a call")
    default_sid = None if session_id is None else _session_id(session_id)
    out: list[TurnArgs] = []
    seen: set[str] = set()
    for index, item in enumerate(items):
        try:
            out.append(_observe_item(item, default_sid))
        except ValidationError as exc:
            raise ValidationError(f"items[{index}]: {exc}") from exc
        turn_id = out[-1]["turn_id"]
        if turn_id is not None:
            if turn_id in seen:
                raise ValidationError(f"items[{index}]: turn_id {turn_id!r} is given twice")
            seen.add(turn_id)
    return out


def _observe_item(item: Any, session_id: str | None) -> TurnArgs:
    if not isinstance(item, Mapping):
        raise ValidationError(f"must be a mapping, got {type(item).__name__}")
    keys = set(item)
    shape = _MESSAGE_KEYS if "text" in keys else _TURN_KEYS
    unknown = sorted(str(k) for k in keys - shape - _COMMON_KEYS)
    if unknown:
        raise ValidationError(
            f"unknown key(s) {', '.join(unknown)}; a message takes text, role, speaker and a turn user, "
            "assistant, user_name, assistant_name (both: session_id, time, metadata, turn_id)"
        )
    sid = item.get("session_id", session_id)
    if sid is None:
        raise ValidationError("needs a session_id (in the item or given to the call)")
    common = {"time_": item.get("time"), "metadata": item.get("metadata"), "turn_id": item.get("turn_id")}
    if "text" in keys:
        checked = message(item["text"], sid, role=item.get("role", "user"), speaker=item.get("speaker"),
                          **common)  # fmt: skip
        return TurnArgs(messages=[checked["message"]], session_id=checked["session_id"],
                        time_=checked["time_"], metadata=checked["metadata"],
                        turn_id=checked["turn_id"])  # fmt: skip
    if item.get("user") is None and item.get("assistant") is None:
        raise ValidationError("needs text (a message) or user/assistant (a turn)")
    return turn(item.get("user"), item.get("assistant"), sid, user_name=item.get("user_name"),
                assistant_name=item.get("assistant_name"), **common)  # fmt: skip


def point_in_time(name: str, value: Any) -> float | None:
    """A point in time as Unix seconds: None, a number, a datetime (naive: UTC) or ISO-8601 text
    (``2023-05-08``, ``2023-05-08T13:56``, with or without an offset; without one: UTC)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | str | datetime):
        raise ValidationError(
            f"{name} must be Unix seconds, a datetime or ISO-8601 text, got {v.shown(value)}"
        )
    try:
        ts = to_timestamp(value)
    except (ValueError, OverflowError, OSError) as exc:
        raise ValidationError(f"{name} {v.shown(value)} is not a valid time: {exc}") from exc
    return v.timestamp(name, ts)


def as_of(value: Any) -> float | AsOf | None:
    """``as_of`` of recall, fact queries and history: a time (what was believed then: system time),
    or a mapping / ``AsOf`` with ``valid`` (world time: what was true then) and/or ``known`` (system time:
    according to what was recorded by then; default now). Raises ValidationError."""
    if isinstance(value, AsOf):
        value = value.to_dict()
    if isinstance(value, Mapping):
        unknown = sorted(str(k) for k in set(value) - {"valid", "known"})
        if unknown:
            raise ValidationError(f"as_of takes 'valid' and 'known', not {', '.join(unknown)}")
        return AsOf(
            point_in_time("as_of.valid", value.get("valid")), point_in_time("as_of.known", value.get("known"))
        )
    return point_in_time("as_of", value)


class TripleArgs(TypedDict):
    """``Knowledge.assert_fact``'s arguments, checked."""

    subject: str
    predicate: str
    obj: str
    valid_from: float | None
    valid_to: float | None
    category: str | None
    confidence: float
    source: str
    source_id: str | None
    importance: float | None


def asserted_triple(
    subject: Any,
    predicate: Any,
    obj: Any,
    valid_from: Any = None,
    valid_to: Any = None,
    *,
    category: Any = None,
    confidence: Any = 1.0,
    source: Any = "user",
    source_id: Any = None,
    importance: Any = None,
) -> TripleArgs:
    """A fact triple with its valid time (``MemoryAPI.assert_fact``): the predicate lower-cased with
    spaces as underscores. Raises ValidationError."""
    start, end = point_in_time("valid_from", valid_from), point_in_time("valid_to", valid_to)
    if start is not None and end is not None and end <= start:
        raise ValidationError(f"valid_to ({end}) must be after valid_from ({start})")
    return TripleArgs(
        subject=v.text("subject", subject, max_chars=200).strip(),
        predicate=v.text("predicate", predicate, max_chars=100).strip().lower().replace(" ", "_"),
        obj=v.text("object", obj, max_chars=500).strip(),
        valid_from=start,
        valid_to=end,
        category=None if category is None else v.choice("category", category, v.FACT_CATEGORIES),
        confidence=v.unit_interval("confidence", confidence),
        source=v.choice("source", source, v.SOURCE_TYPES),
        source_id=v.optional_text("source_id", source_id, max_chars=500),
        importance=None if importance is None else v.unit_interval("importance", importance),
    )


def _session_id(value: Any) -> str:
    return v.text("session_id", value, max_chars=200)


def turn_time(when: Any) -> float:
    """A turn's time as Unix seconds (None: now; a datetime; ISO-8601 text; a number)."""
    if when is not None and (isinstance(when, bool) or not isinstance(when, int | float | str | datetime)):
        raise ValidationError(f"time must be Unix seconds, a datetime or ISO-8601 text, got {v.shown(when)}")
    try:
        ts = to_timestamp(when)
    except (ValueError, OverflowError, OSError) as exc:
        raise ValidationError(f"time {v.shown(when)} is not a valid timestamp: {exc}") from exc
    v.timestamp("time", ts)
    return ts


def _turn_id(value: Any) -> str | None:
    return None if value is None else v.text("turn_id", value, max_chars=200)


def _metadata(value: Mapping[str, Any] | None) -> dict[str, Any]:
    """A copy of the caller's metadata, JSON-serialisable and at most ``_MAX_METADATA_CHARS`` as JSON."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValidationError(f"metadata must be a mapping, got {type(value).__name__}")
    try:
        text = json.dumps(dict(value), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as exc:
        # RecursionError: nested deeper than the interpreter's stack; refused like any unserialisable value.
        raise ValidationError(f"metadata must be JSON-serialisable: {exc}") from exc
    if len(text) > _MAX_METADATA_CHARS:
        raise ValidationError(
            f"metadata is {len(text)} characters as JSON; the limit is {_MAX_METADATA_CHARS}"
        )
    v.text("metadata", text, allow_empty=True)
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def flush_timeout(timeout: Any) -> float | None:
    return None if timeout is None else v.number_value("timeout", timeout)


def ingest_timeout(timeout: Any) -> float | None:
    limit = None if timeout is None else v.number_value("timeout", timeout)
    if limit is not None and not 0 <= limit <= _MAX_INGEST_WAIT_S:
        raise ValidationError(f"timeout must be between 0 and {_MAX_INGEST_WAIT_S:g} seconds, got {limit!r}")
    return limit


def ttl_expiry(expires_at: Any, ttl_days: Any) -> float | None:
    """The expiry of a fact: ``expires_at``, or ``ttl_days`` from now when given."""
    expiry = v.optional_time("expires_at", expires_at)
    if ttl_days is not None:
        days = v.number_value("ttl_days", ttl_days)
        if days <= 0:
            raise ValidationError(f"ttl_days must be > 0, got {days!r}")
        expiry = v.timestamp("ttl_days (as an expiry time)", time.time() + days * 86400.0)
    return expiry


def triple(subject: Any, predicate: Any, obj: Any) -> Triple | None:
    """A fact's subject/predicate/object as given (None when none is): a predicate or object needs the
    subject; the predicate is a word or snake_case phrase."""
    from hermes_memory.core.triples import Triple  # the write path: a read never imports it

    if subject is None and predicate is None and obj is None:
        return None
    if subject is None:
        raise ValidationError("subject is required when predicate or object is given")
    name = v.text("subject", subject, max_chars=200).strip()
    verb = None if predicate is None else v.text("predicate", predicate, max_chars=100).strip()
    if verb is not None and not _PREDICATE.match(verb):
        raise ValidationError(
            f"predicate must be a word or snake_case phrase (e.g. works_at), got {v.shown(verb)}"
        )
    value = None if obj is None else v.text("object", obj, max_chars=500).strip()
    if value is not None and verb is None:
        raise ValidationError("predicate is required when object is given")
    return Triple(name, verb, value, exclusive=value is not None)


def fact_fields(fields: Mapping[str, Any], max_chars: int) -> dict[str, Any]:
    """The fields of a fact update, each checked (the store names the allowed fields)."""
    checked: dict[str, Any] = {}
    for key, value in fields.items():
        if key == "content":
            checked[key] = v.text("content", value, max_chars=max_chars).strip()
        elif key == "category":
            checked[key] = v.choice("category", value, v.FACT_CATEGORIES)
        elif key in ("confidence", "importance"):
            checked[key] = v.unit_interval(key, value)
        elif key in ("expires_at", "valid_from"):
            checked[key] = v.optional_time(key, value)
        else:
            checked[key] = value  # the store names the allowed fields
    return checked



# A correction is a plain statement typed by a person: tags and script links are refused there (stored
# text is escaped wherever it is shown, but a statement carrying them is a paste gone wrong or an attack).
_MARKUP = re.compile(r"<\s*/?\s*[A-Za-z!?][^>]*>|javascript\s*:", re.IGNORECASE)


def correction_text(text: Any, max_chars: int) -> str:
    """A correction's text: non-empty, within ``max_chars``, no markup. Raises ValidationError."""
    checked = v.text("text", text, max_chars=max_chars).strip()
    if not checked:
        raise ValidationError("text must say the corrected statement; it is empty")
    found = _MARKUP.search(checked)
    if found:
        raise ValidationError(f"text must be a plain statement; it contains markup ({found.group(0)[:40]!r})")
    return checked

__all__ = [
    "MAX_LIMIT",
    "MAX_OBSERVE_ITEMS",
    "MAX_TURN_CHARS",
    "EventArgs",
    "MessageArgs",
    "MirrorArgs",
    "TripleArgs",
    "TurnArgs",
    "as_of",
    "asserted_triple",
    "correction_text",
    "event",
    "fact_fields",
    "flush_timeout",
    "ingest_timeout",
    "message",
    "mirror_write",
    "observe_items",
    "point_in_time",
    "triple",
    "ttl_expiry",
    "turn",
    "turn_time",
]
