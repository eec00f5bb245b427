"""Input checks of MemoryAPI's write methods (remembered turns, facts, entities, events): each raises
ValidationError naming the argument, and returns the value as the core takes it."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from hermes_memory import validation as v
from hermes_memory.errors import ValidationError
from hermes_memory.ingest.worker import to_timestamp

# A turn may be long (pasted logs, code); it is chunked, not refused, up to this size per message.
MAX_TURN_CHARS = 1_000_000
_MAX_METADATA_CHARS = 20_000
# ingest_pending waits at most a day (beyond it, pass None: no bound).
_MAX_INGEST_WAIT_S = 86400.0
# The most rows a query returns.
MAX_LIMIT = 1000


def session_id(value: Any) -> str:
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


def turn_id(value: Any) -> str | None:
    return None if value is None else v.text("turn_id", value, max_chars=200)


def metadata(value: Mapping[str, Any] | None) -> dict[str, Any]:
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


__all__ = [
    "MAX_LIMIT",
    "MAX_TURN_CHARS",
    "fact_fields",
    "flush_timeout",
    "ingest_timeout",
    "metadata",
    "session_id",
    "ttl_expiry",
    "turn_id",
    "turn_time",
]
