"""Small helpers shared by the Tier 2 stores."""

from __future__ import annotations

import hashlib
import json
import re
import time
import unicodedata
import uuid as _uuid
from typing import Any

_SPACE = re.compile(r"\s+")


def new_uuid() -> str:
    return str(_uuid.uuid4())


def now() -> float:
    return time.time()


def normalise(text: str) -> str:
    """The form two texts share when they say the same thing: NFKC, case-folded, one space."""
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def content_hash(text: str) -> str:
    """SHA-256 of the normalised text (dedup key)."""
    return hashlib.sha256(normalise(text).encode("utf-8")).hexdigest()


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def loads_list(value: str | None) -> tuple[str, ...]:
    if not value:
        return ()
    data = json.loads(value)
    return tuple(str(item) for item in data) if isinstance(data, list) else ()


def loads_dict(value: str | None) -> dict[str, Any]:
    if not value:
        return {}
    data = json.loads(value)
    return data if isinstance(data, dict) else {}
