"""No native work in flight when the interpreter exits.

Our background threads (the ingestion worker, background recalls) are daemon threads, so a Hermes
process never waits for them to end its turn. But a daemon thread still inside native code when the
interpreter finalises is dangerous: when it returns and takes the GIL again, CPython ends it with
``pthread_exit``, whose forced unwinding through C++ frames aborts the process ("terminate called
without an active exception", exit 134); and a BLAS call cut short this way can leave OpenBLAS's exit
handler waiting forever for its worker threads (reproduced: a numpy matmul loop in a daemon thread at
``sys.exit`` hung 1 run in 15).

So each such thread is registered here; at exit (``atexit`` runs before finalisation stops daemon
threads) every registered thread is asked to stop and joined, within ``EXIT_WAIT_S`` in total. A thread
stops between items (a turn, an embedding batch, one recall), so the wait is short.
"""

from __future__ import annotations

import atexit
import threading
import time
from collections.abc import Callable

# Hermes' exit watchdog allows 30 s; a worker stops after the batch in hand (well under a second).
EXIT_WAIT_S = 20.0

_threads: dict[threading.Thread, Callable[[], None] | None] = {}
_lock = threading.Lock()


def finish_before_exit(thread: threading.Thread, stop: Callable[[], None] | None = None) -> None:
    """Have interpreter exit call ``stop()`` (if given) and wait for ``thread`` (bounded)."""
    with _lock:
        for done in [t for t in _threads if not t.is_alive() and t.ident is not None]:
            del _threads[done]  # ended threads are dropped as new ones come
        _threads[thread] = stop


def finish_all(timeout: float = EXIT_WAIT_S) -> list[threading.Thread]:
    """Ask every registered thread to stop and wait up to ``timeout`` s in total; returns the threads
    still running after it (logged by the caller, if it wants to)."""
    with _lock:
        pending = list(_threads.items())
    for _, stop in pending:
        if stop is not None:
            stop()
    deadline = time.monotonic() + timeout
    left = []
    for thread, _ in pending:
        if thread is threading.current_thread() or thread.ident is None:
            continue  # never started
        thread.join(max(0.0, deadline - time.monotonic()))
        if thread.is_alive():
            left.append(thread)
    return left


atexit.register(finish_all)

__all__ = ["EXIT_WAIT_S", "finish_all", "finish_before_exit"]
