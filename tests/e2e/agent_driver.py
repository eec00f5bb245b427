"""Drive the real Hermes ``AIAgent`` through a scripted conversation with the nextlevel provider.

Run by tests/e2e/test_hermes_agent.py in its own process (Hermes sets process-wide state, and the
offline guard must be installed before Hermes imports its HTTP clients):

    python agent_driver.py HERMES_HOME BASE_URL OUT.json [HOLD_DIR]

HERMES_HOME must already hold the installed, activated provider. Writes what the test asserts on to
OUT.json; the fake LLM (in the test's process) records what Hermes sent. With HOLD_DIR the driver is
a long-lived agent that owns the store: after the first turns it writes HOLD_DIR/ready and keeps the
store open until HOLD_DIR/release appears, so the test can run a second Hermes process meanwhile.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import offline_guard

offline_guard.install()  # before Hermes imports httpx/openai

HOME, BASE_URL, OUT = sys.argv[1], sys.argv[2], Path(sys.argv[3])
HOLD = Path(sys.argv[4]) if len(sys.argv) > 4 else None
HOLD_LIMIT_S = 300
os.environ["HERMES_HOME"] = HOME

from hermes_memory.api.envelope import run  # noqa: E402
from hermes_memory.errors import StorageError  # noqa: E402
from hermes_memory.hermes import registry  # noqa: E402


def shared_store() -> registry.SharedStore:
    stores = registry.open_stores()
    assert len(stores) == 1, stores
    (home, profile, scope), _ = next(iter(stores.items()))
    found = registry.find(home, profile, scope)
    assert found is not None
    return found


def settle(agent: Any) -> None:
    """Wait for Hermes' memory worker (sync_turn) and then for our ingestion queue."""
    agent._memory_manager.flush_pending(timeout=15)
    flushed = shared_store().api.flush(timeout=15)
    assert flushed["success"] and flushed["data"]["drained"], flushed


def tool_results(result: dict[str, Any]) -> list[str]:
    return [str(m.get("content")) for m in result["messages"] if m.get("role") == "tool"]


def main() -> None:
    from run_agent import AIAgent  # Hermes

    out: dict[str, Any] = {"turns": {}}
    agent = AIAgent(
        base_url=BASE_URL,
        api_key="sk-fake-local",
        model="fake-model",
        quiet_mode=True,
        skip_context_files=True,
        enabled_toolsets=["memory", "skills"],
        platform="cli",
        max_iterations=6,
    )
    manager = agent._memory_manager
    out["providers"] = [p.name for p in manager.providers] if manager else []
    out["tools"] = sorted(agent.valid_tool_names)
    history: list[dict[str, Any]] = []

    def turn(name: str, text: str) -> dict[str, Any]:
        nonlocal history
        started = time.monotonic()
        result: dict[str, Any] = agent.run_conversation(text, conversation_history=history)
        history = result["messages"]
        out["turns"][name] = {
            "final": result.get("final_response"),
            "tool_results": tool_results(result),
            "seconds": round(time.monotonic() - started, 2),
        }
        return result

    turn("fact", "I adopted a beagle named Biscuit last week.")
    settle(agent)
    turn("later", "What do you remember about my beagle?")
    turn("builtin_write", "Please note in your notes that I prefer window seats.")
    turn("search", "Search your memory for my dog, please.")
    turn("remember", "Store the fact that my sister Lena lives in Porto.")
    settle(agent)
    if HOLD is not None:
        hold(HOLD)

    # A store that fails the way a full disk or a locked file does: failed envelopes.
    api = shared_store().api

    def failing(*args: Any, **kwargs: Any) -> dict[str, Any]:
        def boom() -> None:
            raise StorageError("disk I/O error (injected by the e2e test)")

        return run("multi", boom)

    patched = ("recall", "remember_turn", "fact_store")
    for method in patched:
        setattr(api, method, failing)
    turn("store_error", "Search your memory for my dog again.")

    # ...and one that raises outright (a bug): Hermes must contain it too.
    def raising(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("unexpected failure (injected by the e2e test)")

    for method in patched:
        setattr(api, method, raising)
    turn("exception", "Search your memory for my dog one more time.")
    for method in patched:
        delattr(api, method)

    manager.flush_pending(timeout=15)
    agent.shutdown_memory_provider(history)  # what the CLI, gateway and `hermes -z` do at session end
    out["open_stores_after_shutdown"] = len(registry.open_stores())

    out["session_id"] = agent.session_id
    # What the store holds is read by the test after this process exits (the exit need not wait for
    # extraction or embedding; the next open finishes what is queued).
    out["refused"] = offline_guard.REFUSED
    OUT.write_text(json.dumps(out, indent=2, default=str), encoding="utf-8")


def hold(directory: Path) -> None:
    """Keep the store open (this agent owns it) until the test writes ``release``."""
    (directory / "ready").write_text(str(os.getpid()), encoding="utf-8")
    deadline = time.monotonic() + HOLD_LIMIT_S
    while not (directory / "release").exists():
        if time.monotonic() > deadline:
            raise SystemExit(f"agent_driver: no release in {directory} after {HOLD_LIMIT_S} s")
        time.sleep(0.1)


if __name__ == "__main__":
    main()
    # Exit the way `hermes -z` does (hermes_cli.main._exit_after_oneshot): past interpreter
    # finalization. Shutdown returns while the memory worker may still be embedding (its queues are
    # durable); a normal finalization with a daemon thread inside torch aborts ("terminate called
    # without an active exception").
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)
