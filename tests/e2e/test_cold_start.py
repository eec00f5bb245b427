"""A cold `hermes -z` process recalls by meaning in its first prefetch, and never imports torch.

One process is told "My sister is called Ana and she lives in Lisbon." and exits (its turn and the
turn's embeddings stay queued: nothing waits at exit). A fresh process is asked "Who are my
siblings?": the <memory-context> of its first (and only) model request must hold the Ana memory.
"siblings" shares no word with the memory, and a control recall over the keyword tiers alone finds
nothing about Ana, so only a vector hit can put it there: the fresh process loaded the embedder,
embedded what the last process left queued and searched the vectors within the prefetch wait.
Without the change that made this pass, the first prefetch said "meaning search still loading" with
any prefetch wait (recall left the vectors out until a warm-up recall had finished), so the harness's
generous wait (an upper bound, for a shared machine) does not weaken the test; it also passes with
the default 150 ms. Both processes run with an import watch (tests/e2e/import_watch.py): the
provider's default embedder loads onnxruntime, and torch, sentence-transformers and transformers are
never imported.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import import_watch
import pytest
from harness import Home, Turn, require_hermes

require_hermes()

pytestmark = pytest.mark.slow

STATEMENT = "My sister is called Ana and she lives in Lisbon."
QUESTION = "Who are my siblings?"
TORCH_PACKAGES = {"torch", "sentence_transformers", "transformers"}


@pytest.fixture(scope="module")
def cold(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    home = Home(tmp_path_factory.mktemp("cold"))  # the harness's prefetch wait: an upper bound, see there
    home.script(default={"status": True})
    logs = [home.path / "imports-1.log", home.path / "imports-2.log"]
    try:
        told = home.hermes(STATEMENT, env={"E2E_IMPORT_LOG": str(logs[0])})
        asked = home.hermes(QUESTION, env={"E2E_IMPORT_LOG": str(logs[1])})
        with home.store() as api:
            keywords = api.recall(QUESTION, tiers=["tier1", "tier2"], limit=20)
            vectors = api.recall(QUESTION, tiers=["tier3"], limit=20)
        yield {
            "told": told,
            "asked": asked,
            "imports": [import_watch.read_log(log) for log in logs],
            "keywords": keywords,
            "vectors": vectors,
        }
    finally:
        home.stop()


def test_the_first_prefetch_of_a_fresh_process_recalls_the_sister_by_meaning(cold: dict[str, Any]) -> None:
    asked: Turn = cold["asked"]
    ana = [line for line in asked.lines if "Ana" in line]
    assert ana, f"no Ana memory in the first prefetch of a cold process:\n{asked.block}"
    assert "Lisbon" in ana[0]
    assert "still loading" not in (asked.block or "")


def test_keywords_alone_do_not_find_the_sister(cold: dict[str, Any]) -> None:
    # the control: the line above can only have come from the vectors
    keywords, vectors = cold["keywords"], cold["vectors"]
    assert keywords["success"] and vectors["success"], (keywords, vectors)
    assert not [h for h in keywords["data"]["hits"] if "Ana" in h["text"]], keywords["data"]["hits"]
    assert [h for h in vectors["data"]["hits"] if "Ana" in h["text"]], vectors["data"]["hits"]


def test_no_process_imports_torch_on_the_default_path(cold: dict[str, Any]) -> None:
    told, asked = cold["imports"]
    assert "onnxruntime" in asked and "tokenizers" in asked  # the provider's embedder ran here
    assert told & TORCH_PACKAGES == set(), told
    assert asked & TORCH_PACKAGES == set(), asked
