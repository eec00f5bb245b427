"""One Hermes gateway session, run by a real Hermes ``AIAgent`` in its own process, built with the
identity keywords Hermes' gateway passes (``gateway/run.py``: ``platform``, ``user_id``, ``user_name``,
``chat_id``, ``chat_type``, ``thread_id``, ``gateway_session_key``; ``agent/agent_init.py`` hands them
to the memory provider's ``initialize``). ``hermes -z`` cannot carry them: it always builds its agent
with ``platform="cli"`` and no user (``hermes_cli/oneshot.py``), and the gateway's own entry point needs
a messaging platform's network; this is the gateway's agent construction without the network.

    python gateway_session.py HERMES_HOME BASE_URL OUT.json SOURCE.json MESSAGE [MESSAGE ...]

SOURCE.json holds the gateway's source fields (``platform``, ``user_id``, ``user_name``, ``chat_id``,
``chat_type``, ``thread_id``, ``session_key``). In a shared session (a thread) each message is prefixed
``[<user_name>] `` as the gateway does. Writes the final answers and tool results to OUT.json.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import offline_guard

offline_guard.install()  # before Hermes imports httpx/openai

HOME, BASE_URL, OUT, SOURCE = sys.argv[1], sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4])
MESSAGES = sys.argv[5:]
os.environ["HERMES_HOME"] = HOME


def main() -> None:
    from run_agent import AIAgent  # Hermes

    source: dict[str, Any] = json.loads(SOURCE.read_text(encoding="utf-8"))
    agent = AIAgent(
        base_url=BASE_URL,
        api_key="sk-fake-local",
        model="fake-model",
        quiet_mode=True,
        skip_context_files=True,
        enabled_toolsets=["memory"],
        max_iterations=6,
        session_id=source["session_id"],
        platform=source["platform"],
        user_id=source.get("user_id"),
        user_name=source.get("user_name"),
        chat_id=source.get("chat_id"),
        chat_type=source.get("chat_type"),
        thread_id=source.get("thread_id"),
        gateway_session_key=source["session_key"],
    )
    manager = agent._memory_manager
    out: dict[str, Any] = {"providers": [p.name for p in manager.providers] if manager else [], "turns": []}
    history: list[dict[str, Any]] = []
    shared = source.get("chat_type") != "dm" and source.get("thread_id")
    for message in MESSAGES:
        text = f"[{source['user_name']}] {message}" if shared else message
        result = agent.run_conversation(text, conversation_history=history)
        history = result["messages"]
        out["turns"].append(
            {
                "final": result.get("final_response"),
                "tool_results": [str(m.get("content")) for m in history if m.get("role") == "tool"],
            }
        )
    if manager is not None:
        manager.flush_pending(timeout=15)
        from hermes_memory.hermes import registry

        for key in registry.open_stores():
            store = registry.find(*key)
            assert store is not None
            flushed = store.api.flush(timeout=30)
            assert flushed["success"] and flushed["data"]["drained"], flushed
    agent.shutdown_memory_provider(history)  # what the gateway does when the session expires
    out["refused"] = offline_guard.REFUSED
    OUT.write_text(json.dumps(out), encoding="utf-8")


if __name__ == "__main__":
    main()
