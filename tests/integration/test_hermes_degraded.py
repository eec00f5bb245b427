"""A second process on one Hermes home (a gateway and a CLI): the first holds the embedded vector store
(one process per store); the second still answers nextlevel_search and prefetch from keywords, and both
say, in words the model reads, that meaning search could not answer and why (which process holds it).

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
"""

HOLDER = textwrap.dedent(
    """
    import json, sys
    from hermes_memory.hermes.provider import NextLevelProvider
    p = NextLevelProvider()  # a long-lived agent (a gateway) on the same home
    p.initialize("gateway", hermes_home=sys.argv[1], platform="telegram", agent_identity="default")
    found = json.loads(p.handle_tool_call("nextlevel_search", {"query": "anything"}))
    assert "meaning search (vectors)" in found["tiers_answered"], found  # it took the vector store
    print("holding", flush=True)
    sys.stdin.read()  # until the test closes our stdin
    p.shutdown()
    """
)


def test_a_second_process_answers_from_keywords_and_says_who_holds_the_vectors(tmp_path: Path) -> None:
    home = tmp_path / "hermes"
    home.mkdir()
    (home / "nextlevel.yaml").write_text(SETTINGS, encoding="utf-8")
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(home)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)  # fmt: skip
    provider = NextLevelProvider()
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "holding"
        provider.initialize("cli", hermes_home=str(home), platform="cli", agent_identity="default")
        provider.sync_turn("My sister Lena lives in Porto.", "Lovely city.", session_id="earlier")
        shared = registry.find(str(home), "default")
        assert shared is not None
        assert shared.api.flush(timeout=10)["data"]["pending"]["turns"] == 0

        found = json.loads(provider.handle_tool_call("nextlevel_search", {"query": "Where does Lena live?"}))
        assert found["count"] > 0 and any("Porto" in r["text"] for r in found["results"])  # not empty
        assert found["tiers_answered"][:2] == ["notes", "facts and past turns (keywords)"]
        why = found["tiers_unavailable"]["meaning search (vectors)"]
        assert why.startswith(f"another process (pid {holder.pid}) owns the vector store"), why
        assert found["note"] == (
            f"Could not answer: meaning search (vectors) — {why}; only keyword matches are shown."
        )

        assert shared.embedder_warm.wait(30)  # the warm-up found the store taken (no model to load)
        block = provider.prefetch("Where does Lena live?").splitlines()
        assert any(
            "Porto" in line and re.match(r"- \[\d{4}-\d{2}-\d{2} \d{2}:\d{2}\]", line) for line in block
        )
        assert block[-2] == "Tiers answered: notes, facts and past turns (keywords)."
        assert block[-1].startswith(
            f"Could not answer: meaning search (vectors) — another process (pid {holder.pid})"
        )
        assert block[-1].endswith("only keyword matches are shown.")
    finally:
        provider.shutdown()
        if holder.stdin is not None:
            holder.stdin.close()
        assert holder.wait(30) == 0
        if holder.stdout is not None:
            holder.stdout.close()
