"""Threat scanning shared by every path that writes into, or renders out of, memory."""

from __future__ import annotations

from hermes_memory.security.threats import (
    INVISIBLE_CHARS,
    MAX_SCAN_CHARS,
    SCOPES,
    THREAT_PATTERNS,
    ThreatMatch,
    ThreatPattern,
    ensure_safe,
    first_threat,
    neutralise,
    scan_for_threats,
    strip_invisible,
)

__all__ = [
    "INVISIBLE_CHARS",
    "MAX_SCAN_CHARS",
    "SCOPES",
    "THREAT_PATTERNS",
    "ThreatMatch",
    "ThreatPattern",
    "ensure_safe",
    "first_threat",
    "neutralise",
    "scan_for_threats",
    "strip_invisible",
]
