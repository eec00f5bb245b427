"""Forget goes by what a turn says, never by who said it; a large forget needs an extra confirmation;
related names are names.

`forget --entity Hermes` previewed every episode (every assistant turn "mentions" the assistant: its
speaker) and erased the whole history on --yes; `forget --entity Rex` offered "the" (from the alias
"the user's dog") as a related name, which then took every row with it.
"""

from __future__ import annotations

from collections.abc import Callable

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.ops.forget import LARGE_TURNS
from hermes_memory.ops.mentions import candidates

TALK = [
    ("I work at Siemens as a software engineer.", "Noted."),
    ("My sister Sofia lives in Porto.", "Thanks for telling me."),
    ("My dog Rex is a beagle.", "Rex sounds lovely."),
    ("I had pasta for lunch.", "Sounds tasty."),
]


def _talk(api: MemoryAPI, turns: list[tuple[str, str]]) -> None:
    for user, reply in turns:
        assert api.remember_turn(user, reply, "s1", user_name="Maya", assistant_name="Hermes")["success"]
    assert api.flush(60)["success"]


def _episodes(api: MemoryAPI) -> int:
    return int(api.stats()["data"]["tier2"]["episodes"])


def test_forgetting_the_assistant_or_the_user_by_name_deletes_no_turn_they_only_spoke(
    open_api: Callable[..., MemoryAPI],
) -> None:
    api = open_api()
    _talk(api, TALK)
    before = _episodes(api)
    for name in ("Hermes", "Maya"):  # Maya's facts ("Maya works at Siemens") name her; her turns do not
        preview = api.forget_entity(name)
        episodes = preview["data"]["counts"]["tier2"]["episodes"] if preview["success"] else 0
        assert episodes == 0, (name, preview)
    hermes = api.forget_entity("Hermes")
    assert not hermes["success"] and "nothing in memory matches" in hermes["error"], hermes
    done = api.forget_entity("Hermes", confirm=True, confirm_large=True)
    assert not done["success"] or done["data"]["counts"]["tier2"]["episodes"] == 0, done
    assert _episodes(api) == before


def test_a_large_forget_says_so_and_needs_an_extra_confirmation(open_api: Callable[..., MemoryAPI]) -> None:
    api = open_api()
    lisbon = [(f"I walked around Lisbon on day {i}.", "Nice walk.") for i in range(LARGE_TURNS + 2)]
    _talk(api, [*TALK, *lisbon])
    before = _episodes(api)
    preview = api.forget_entity("Lisbon")
    assert preview["success"], preview
    assert preview["data"]["counts"]["tier2"]["episodes"] == LARGE_TURNS + 2
    assert "needs an extra confirmation" in preview["data"]["warning"]
    refused = api.forget_entity("Lisbon", confirm=True)
    assert not refused["success"] and "confirm_large" in refused["error"], refused
    assert _episodes(api) == before  # nothing was deleted
    done = api.forget_entity("Lisbon", confirm=True, confirm_large=True)
    assert done["success"] and done["data"]["confirmed"], done
    assert _episodes(api) == before - (LARGE_TURNS + 2)
    # a small forget needs no more than confirm
    small = api.forget_entity("Sofia")
    assert small["success"] and "warning" not in small["data"], small


def test_related_names_are_names_not_words_of_a_placeholder(open_api: Callable[..., MemoryAPI]) -> None:
    offered = {c["name"] for c in candidates(["Rex", "the user's dog"], [])}
    assert offered == set(), offered
    assert {c["name"] for c in candidates(["Zanzibar Quill"], [])} == {"Zanzibar", "Mr. Quill"}
    api = open_api()
    _talk(api, TALK)
    preview = api.forget_entity("Rex", include_related=True)
    assert preview["success"], preview
    related = {r["name"].casefold() for r in preview["data"].get("related", [])}
    assert "the" not in related, related
    # Sofia's turn and the user's other turns are not taken with Rex
    assert preview["data"]["counts"]["tier2"]["episodes"] <= 2, preview["data"]["counts"]
