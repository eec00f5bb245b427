"""Recall with the real MiniLM embedder (offline): a paraphrased fact stated 50 turns earlier comes back."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hermes_memory import MemoryAPI

pytestmark = pytest.mark.slow

CHATTER = [
    "The weather has been grey all week.", "I watched a documentary about volcanoes.",
    "Traffic on the bridge was terrible this morning.", "We tried the new bakery on Main Street.",
    "My laptop needed another software update.", "The football match went to extra time.",
    "I reorganised the bookshelf in the living room.", "Work was busy with quarterly reports.",
    "I finally fixed the squeaky door.", "We are thinking about repainting the kitchen.",
]  # fmt: skip


def test_paraphrased_fact_from_fifty_turns_ago_is_recalled(tmp_path: Path) -> None:
    os.environ["HF_HUB_OFFLINE"] = "1"
    with MemoryAPI(hermes_home=tmp_path, **{"tier3.backend": "memory"}) as api:
        t0 = 1_683_540_000.0
        api.remember_turn(
            "I adopted a little beagle from the shelter on Saturday.",
            "That's wonderful news!",
            "s1",
            t0,
            user_name="Caroline",
            assistant_name="Bot",
        )
        for i in range(50):
            api.remember_turn(
                CHATTER[i % len(CHATTER)] + f" ({i})",
                "I see.",
                "s1",
                t0 + 60 * (i + 1),
                user_name="Caroline",
                assistant_name="Bot",
            )
        assert api.flush(600)["data"]["drained"]
        hits = api.recall("Does Caroline have a new dog?", limit=5)["data"]["hits"]
        top_texts = [h["text"] for h in hits[:3]]
        assert any("beagle" in t for t in top_texts), top_texts


def test_a_chunk_an_event_and_an_entity_come_back_with_the_real_embedder(tmp_path: Path) -> None:
    """Issue 16's probe with MiniLM: each store answers "Orion billing", in recall and the tool."""
    import json

    from hermes_memory.hermes.tools import ToolContext, call_tool

    os.environ["HF_HUB_OFFLINE"] = "1"
    with MemoryAPI(hermes_home=tmp_path, **{"tier3.backend": "memory"}) as api:
        t0 = 1_683_540_000.0
        for i in range(20):  # turns that name neither Orion nor billing
            api.remember_message(CHATTER[i % len(CHATTER)] + f" ({i})", "s1", t0 + 60 * i, speaker="Caroline")
        assert api.flush(600)["data"]["drained"]
        text = "Orion sends its invoices on the first of each month."
        assert api.semantic_index(text, source_type="document")["success"]
        assert api.entity_ensure("Orion", "project", description="the billing rewrite")["success"]
        assert api.timeline_add("milestone", "Orion went live for all customers", related_entities=["Orion"])[
            "success"
        ]
        env = api.recall("Orion billing", limit=5)
        assert env["success"], env["error"]
        kinds = {h["kind"] for h in env["data"]["hits"]}
        assert {"chunk", "event", "entity"} <= kinds, env["data"]["hits"]
        assert all(h["source"] for h in env["data"]["hits"])
        ctx = ToolContext(api=api, session_id="s2", writable=True, after_write=lambda: None)
        out = json.loads(call_tool(ctx, "nextlevel_search", {"query": "Orion billing", "limit": 5}))
        assert {"chunk", "event", "entity"} <= {r["kind"] for r in out["results"]}, out
        seed = api.recall("Orion billing", tiers=None, limit_per_tier=5)
        assert seed["success"] and seed["data"]["hits"], seed["error"]
