"""A Hermes process exits while its ingestion worker is in the middle of a turn's transaction: the exit
does not wait for it, and nothing is lost — the next process writes every turn, each once.

The child process (the real provider, embedded vector engine, hashing embedder) makes the knowledge
writer stop for good inside the transaction of the first turn, then ends its session and shuts down
as `hermes -z` does; the interpreter exits with the transaction open.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.hermes.settings import load_settings

SETTINGS = """\
memory:
  tier3:
    embedding_model: hashing
"""

CHILD = textwrap.dedent(
    """
    import sys, threading
    from hermes_memory.hermes.provider import NextLevelProvider
    from hermes_memory.ingest import knowledge
    from hermes_memory.ingest.worker import Ingestor

    LAST = "My neighbour Tomasz waters the plants in August."
    ended, inside, first = threading.Event(), threading.Event(), threading.Event()
    stage, write, follow = Ingestor._stage, knowledge.RuleBasedKnowledge.write, Ingestor._follow

    def gated(self, item):
        if item.payload.messages[0].text == LAST:
            ended.wait(30)  # session end writes its event first (it needs the store between turns)
        return stage(self, item)

    def stuck(self, tier2, episodes, prepared, changes):
        write(self, tier2, episodes, prepared, changes)  # the turn's episodes and knowledge, not committed
        if episodes[0].text == LAST:
            inside.set()
            threading.Event().wait()  # never returns: the transaction is open when the process ends

    def followed(self, item, changes):
        follow(self, item, changes)
        first.set()  # the first turn is committed (the last one never gets here)

    Ingestor._stage, knowledge.RuleBasedKnowledge.write, Ingestor._follow = gated, stuck, followed
    messages = [
        {"role": "user", "content": "I keep the spare key under the blue flowerpot."},
        {"role": "assistant", "content": "Got it."},
        {"role": "user", "content": LAST},
        {"role": "assistant", "content": "Noted."},
    ]
    p = NextLevelProvider()
    p.initialize("one-shot", hermes_home=sys.argv[1], platform="cli", agent_identity="default")
    p.sync_turn(messages[0]["content"], messages[1]["content"], session_id="one-shot", messages=messages[:2])
    assert first.wait(30), "the worker never wrote the first turn"  # its own batch, committed
    p.on_session_end(messages)  # the second turn: one durable insert, then the session's event
    ended.set()
    assert inside.wait(30), "the worker never got inside the last turn"
    p.shutdown()
    print("exiting", flush=True)
    """
)


def test_an_exit_in_the_middle_of_a_turn_loses_nothing(tmp_path: Path) -> None:
    home = tmp_path / "hermes"
    home.mkdir()
    (home / "nextlevel.yaml").write_text(SETTINGS, encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", CHILD, str(home)], capture_output=True, text=True,
                          timeout=120, check=False)  # fmt: skip
    assert done.returncode == 0 and done.stdout.strip() == "exiting", done.stderr[-3000:]

    with MemoryAPI(load_settings(home).memory_config(str(home), "default")) as api:
        # The open transaction rolled back: the last turn is still queued, and with it the first turn's
        # copy that session end re-sent when both went into the same batch (dropped: already written).
        assert api.pending()["data"]["turns"] in (1, 2)
        assert len(api.get_latest(count=10)["data"]) == 2  # the first turn was written before
        assert api.ingest_pending(timeout=60)["data"]["pending"]["turns"] == 0
        texts = [e["text"] for e in api.get_latest(count=10)["data"]]
        assert texts == [
            "I keep the spare key under the blue flowerpot.",
            "Got it.",
            "My neighbour Tomasz waters the plants in August.",
            "Noted.",
        ]
        facts = [f["content"] for f in api.fact_query("Tomasz", min_confidence=0)["data"]]
        assert facts.count("The user has a neighbour named Tomasz") == 1, facts  # extracted once
        sessions = api.timeline_query(event_type="session")["data"]
        assert [e["session_id"] for e in sessions] == ["one-shot"]
