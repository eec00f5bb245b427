"""A background thread that keeps the durable queues drained (turns first, then embeddings)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from hermes_memory._exit_guard import finish_before_exit

log = logging.getLogger(__name__)


class BackgroundWorker:
    """Runs ``step()`` whenever woken (or every ``interval`` s) until stopped.

    ``step`` returns True while it made progress; exceptions are logged with their traceback and the
    loop goes on (the work stays queued and is retried), so one bad item never stops ingestion.
    """

    def __init__(
        self, step: Callable[[], bool], *, interval: float = 1.0, name: str = "hermes-memory-worker"
    ):
        self._step = step
        self._interval = interval
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._idle = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        # At interpreter exit the loop is stopped and waited for (bounded), so no step is still in
        # native code (SQLite, the embedder, the vector engine) while the interpreter finalises.
        finish_before_exit(self._thread, self._request_stop)
        self._thread.start()

    def _request_stop(self) -> None:
        self._stop.set()
        self._wake.set()

    def wake(self) -> None:
        self._idle.clear()
        self._wake.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.clear()
            try:
                busy = self._step()
            except Exception:
                log.exception("hermes-memory background worker step failed")
                busy = False
            if busy:
                continue
            self._idle.set()
            self._wake.wait(self._interval)

    def wait_idle(self, timeout: float) -> bool:
        """Wake the worker and wait until it found nothing to do; False on timeout."""
        self.wake()
        return self._idle.wait(timeout)

    def stop(self, timeout: float = 5.0) -> bool:
        """Ask the loop to end after the item in hand and wait up to ``timeout`` s; True once it ended.

        The step sees ``stopping`` and returns between items, so nothing is cut in half; work not done
        stays in the durable queues for the next worker (in this process or the next one)."""
        self._request_stop()
        if self._thread.is_alive():
            self._thread.join(timeout)
        return not self._thread.is_alive()

    @property
    def stopping(self) -> bool:
        """True once ``stop`` was called: a step in progress should return after its current item."""
        return self._stop.is_set()

    def join(self) -> None:
        """Wait (without a bound) until the loop has ended; call after ``stop``."""
        self._thread.join()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive()


def deadline_after(timeout: float | None) -> float | None:
    return None if timeout is None else time.monotonic() + timeout


__all__ = [
    "BackgroundWorker",
    "deadline_after",
]
