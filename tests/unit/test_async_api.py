"""AsyncMemoryAPI (issue 17, Engram): generated from MemoryAPI — every public method, present or added
later, has a coroutine twin with the same signature — and usable from concurrent asyncio tasks."""

from __future__ import annotations

import asyncio
import inspect
import threading
from pathlib import Path
from typing import Any

import pytest

import hermes_memory
from hermes_memory import AsyncMemoryAPI, MemoryAPI
from hermes_memory.errors import ConfigError, ValidationError

SETTINGS: dict[str, Any] = {"tier3.embedding_model": "hashing", "tier3.backend": "memory"}


def _ok(envelope: dict[str, Any]) -> Any:
    assert envelope["success"], envelope["error"]
    return envelope["data"]


def _sync_methods(cls: type) -> list[str]:
    # Counted here on its own (not with the module's helper): what a caller can call on MemoryAPI.
    return [name for name, member in inspect.getmembers(cls, callable) if not name.startswith("_")]


def test_every_public_method_has_an_async_twin_with_its_signature_and_docstring() -> None:
    names = _sync_methods(MemoryAPI)
    assert {"recall", "remember_turn", "fact_store", "forget", "close", "restore"} <= set(names)
    assert len(names) >= 60
    for name in names:
        sync, twin = getattr(MemoryAPI, name), getattr(AsyncMemoryAPI, name)
        assert twin is not sync, name
        assert inspect.iscoroutinefunction(twin), name
        assert inspect.signature(twin) == inspect.signature(sync), name
        assert twin.__doc__ == sync.__doc__, name
        assert twin.__qualname__ == f"AsyncMemoryAPI.{name}"


def test_properties_are_not_twinned_but_reachable_through_api(tmp_path: Path) -> None:
    assert isinstance(inspect.getattr_static(MemoryAPI, "tier2"), property)
    assert not hasattr(AsyncMemoryAPI, "tier2")

    async def main() -> None:
        async with await AsyncMemoryAPI.open(hermes_home=tmp_path, **SETTINGS) as amem:
            assert isinstance(amem.api, MemoryAPI)
            assert amem.api.scope == "default"
            assert await amem.call(lambda api: api.tier2.facts.count()) == 0

    asyncio.run(main())


def test_a_method_added_to_the_sync_class_gets_a_twin_without_an_edit(tmp_path: Path) -> None:
    class Extended(MemoryAPI):
        def shout(self, text: str, *, times: int = 2) -> str:
            """Say it louder."""
            return "!".join([text.upper()] * times)

    class AsyncExtended(AsyncMemoryAPI, of=Extended):
        pass

    assert not hasattr(AsyncMemoryAPI, "shout")
    assert inspect.signature(AsyncExtended.shout) == inspect.signature(Extended.shout)
    assert AsyncExtended.shout.__doc__ == "Say it louder."

    async def main() -> tuple[str, str]:
        async with await AsyncExtended.open(hermes_home=tmp_path, **SETTINGS) as amem:
            assert type(amem.api) is Extended
            return await amem.shout("hi", times=3), _ok(await amem.fact_store("Maya likes tea"))["content"]

    assert asyncio.run(main()) == ("HI!HI!HI", "Maya likes tea")


def test_remember_recall_and_forget_from_concurrent_tasks(tmp_path: Path) -> None:
    facts = [f"Maya's {pet} is called {name}" for pet, name in
             [("beagle", "Rex"), ("cat", "Tom"), ("parrot", "Kiwi"), ("hamster", "Bo")]]  # fmt: skip

    async def main() -> None:
        async with await AsyncMemoryAPI.open(hermes_home=tmp_path, **SETTINGS) as amem:
            stored = await asyncio.gather(*(amem.fact_store(text) for text in facts))
            uuids = {_ok(e)["content"]: _ok(e)["uuid"] for e in stored}
            assert set(uuids) == set(facts)
            turn = amem.remember_turn("I moved to Lisbon in May.", "Nice!", "s1", "2026-06-01T10:00:00")
            _ok(await turn)
            recalled, flushed = await asyncio.gather(amem.recall("beagle", limit=5), amem.flush(timeout=30))
            assert _ok(flushed)["drained"] is True
            assert _ok(recalled)["hits"][0]["text"] == facts[0]

            beagle = uuids[facts[0]]
            preview, lisbon = await asyncio.gather(amem.forget(beagle), amem.recall("Lisbon"))
            assert _ok(preview)["confirmed"] is False
            assert any("Lisbon" in hit["text"] for hit in _ok(lisbon)["hits"])
            forgotten, after = await asyncio.gather(amem.forget(beagle, confirm=True), amem.recall("beagle"))
            assert _ok(forgotten)["confirmed"] is True
            assert all(hit["text"] != facts[0] for hit in _ok(after)["hits"])
            assert _ok(await amem.fact_get(uuids[facts[1]]))["content"] == facts[1]

    asyncio.run(main())


