"""Interpreter exit stops and waits for our daemon threads, so none is in native code while the
interpreter finalises (that aborted a process with "terminate called without an active exception")."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading

from hermes_memory import _exit_guard

CHILD = textwrap.dedent(
    """
    import atexit, sys, time

    def report():  # registered before the guard's hook, so it runs after it (atexit is LIFO)
        print("alive at exit:", worker.alive, flush=True)

    atexit.register(report)
    from hermes_memory.ingest.background import BackgroundWorker

    def step():
        time.sleep(0.01)  # an item in hand: a turn, an embedding batch
        return True  # always busy: only stop() ends the loop

    worker = BackgroundWorker(step)
    worker.start()
    time.sleep(0.2)
    sys.exit(0)
    """
)


def test_exit_stops_and_waits_for_a_busy_worker() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    # The loop ended before finalisation (after the step that was running when exit began).
    assert done.stdout.strip() == "alive at exit: False"


def test_finish_all_calls_stop_and_reports_threads_that_outlive_the_wait() -> None:
    stop, release = threading.Event(), threading.Event()
    stubborn = threading.Thread(target=release.wait, args=(30,), daemon=True)
    polite = threading.Thread(target=stop.wait, args=(30,), daemon=True)
    _exit_guard.finish_before_exit(stubborn)
    _exit_guard.finish_before_exit(polite, stop.set)
    stubborn.start()
    polite.start()
    try:
        left = _exit_guard.finish_all(timeout=0.2)
        assert stop.is_set() and not polite.is_alive()
        assert left == [stubborn]
    finally:
        release.set()
        stubborn.join(5)
