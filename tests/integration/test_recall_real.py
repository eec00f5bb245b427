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
