"""A name the memory has been told about is a holder in lower case too: chat writes "kofi quit the
band" of the Kofi it was told plays in one. Sentences written for this test."""

from __future__ import annotations

import time
from pathlib import Path

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.updates.statement import read

DAY = 86400.0


def test_a_lower_case_name_the_memory_was_told_of_is_its_holder() -> None:
    said = "kofi's gigging with a soul band these days"
    assert read(said, holders=frozenset()).holder is None  # a remark about nobody known
    assert read(said, holders=frozenset(), subjects={"kofi"}).holder == "kofi"
    # a verb or a word of the grammar is never asked, whatever the store holds
    assert read("got the keys to the flat", holders=frozenset(), subjects={"got"}).holder != "got"
    assert read("the band split up", holders=frozenset(), subjects={"the"}).holder is None
    # after a determiner the word is a common noun, whatever the store was told of "Dance"
    assert read("the dance studio is closing", holders=frozenset(), subjects={"dance"}).holder is None


def test_the_store_knows_whom_it_holds_facts_about_in_its_own_scope(tmp_path: Path) -> None:
    with MemoryAPI(hermes_home=tmp_path, scope="alice", **{"tier3.backend": "memory"}) as alice:
        alice.remember_turn("Kofi plays keyboard in a wedding band.", "Fun!", "s1", time.time())
        assert alice.flush()["success"]
        assert alice.tier2.facts.speaks_of("kofi") and alice.tier2.facts.speaks_of("KOFI")
        assert not alice.tier2.facts.speaks_of("ama")
    with MemoryAPI(hermes_home=tmp_path, scope="bob", **{"tier3.backend": "memory"}) as bob:
        assert not bob.tier2.facts.speaks_of("kofi")  # what Alice told is no name Bob's memory knows


def test_a_lower_case_name_updates_what_was_said_of_it(tmp_path: Path) -> None:
    start = time.time() - 10 * DAY
    with MemoryAPI(hermes_home=tmp_path, **{"tier3.backend": "memory"}) as api:
        api.remember_turn("Kofi plays keyboard in a wedding band.", "Fun!", "s1", start)
        api.remember_turn("kofi quit the wedding band, he's a session player now", "Oh!", "s1", start + DAY)
        assert api.flush()["success"]
        closed = [f.content for f in api.tier2.facts.superseded(limit=10)]
        assert closed == ["Kofi plays keyboard in a wedding band"], closed
