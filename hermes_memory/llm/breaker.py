"""A circuit breaker for the optional LLM: after a failure that says the endpoint is unusable, the LLM
is skipped for a while, so a dead endpoint cannot slow ingestion or recall to a crawl."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

# Failures that say the endpoint is unusable right now (as opposed to one bad answer).
TRIPPING_KINDS = frozenset({"timeout", "connection", "http", "config"})


class CircuitBreaker:
    """Skips the LLM for ``cooldown_s`` after a failure that says the endpoint is unusable."""

    def __init__(self, cooldown_s: float, clock: Callable[[], float] = time.monotonic):
        self._cooldown_s = cooldown_s
        self._clock = clock
        self._open_until = 0.0
        self._lock = threading.Lock()

    def is_open(self) -> bool:
        with self._lock:
            return self._clock() < self._open_until

    def trip(self) -> None:
        with self._lock:
            self._open_until = self._clock() + self._cooldown_s


__all__ = ["TRIPPING_KINDS", "CircuitBreaker"]
