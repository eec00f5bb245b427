"""Input validation shared by every edge. Each check raises ValidationError naming the parameter."""

from __future__ import annotations

import math
import os
import re
import reprlib
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from hermes_memory.errors import ValidationError

FACT_CATEGORIES = frozenset(
    {"general", "user", "project", "domain", "tool", "preference", "event", "relationship"}
)
ENTITY_TYPES = frozenset(
    {"person", "project", "tech", "tool", "org", "concept", "place", "pet", "event", "other"}
)
EVENT_TYPES = frozenset(
    {"milestone", "decision", "error", "insight", "change", "event", "session", "delegation", "memory"}
)
SOURCE_TYPES = frozenset({"session", "memory", "tool", "cron", "user", "extraction", "import"})
# Unix seconds accepted as a point in time: 0001-01-01 .. 9000-01-01 UTC. Every such value converts to a
# datetime, and date arithmetic on it (a cron's next fire time, a TTL) stays representable too.
TIME_MIN = -62_135_596_800.0
TIME_MAX = 221_845_392_000.0


_SHOWN = reprlib.Repr()
_SHOWN.maxstring = _SHOWN.maxother = 80


def shown(value: Any) -> str:
    """``repr`` for error messages, bounded in length and depth (input may be huge or nested deep)."""
    return _SHOWN.repr(value)


def text(name: str, value: Any, *, max_chars: int | None = None, allow_empty: bool = False) -> str:
    """A real, non-empty string: no NUL bytes, no lone surrogates, within ``max_chars``."""
    if not isinstance(value, str):
        raise ValidationError(f"{name} must be a string, got {type(value).__name__}")
    if not allow_empty and not value.strip():
        raise ValidationError(f"{name} must not be empty or whitespace")
    if "\x00" in value:
        raise ValidationError(f"{name} must not contain NUL bytes")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValidationError(f"{name} contains an invalid surrogate at position {exc.start}") from exc
    if max_chars is not None and len(value) > max_chars:
        raise ValidationError(f"{name} is {len(value)} characters; the limit is {max_chars}")
    return value


def optional_text(name: str, value: Any, *, max_chars: int | None = None) -> str | None:
    return None if value is None else text(name, value, max_chars=max_chars)


def unit_interval(name: str, value: Any) -> float:
    """A finite number within [0, 1]."""
    number = number_value(name, value)
    if not 0.0 <= number <= 1.0:
        raise ValidationError(f"{name} must be within [0, 1], got {number!r}")
    return number


def number_value(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValidationError(f"{name} must be a number, got {type(value).__name__}")
    number = float(value)
    if not math.isfinite(number):
        raise ValidationError(f"{name} must be finite, got {value!r}")
    return number


def timestamp(name: str, value: Any) -> float:
    """Unix seconds within [TIME_MIN, TIME_MAX] (years 1 to 9000)."""
    number = number_value(name, value)
    if not TIME_MIN <= number <= TIME_MAX:
        raise ValidationError(f"{name} must be Unix seconds between years 1 and 9000, got {number!r}")
    return number


def optional_time(name: str, value: Any) -> float | None:
    return None if value is None else timestamp(name, value)


def path(name: str, value: Any) -> str:
    """A filesystem path given as text or an ``os.PathLike`` (checked like ``text``)."""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if isinstance(value, bytes):
        raise ValidationError(f"{name} must be a path as text, got bytes")
    return text(name, value)


def optional_callback(name: str, value: Any) -> Callable[..., Any] | None:
    """None or something callable (progress callbacks)."""
    if value is None:
        return None
    if not callable(value):
        raise ValidationError(f"{name} must be callable, got {type(value).__name__}")
    checked: Callable[..., Any] = value
    return checked


def positive_int(name: str, value: Any, *, maximum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(f"{name} must be an integer, got {type(value).__name__}")
    if value < 1:
        raise ValidationError(f"{name} must be >= 1, got {value}")
    if maximum is not None and value > maximum:
        raise ValidationError(f"{name} must be <= {maximum}, got {value}")
    return value


# A profile name becomes a directory of the memory home ({HERMES_HOME}/{profile}/memory): one plain path
# component — no separator, no leading dot (".", ".."), no NUL or control character, at most 64 characters.
PROFILE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
# Names a profile directory must not take: what Hermes keeps in its home (a profile "skills" would put
# memory inside Hermes' skills), and the device names Windows reserves (a portable home stays portable).
RESERVED_PROFILES = frozenset(
    {"memories", "skills", "plugins", "profiles", "sessions", "logs", "cron", "cache", "bin", "hooks"}
    | {"con", "prn", "aux", "nul", "clock$"}
    | {f"{dev}{n}" for dev in ("com", "lpt") for n in range(10)}
)


def profile_name(name: str, value: Any) -> str:
    """A memory profile name: 1-64 characters of letters, digits, ``_``, ``.``, ``-``, starting with a
    letter or digit, and not a reserved name (see ``RESERVED_PROFILES``). Raises ValidationError."""
    if not isinstance(value, str):
        raise ValidationError(f"{name} must be a string, got {type(value).__name__}")
    if PROFILE_RE.fullmatch(value) is None:
        raise ValidationError(
            f"{name} must be 1-64 characters of letters, digits, '_', '.', '-' starting with a letter or "
            f"digit (it names a directory of the memory home), got {shown(value)}"
        )
    if value.lower().split(".")[0] in RESERVED_PROFILES:
        raise ValidationError(f"{name} {value!r} is a reserved name (Hermes' own directories, device names)")
    return value


def choice(name: str, value: Any, allowed: Iterable[str]) -> str:
    options = sorted(allowed)
    if not isinstance(value, str) or value not in options:
        raise ValidationError(f"{name} must be one of {', '.join(options)}; got {shown(value)}")
    return value


def string_list(name: str, value: Any, *, max_chars: int | None = None) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str | bytes | bytearray) or not isinstance(value, Sequence):
        raise ValidationError(f"{name} must be a list of strings, got {type(value).__name__}")
    return [text(f"{name}[{i}]", item, max_chars=max_chars) for i, item in enumerate(value)]


__all__ = [
    "ENTITY_TYPES",
    "EVENT_TYPES",
    "FACT_CATEGORIES",
    "PROFILE_RE",
    "RESERVED_PROFILES",
    "SOURCE_TYPES",
    "TIME_MAX",
    "TIME_MIN",
    "choice",
    "number_value",
    "optional_callback",
    "optional_text",
    "optional_time",
    "path",
    "positive_int",
    "profile_name",
    "shown",
    "string_list",
    "text",
    "timestamp",
    "unit_interval",
]
