"""Recalls in flight in this process, so background work can step aside for them.

A recall is what someone waits for (Hermes' prefetch blocks the user's turn); the background worker's
ingest and embedding batches are not. On a 2-core machine the two share the cores and the GIL, so the
worker checks ``wait_until_clear`` at its step boundaries and starts its next batch once no recall is
running and none ended in the last ``QUIET_S`` (or after ``timeout``, so a stream of recalls cannot starve
it: recalls back to back then share the cores with one longer stretch of work rather than each with a
piece of it). Process-wide: every store in the process shares the cores.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager


class Foreground:
    """A count of the recalls running now and a condition to wait for none."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._cond = threading.Condition()
        self._active = 0
        # the clock when the last recall ended; -inf before any did (the monotonic clock may start near 0
        # at boot, so 0 would read as "one just ended" for a while on a fresh machine)
        self._ended = float("-inf")

    @contextmanager
    def running(self) -> Iterator[None]:
        """Mark a recall as running for the duration of the block."""
        with self._cond:
            self._active += 1
        try:
            yield
        finally:
            with self._cond:
                self._active -= 1
                if not self._active:
                    self._ended = self._clock()
                    self._cond.notify_all()

    @property
    def active(self) -> int:
        return self._active

    def wait_until_clear(self, timeout: float, quiet: float = 0.0) -> bool:
        """Block until no recall runs and none ended in the last ``quiet`` seconds, at most ``timeout``
        seconds; True when so. (Recalls back to back leave no quiet moment: the work then waits for the
        timeout and does a longer stretch at once, so fewer recalls share the cores with it.)"""
        deadline = self._clock() + timeout
        with self._cond:
            while True:
                now = self._clock()
                if not self._active and now - self._ended >= quiet:
                    return True
                if now >= deadline:
                    return False
                wait = deadline - now if self._active else min(deadline - now, quiet - (now - self._ended))
                self._cond.wait(wait)


RECALLS = Foreground()
# How long a background batch waits for running recalls before it starts anyway.
BACKGROUND_WAIT_S = 0.25
# How long no recall must have run before a background batch starts (within BACKGROUND_WAIT_S).
QUIET_S = 0.02
# How long the worker lets newly queued turns settle before it writes them: Hermes calls ``sync_turn`` and
# then ``queue_prefetch`` for the next turn on the same thread, so that recall starts (and is waited for)
# first. At 100k stored turns, recall p50 while the worker ingests: 36 ms without it, 31 ms with it.
SETTLE_S = 0.05

__all__ = ["BACKGROUND_WAIT_S", "QUIET_S", "RECALLS", "SETTLE_S", "Foreground"]
