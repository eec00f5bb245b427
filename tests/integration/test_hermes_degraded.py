"""A second process on one Hermes home (a gateway and a CLI): the first holds the embedded vector store
(one process per store); the second still recalls by meaning, from the vectors stored in Tier 2 (exact
search), and says nothing is missing. ``status`` still names the holder.

The hashing embedder keeps the processes light; the vector engine is the default embedded one.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

from hermes_memory.hermes import registry
from hermes_memory.hermes.provider import NextLevelProvider

SETTINGS = """\
provider:
  prefetch_wait_ms: 5000
memory:
  tier3:
    embedding_model: hashing
    engine_min_vectors: 0   # the engine answers at any size: one process holds it
"""

HOLDER = textwrap.dedent(
    """
    import json, sys
    from hermes_memory.hermes.provider import NextLevelProvider
    from hermes_memory.hermes import registry
    p = NextLevelProvider()  # a long-lived agent (a gateway) on the same home
    p.initialize("gateway", hermes_home=sys.argv[1], platform="telegram", agent_identity="default")
    p.sync_turn("My sister Lena lives in Porto.", "Lovely city.", session_id="earlier")
    shared = registry.find(sys.argv[1], "default")
    assert shared.api.flush(timeout=60)["data"]["drained"]
    found = json.loads(p.handle_tool_call("nextlevel_search", {"query": "Where does Lena live?"}))
    assert "meaning search (vectors)" in found["tiers_answered"], found  # it took the vector store
    print(json.dumps([r["text"] for r in found["results"]]), flush=True)
    sys.stdin.read()  # until the test closes our stdin
    p.shutdown()
    """
)


def test_a_second_process_recalls_by_meaning_from_the_stored_vectors(tmp_path: Path) -> None:
    home = tmp_path / "hermes"
    home.mkdir()
    (home / "nextlevel.yaml").write_text(SETTINGS, encoding="utf-8")
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(home)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)  # fmt: skip
    provider = NextLevelProvider()
    try:
        assert holder.stdout is not None
        owner_texts = json.loads(holder.stdout.readline())
        provider.initialize("cli", hermes_home=str(home), platform="cli", agent_identity="default")
        shared = registry.find(str(home), "default")
        assert shared is not None
        assert shared.api.semantic_search("x")["success"]
        assert shared.api.core.tiers.semantic().busy_reason() is not None  # the gateway holds the engine

        found = json.loads(provider.handle_tool_call("nextlevel_search", {"query": "Where does Lena live?"}))
        assert [r["text"] for r in found["results"]] == owner_texts  # the owner's answer
        assert any("Porto" in text for text in owner_texts)
        assert "meaning search (vectors)" in found["tiers_answered"]
        assert "meaning search (vectors)" not in found.get("tiers_unavailable", {})
        assert "note" not in found

        vectors = shared.api.semantic_search("sister lives in Porto", limit=1)
        assert vectors["success"] and "degraded" not in vectors["meta"]
        assert "Porto" in vectors["data"][0]["text"]

        assert shared.embedder_warm.wait(30)
        block = provider.prefetch("Where does Lena live?").splitlines()
        assert any(
            "Porto" in line and re.match(r"- \[\d{4}-\d{2}-\d{2} \d{2}:\d{2}\]", line) for line in block
        )
        assert "meaning search (vectors)" in block[-1] and block[-1].startswith("Tiers answered:"), block
    finally:
        provider.shutdown()
        if holder.stdin is not None:
            holder.stdin.close()
        assert holder.wait(30) == 0
        if holder.stdout is not None:
            holder.stdout.close()
