"""What a chat closes: messages told through the real write path, one every ``step`` seconds, and the
facts they leave superseded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hermes_memory import MemoryAPI


def closed_in_chat(home: Path, said: list[tuple[str, str]], start: float, step: float) -> list[Any]:
    """The facts a chat of (speaker, message) pairs, the first said at ``start``, closes."""
    with MemoryAPI(hermes_home=home, **{"tier3.backend": "memory"}) as api:
        for i, (speaker, text) in enumerate(said):
            env = api.remember_message(text, "chat", start + i * step, speaker=speaker)
            assert env["success"], env
        assert api.flush()["success"]
        return list(api.tier2.facts.superseded(limit=100))
