"""Why a hit ranked: each returned hit carries recall's parts of its score (``metadata["signals"]``:
keywords, meaning, graph, a turn's context), rounded, only the non-zero ones, and adding them changes
neither a score nor the order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.recall import signals

QUERIES = ["where does the user live", "green tea", "who is Maya", "what happened on Friday"]


def _store(api: MemoryAPI) -> None:
    turns = [
        ("I moved to Lisbon last spring.", "Nice city!"),
        ("Maya is my manager at Nordlicht.", "Got it."),
        ("I drink green tea every morning.", "Noted."),
        ("The deploy failed on Friday.", "Sorry."),
    ]
    for i, (said, answer) in enumerate(turns):
        assert api.remember_turn(said, answer, f"s{i % 2}", 1_700_000_000.0 + i * 86_400)["success"]
    api.flush()
    api.fact_store("The user lives in Lisbon")
    api.entity_ensure("Maya", "person")
    api.embed_pending()


def _hits(api: MemoryAPI, query: str) -> list[dict[str, Any]]:
    envelope = api.recall(query, limit=8)
    assert envelope["success"], envelope
    return list(envelope["data"]["hits"])


def _recalled(home: Path) -> dict[str, list[dict[str, Any]]]:
    settings = {"tier3.embedding_model": "hashing", "tier3.backend": "memory"}
    with MemoryAPI(hermes_home=home, **settings) as api:
        _store(api)
        return {q: _hits(api, q) for q in QUERIES}


def _order(hits: list[dict[str, Any]]) -> list[tuple[str, str, float]]:
    return [(h["kind"], h["text"], round(h["score"], 4)) for h in hits]  # uuids differ between stores


def test_hits_carry_their_parts_without_changing_the_ranking(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    explained = _recalled(tmp_path / "explained")
    with monkeypatch.context() as patched:  # the same store and questions, nothing explained
        patched.setattr(signals, "explain", lambda hits, **_: list(hits))
        bare = _recalled(tmp_path / "bare")
    assert all("signals" not in h["metadata"] for hits in bare.values() for h in hits)
    for query, hits in explained.items():
        assert _order(hits) == _order(bare[query]), query
    every = [h for hits in explained.values() for h in hits]
    parts = [h["metadata"]["signals"] for h in every if "signals" in h["metadata"]]
    assert parts and all(v != 0 and round(v, 3) == v for p in parts for v in p.values())
    assert {name for p in parts for name in p} <= {"keywords", "meaning", "graph", "context"}
    fact = next(h for h in explained["where does the user live"] if h["kind"] == "fact")
    assert fact["metadata"]["signals"]["keywords"] > 0  # it shares "user" and "lives"
    turn = next(h for h in explained["green tea"] if h["kind"] == "episode")
    assert {"keywords", "meaning"} <= set(turn["metadata"]["signals"])
