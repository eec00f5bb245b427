"""When the prefetch wait runs out (a busy machine), the block says so instead of vanishing.

Under load one "Where do I work now?" got no <memory-context> at all and no "Could not answer" line, so
the model could not tell "nothing remembered" from "not looked up in time".
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from hermes_settings import FAST_PROVIDER_YAML, api_of


def test_a_recall_that_misses_the_wait_gives_a_block_that_says_why(home: Path, make: Any) -> None:
    (home / "nextlevel.yaml").write_text(FAST_PROVIDER_YAML.replace("5000", "30"))
    provider = make("s1")
    provider.sync_turn("I work at Siemens as an engineer.", "Noted.", session_id="s1")
    api = api_of(home)
    assert api.flush(60)["success"]
    release = threading.Event()
    recall = api.core.recall
    real_query = recall.query

    def busy(*args: Any, **kwargs: Any) -> Any:  # the machine is busy: the recall takes long
        release.wait(30)
        return real_query(*args, **kwargs)

    recall.query = busy  # type: ignore[method-assign]
    try:
        block = provider.prefetch("Where do I work now?")
    finally:
        release.set()
    assert block, "no block at all: the model cannot tell 'nothing remembered' from 'too late'"
    assert "Could not answer in time" in block and "30 ms" in block, block
    assert "nextlevel_search" in block  # what the model can do instead
