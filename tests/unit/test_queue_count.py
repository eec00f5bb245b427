"""A turn on its way from the inbox into the queue is always counted: ``flush`` stops when the count is
0, so a count that missed a turn the worker was moving made ``flush`` report "drained" too early."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from hermes_memory.api.memory_api import MemoryAPI


def test_a_turn_moved_between_the_two_reads_is_still_counted(
    open_api: Callable[..., MemoryAPI], monkeypatch: pytest.MonkeyPatch
) -> None:
    api = open_api()
    queue = api.tier2.ingest_queue
    assert api.remember_turn("Maya moved to Lisbon.", "Noted.", "s1")["success"]
    assert queue.count() == 1
    moves = []
    inbox_count, db_query = queue._inbox.count, queue._db.query_one

    def move_after_first_read(read: Callable[..., Any]) -> Callable[..., Any]:
        def wrapped(*args: Any) -> Any:
            result = read(*args)
            if not moves:  # the worker moves the row right after the first of the two reads
                moves.append(queue.absorb())
            return result

        return wrapped

    monkeypatch.setattr(queue._inbox, "count", move_after_first_read(inbox_count))
    monkeypatch.setattr(queue._db, "query_one", move_after_first_read(db_query))
    assert queue.count() >= 1
    assert moves == [1]