def test_calls_run_in_order_on_one_worker_thread_that_is_not_the_loops(tmp_path: Path) -> None:
    async def main() -> tuple[list[int], set[int], threading.Thread]:
        order: list[int] = []

        def record(api: MemoryAPI, i: int) -> threading.Thread:
            order.append(i)
            return threading.current_thread()

        async with await AsyncMemoryAPI.open(hermes_home=tmp_path, **SETTINGS) as amem:
            threads = await asyncio.gather(*(amem.call(record, i) for i in range(20)))
        assert all(t is not threading.main_thread() for t in threads)
        return order, {id(t) for t in threads}, threads[0]

    order, distinct, worker = asyncio.run(main())
    assert order == list(range(20))
    assert len(distinct) == 1
    worker.join(timeout=30)  # close let the worker go
    assert not worker.is_alive()


def test_a_blocking_call_does_not_block_the_event_loop(tmp_path: Path) -> None:
    async def main() -> bool:
        gate = threading.Event()
        async with await AsyncMemoryAPI.open(hermes_home=tmp_path, **SETTINGS) as amem:
            waiting = asyncio.create_task(amem.call(lambda api: gate.wait(60)))
            await asyncio.sleep(0)  # the worker now waits; the loop must still run this coroutine
            gate.set()
            return await waiting

    assert asyncio.run(main()) is True


def test_after_close_calls_answer_as_the_closed_sync_api_does(tmp_path: Path) -> None:
    sync = MemoryAPI(hermes_home=tmp_path / "sync", **SETTINGS)
    _ok(sync.fact_store("Maya likes tea"))
    sync.close()
    expected = sync.recall("tea")
    assert expected["success"] is False

    async def main() -> tuple[dict[str, Any], bool]:
        amem = AsyncMemoryAPI(MemoryAPI(hermes_home=tmp_path / "async", **SETTINGS))
        _ok(await amem.fact_store("Maya likes tea"))
        await amem.close()
        return await amem.recall("tea"), await amem.wait_closed(5)

    closed, waited = asyncio.run(main())
    assert (closed["success"], closed["error"]) == (False, expected["error"])
    assert waited is True


def test_static_twin_answers_like_the_sync_method(tmp_path: Path) -> None:
    sync = MemoryAPI.restore(tmp_path / "no-such-backup", hermes_home=tmp_path / "home")
    twin = asyncio.run(AsyncMemoryAPI.restore(tmp_path / "no-such-backup", hermes_home=tmp_path / "home"))
    assert sync["success"] is False
    assert (twin["success"], twin["error"], twin["meta"]["error_type"]) == (
        False, sync["error"], sync["meta"]["error_type"],
    )  # fmt: skip


def test_open_raises_what_the_sync_constructor_raises(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no_such_key"):
        asyncio.run(AsyncMemoryAPI.open(hermes_home=tmp_path, no_such_key=1))
    with pytest.raises(ValidationError, match="MemoryAPI"):
        AsyncMemoryAPI("not an api")  # type: ignore[arg-type]
    opened, constructed = inspect.signature(AsyncMemoryAPI.open), inspect.signature(MemoryAPI)
    assert opened.parameters == constructed.parameters


def test_the_package_exports_it() -> None:
    assert "AsyncMemoryAPI" in hermes_memory.__all__
    assert hermes_memory.AsyncMemoryAPI is AsyncMemoryAPI
