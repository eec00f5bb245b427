"""Two processes on one store with the real MiniLM embedder and the embedded engine: the owner
searches qdrant-edge, the second process (which cannot open it) searches the vectors stored in Tier 2
exactly. Both return the same hits for the same queries, and the second embeds no stored text again.
On a store below ``tier3.engine_min_vectors`` (the default's small store) neither opens the engine:
both search the stored vectors exactly.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow

TURNS = [
    "I adopted a little beagle from the shelter on Saturday.",
    "My sister Ana is a nurse in Lisbon.",
    "We are planning a hiking trip to the Dolomites in July.",
    "The weather has been grey all week.",
    "I watched a documentary about volcanoes.",
    "Traffic on the bridge was terrible this morning.",
    "We tried the new bakery on Main Street; their sourdough is great.",
    "My laptop needed another software update.",
    "The football match went to extra time.",
    "I finally fixed the squeaky door in the hallway.",
    "My brother Tom just started university in Edinburgh.",
    "I'm learning to play the cello, lessons are on Tuesdays.",
]
QUERIES = [
    "Does Caroline have a pet?",
    "Who are my siblings?",
    "Where are we going on holiday?",
    "What instrument am I learning?",
    "good bread nearby",
]

# argv: home, role ("owner" fills, drains and holds the engine until stdin closes; "second" only reads),
# turns, queries, config overrides
SCRIPT = textwrap.dedent(
    """
    import json, sys
    from hermes_memory import MemoryAPI
    from hermes_memory.tier3._minilm_encoder import MiniLMEncoder

    home, role, turns, queries = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), json.loads(sys.argv[4])
    settings = json.loads(sys.argv[5])
    documents = []
    real = MiniLMEncoder.embed_document
    def counting(self, texts):
        documents.extend(texts)
        return real(self, texts)
    MiniLMEncoder.embed_document = counting

    api = MemoryAPI(hermes_home=home, **settings)
    if role == "owner":
        for i, text in enumerate(turns):
            api.remember_turn(text, "I see.", "s1", 1_683_540_000.0 + 60 * i, user_name="Caroline",
                              assistant_name="Bot")
        assert api.flush(600)["data"]["drained"]
    sem = api.core.tiers.semantic()
    out = {"busy": sem.busy_reason(), "search": {}, "recall": {}}
    for query in queries:
        hits = api.semantic_search(query, limit=5, min_score=0.0)
        assert hits["success"], hits
        out["search"][query] = [(h["id"], h["score"]) for h in hits["data"]]
        found = api.recall(query, limit=5, tiers=["tier3"])
        assert found["success"], found
        out["recall"][query] = {"ids": [h["id"] for h in found["data"]["hits"]],
                                "texts": [h["text"] for h in found["data"]["hits"]],
                                "answered": found["meta"]["tiers_answered"]}
    out["documents_embedded"] = len(documents)
    out["engine_imported"] = "qdrant_edge" in sys.modules
    print(json.dumps(out), flush=True)
    if role == "owner":
        sys.stdin.read()
    api.close()
    """
)


# The engine answers at any size: the owner holds it.
ENGINE = {"tier3.engine_min_vectors": 0}


def _start(home: Path, role: str, settings: dict[str, Any] | None = None) -> subprocess.Popen[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    argv = [
        sys.executable, "-c", SCRIPT, str(home), role, json.dumps(TURNS), json.dumps(QUERIES),
        json.dumps(ENGINE if settings is None else settings),
    ]  # fmt: skip
    return subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)


def _answer(proc: subprocess.Popen[str]) -> dict[str, Any]:
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line, f"process exited with {proc.wait(60)} before answering"
    out: dict[str, Any] = json.loads(line)
    return out


def _stop(proc: subprocess.Popen[str]) -> None:
    for stream in (proc.stdin, proc.stdout):
        if stream is not None:
            stream.close()
    assert proc.wait(120) == 0


def test_a_second_process_recalls_what_the_owner_recalls(tmp_path: Path) -> None:
    home = tmp_path / "home"
    owner = _start(home, "owner")
    try:
        mine = _answer(owner)
        assert mine["busy"] is None and mine["documents_embedded"] > 0
        second = _start(home, "second")
        try:
            theirs = _answer(second)
        finally:
            _stop(second)
    finally:
        _stop(owner)

    assert mine["engine_imported"]
    assert theirs["busy"] is not None  # it could not open the engine ...
    assert theirs["documents_embedded"] == 0  # ... and embedded nothing: it read the stored vectors
    _same_answers(mine, theirs)


def test_below_the_threshold_no_process_opens_the_engine_and_both_recall_by_meaning(tmp_path: Path) -> None:
    home = tmp_path / "home"
    owner = _start(home, "owner", {})  # the default threshold: 12 turns are far below it
    try:
        mine = _answer(owner)
        second = _start(home, "second", {})
        try:
            theirs = _answer(second)
        finally:
            _stop(second)
    finally:
        _stop(owner)

    for answer in (mine, theirs):
        assert answer["busy"] is None  # nothing is unavailable ...
        assert not answer["engine_imported"]  # ... and the engine was never imported, let alone opened
    assert not list(home.rglob("qdrant"))  # no engine files, no store lock
    assert mine["documents_embedded"] > 0 and theirs["documents_embedded"] == 0
    _same_answers(mine, theirs)


# The exact index scores int8 rows: a score within this of the engine's float32 one.
INT8_TOLERANCE = 2e-3


def _same_ranking(got: list[list[Any]], want: list[list[Any]]) -> bool:
    """The owner's hits, each score within the int8 tolerance of the owner's, in the owner's order
    except among scores that close (int8 may reorder near ties); at the cut, chunks that tie with the
    last hit may differ (chunks of one text share a vector, and engines cut exact ties as they like)."""
    mine = {hit_id: score for hit_id, score in got}
    owner = {hit_id: score for hit_id, score in want}
    if len(mine) != len(owner):
        return False
    for hits, other in ((mine, owner), (owner, mine)):
        last = min(hits.values(), default=0.0)
        if any(i not in other for i, score in hits.items() if score > last + 2 * INT8_TOLERANCE):
            return False  # a hit clearly above the cut is missing on the other side
    if any(abs(score - owner[i]) > INT8_TOLERANCE for i, score in mine.items() if i in owner):
        return False
    in_my_order = [owner.get(hit_id, score) for hit_id, score in got]
    return all(a >= b - 2 * INT8_TOLERANCE for a, b in itertools.pairwise(in_my_order))


def _same_answers(mine: dict[str, Any], theirs: dict[str, Any]) -> None:
    for query in QUERIES:
        want, got = mine["search"][query], theirs["search"][query]
        assert _same_ranking(got, want), (query, got, want)
        assert theirs["recall"][query]["answered"] == ["tier3"], query
        assert theirs["recall"][query]["ids"] == mine["recall"][query]["ids"], query
    # meaning, not words: no query shares a content word with the turn it finds
    siblings = theirs["recall"]["Who are my siblings?"]["texts"][:2]
    assert any("Ana" in text or "Tom" in text for text in siblings), siblings
    instrument = theirs["recall"]["What instrument am I learning?"]["texts"][:2]
    assert any("cello" in text for text in instrument), instrument
