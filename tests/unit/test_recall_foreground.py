"""The background worker steps aside for recalls (issue 13: recall while the worker ingests): a batch
of queued turns or embeddings does not start while a recall runs in the process, and starts once none
does (or after ``BACKGROUND_WAIT_S``, so recalls cannot starve it)."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from hermes_memory import MemoryAPI
from hermes_memory.recall import foreground
from hermes_memory.recall.foreground import RECALLS, Foreground

SETTINGS: dict[str, Any] = {"tier3.embedding_model": "hashing", "tier3.backend": "memory"}


def test_a_worker_batch_waits_for_the_running_recall(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(foreground, "BACKGROUND_WAIT_S", 60.0)
    with MemoryAPI(hermes_home=tmp_path, **SETTINGS) as api:  # no worker: the test drains
        assert api.remember_turn("I moved to Lisbon in May.", "Nice!", "s1")["success"]
        drained = threading.Event()

        def drain() -> None:
            api.core.ingest.drain_once(background=True)
            drained.set()

        with RECALLS.running():
            worker = threading.Thread(target=drain)
            worker.start()
            assert not drained.wait(0.5)  # a recall runs: the batch has not started
            assert api.pending()["data"]["turns"] == 1
        worker.join(30)
        assert drained.is_set()
        assert api.pending()["data"]["turns"] == 0
        # A recall through the API marks itself running while it works.
        seen: list[int] = []
        orig = RECALLS.running

        def spy() -> Any:
            seen.append(1)
            return orig()

        monkeypatch.setattr(RECALLS, "running", spy)
        assert api.recall("Where do I live?")["success"]
        assert seen


def test_a_flush_in_the_callers_thread_does_not_wait(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(foreground, "BACKGROUND_WAIT_S", 60.0)
    with MemoryAPI(hermes_home=tmp_path, **SETTINGS) as api:
        assert api.remember_turn("My dog Biscuit loves the beach.", "Cute!", "s1")["success"]
        with RECALLS.running():  # the caller asked for the drain: it is not background work
            assert api.flush(timeout=30)["data"]["drained"]


def test_waiting_ends_when_the_last_recall_ends_or_times_out() -> None:
    gate = Foreground()
    assert gate.wait_until_clear(0.0)
    with gate.running(), gate.running():
        assert gate.active == 2
        assert not gate.wait_until_clear(0.01)  # timed out: the caller goes ahead anyway
    assert gate.active == 0 and gate.wait_until_clear(0.0)


def test_background_work_waits_for_a_quiet_moment_after_recalls() -> None:
    """Recalls back to back (a gap between them, none running) are no quiet moment: the work waits for
    one, up to its timeout, so it runs in fewer, longer stretches beside fewer recalls."""
    gate = Foreground()
    assert gate.wait_until_clear(0.0, quiet=3600.0)  # no recall ever ran
    with gate.running():
        pass
    assert gate.wait_until_clear(0.0)  # none runs now
    assert not gate.wait_until_clear(0.05, quiet=3600.0)  # but one just ended
    released = threading.Event()

    def wait() -> None:
        if gate.wait_until_clear(60.0, quiet=0.05):
            released.set()

    waiter = threading.Thread(target=wait)
    waiter.start()
    waiter.join(30)
    assert released.is_set()  # the quiet moment came before the timeout


def test_the_worker_steps_aside_with_the_quiet_period(tmp_path: Path, monkeypatch: Any) -> None:
    asked: list[tuple[float, float]] = []
    def record(timeout: float, quiet: float = 0.0) -> bool:
        asked.append((timeout, quiet))
        return True

    monkeypatch.setattr(RECALLS, "wait_until_clear", record)
    with MemoryAPI(hermes_home=tmp_path, **SETTINGS) as api:
        assert api.remember_turn("I moved to Lisbon in May.", "Nice!", "s1")["success"]
        api.core.ingest.drain_once(background=True)
    assert asked and all(q == foreground.QUIET_S > 0 for _, q in asked)


def test_no_recall_yet_is_quiet_on_a_freshly_booted_machine() -> None:
    """The monotonic clock may start near 0 at boot: before any recall, the gate is quiet however long
    the quiet asked for (it once read the boot as a recall that had just ended)."""
    gate = Foreground(clock=lambda: 5.0)  # five seconds after boot
    assert gate.wait_until_clear(0.0, quiet=60.0)
    with gate.running():
        pass
    assert not gate.wait_until_clear(0.0, quiet=60.0)  # one ended "now"
