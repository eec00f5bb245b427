"""The seed's result envelope. Built only here, at the API edge; the stores return records."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from hermes_memory.errors import HermesMemoryError

Envelope = dict[str, Any]


def ok(data: Any, *, tier: str, started: float, tiers: Sequence[str], **meta: Any) -> Envelope:
    listed = data.get("results", data.get("hits")) if isinstance(data, dict) else None
    if isinstance(listed, list):
        count = len(listed)
    else:
        count = len(data) if isinstance(data, list) else (0 if data is None else 1)
    return {
        "success": True,
        "data": data,
        "tier": tier,
        "meta": {
            "query_time_ms": round((time.perf_counter() - started) * 1000.0, 3),
            "results_count": count,
            "tiers_queried": list(tiers),
            **meta,
        },
        "error": None,
    }


def failed(exc: HermesMemoryError, *, tier: str, started: float, tiers: Sequence[str]) -> Envelope:
    # Errors that carry recovery data (e.g. the current curated entries when a limit is hit) pass it on.
    details = {
        key: list(value)
        for key in ("current_entries", "matches")
        if (value := getattr(exc, key, None)) is not None
    }
    data = details or None
    return {
        "success": False,
        "data": data,
        "tier": tier,
        "meta": {
            "query_time_ms": round((time.perf_counter() - started) * 1000.0, 3),
            "results_count": 0,
            "tiers_queried": list(tiers),
            "error_type": exc.code,
        },
        "error": str(exc),
    }


def run(tier: str, fn: Callable[[], Any], *, tiers: Sequence[str] | None = None, **meta: Any) -> Envelope:
    """Call ``fn`` and wrap its result; a HermesMemoryError becomes a failed envelope.

    Any other exception is a bug and propagates unchanged.
    """
    started = time.perf_counter()
    queried = list(tiers) if tiers is not None else [tier]
    try:
        data = fn()
    except HermesMemoryError as exc:
        return failed(exc, tier=tier, started=started, tiers=queried)
    return ok(data, tier=tier, started=started, tiers=queried, **meta)


__all__ = [
    "Envelope",
    "failed",
    "ok",
    "run",
]
