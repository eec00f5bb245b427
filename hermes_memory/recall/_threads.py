"""Recall's keyword side runs on a few long-lived daemon threads beside the calling thread's embedding."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

# The keyword side runs beside the embedding, on one of this many long-lived daemon threads (not a
# ThreadPoolExecutor: Python joins an executor's threads at exit, so a one-shot Hermes process would wait
# for a search nobody needs any more; and not a new thread per recall: starting one waits for it to be
# scheduled). Several recalls (the prefetch's jobs) may run at once.
RECALL_THREADS = 3

_jobs: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]]] = queue.SimpleQueue()
_started: list[threading.Thread] = []
_start_lock = threading.Lock()


def _serve() -> None:
    while True:
        fn, future = _jobs.get()
        if not future.set_running_or_notify_cancel():
            continue
        try:
            future.set_result(fn())
        except BaseException as exc:  # noqa: BLE001 - handed to the caller through the future
            future.set_exception(exc)


def in_background(fn: Callable[[], Any]) -> Future[Any]:
    """Run ``fn`` on a daemon thread; its result (or exception) in the returned future."""
    if len(_started) < RECALL_THREADS:
        with _start_lock:
            while len(_started) < RECALL_THREADS:
                thread = threading.Thread(target=_serve, name="hermes-memory-recall", daemon=True)
                thread.start()
                _started.append(thread)
    future: Future[Any] = Future()
    _jobs.put((fn, future))
    return future


def run_here(fn: Callable[[], Any]) -> Future[Any]:
    """``fn`` run here, as a finished future (nothing to overlap: no thread hand-off)."""
    future: Future[Any] = Future()
    future.set_result(fn())
    return future


__all__ = ["RECALL_THREADS", "in_background", "run_here"]
