"""What a chat closes: messages told through the real write path, one every ``step`` seconds, and the
facts they leave superseded; and what the shipped decision calls on a probe's pairs."""

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


def called_in_probe(path: Path) -> tuple[list[str], int, int]:
    """The shipped decision on a probe's pairs (``bench.updates`` format): the later statements wrongly
    called updates, the updates caught, and how many pairs there are."""
    from hermes_memory.bench import updates as bench
    from hermes_memory.tier3.int8_embedder import IntegerMiniLMEmbedder
    from hermes_memory.updates.detector import UpdateDetector

    detector = UpdateDetector(IntegerMiniLMEmbedder().embed_document)
    pairs = bench.load(path)
    called = {p.id: bench.decide(detector, p, [])[0] for p in pairs}
    wrong = [p.raw["later"] for p in pairs if called[p.id] and not p.update]
    return wrong, sum(1 for p in pairs if called[p.id] and p.update), len(pairs)
