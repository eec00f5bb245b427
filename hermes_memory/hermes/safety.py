"""Injection scanning at the Hermes boundary: memory is data, never instructions.

Inside Hermes the host's own ``tools.threat_patterns.scan_for_threats`` is used, so the provider refuses
exactly what Hermes' built-in memory refuses; without Hermes (tests, the CLI) the project's port of the
same patterns is used. Both are applied as a pair where it matters: Hermes' list first, ours as backstop.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable

from hermes_memory.errors import ThreatDetectedError
from hermes_memory.security import threats

HostScanner = Callable[[str, str], list[str]]

_lock = threading.Lock()
_host: list[HostScanner | None] = []  # resolved once per process: [scanner] or [None]


def _host_scanner() -> HostScanner | None:
    with _lock:
        if not _host:
            try:
                module = importlib.import_module("tools.threat_patterns")
            except ImportError:
                _host.append(None)
            else:
                scan = getattr(module, "scan_for_threats", None)
                _host.append(scan if callable(scan) else None)
        return _host[0]


def scanner_name() -> str:
    """Which pattern set is in use: 'hermes' or 'hermes-memory'."""
    return "hermes" if _host_scanner() is not None else "hermes-memory"


def findings(text: str, scope: str = "strict") -> list[str]:
    """Pattern ids matched in ``text`` (empty when clean), from Hermes' scanner and ours."""
    found: list[str] = []
    host = _host_scanner()
    if host is not None:
        found.extend(str(pid) for pid in host(text, scope))
    for match in threats.scan_for_threats(text, scope):
        if match.pattern_id not in found:
            found.append(match.pattern_id)
    return found


def ensure_storable(text: str) -> None:
    """Refuse content for the store that either scanner flags (``strict``, like Hermes' memory tool).

    Raises ThreatDetectedError naming the pattern.
    """
    hits = findings(text, "strict")
    if hits:
        raise ThreatDetectedError(
            f"Blocked: content matches threat pattern '{hits[0]}'. Memory is injected into the model's "
            "context and must not contain injection or exfiltration payloads; store the plain fact instead."
        )


def is_clean_for_context(text: str) -> bool:
    """True when recalled text may be shown to the model (``context`` scope, as Hermes uses for
    context files and memory entries)."""
    return not findings(text, "context")


__all__ = ["ensure_storable", "findings", "is_clean_for_context", "scanner_name"]
