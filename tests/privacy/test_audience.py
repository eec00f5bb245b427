"""Whose memory a session is: the scope each gateway identity maps to, what the sharing settings add,
and who said a group line (pure functions, no store)."""

from __future__ import annotations

from typing import Any

import pytest

from hermes_memory.audience import Identity, Sharing, audience_of, view_settings
from hermes_memory.errors import ConfigError
from hermes_memory.hermes.speakers import UNKNOWN_MEMBER, spoken

PEOPLE = {"alice": ["telegram:111", "signal:uuid-a"]}
POOLS = {"home": {"members": ["telegram:111", "telegram:222"], "readers": ["group:telegram:-100"]}}


NOTHING_SHARED = Sharing.of({}, {})


def scope(sharing: Sharing = NOTHING_SHARED, per_user: bool = True, **kwargs: Any) -> str:
    return audience_of(Identity.from_kwargs(kwargs), sharing, per_user).scope


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"platform": "cli"}, ""),  # the local user: the configured scope
        ({}, ""),
        (
            {"platform": "telegram", "user_id": "111", "chat_id": "111", "chat_type": "dm"},
            "user:telegram:111",
        ),
        (
            {"platform": "discord", "user_id": "111", "chat_type": "dm"},
            "user:discord:111",
        ),  # platforms differ
        (
            {"platform": "telegram", "user_id": "111", "chat_id": "-100", "chat_type": "group"},
            "group:telegram:-100",
        ),
        (
            {
                "platform": "telegram",
                "user_id": "9",
                "chat_id": "-100",
                "chat_type": "group",
                "thread_id": "7",
            },
            "group:telegram:-100",
        ),
        ({"platform": "slack", "user_id": "U1", "chat_id": "C1", "chat_type": "channel"}, "group:slack:C1"),
        ({"platform": "telegram", "chat_id": "555", "chat_type": "dm"}, ""),  # nobody named: the local user
        ({"platform": "api_server"}, ""),
        ({"platform": "telegram", "chat_id": "-5", "chat_type": "group"}, "group:telegram:-5"),
    ],
)
def test_each_identity_has_its_scope(kwargs: dict[str, Any], expected: str) -> None:
    assert scope(**kwargs) == expected


def test_per_user_off_is_one_memory_for_everyone() -> None:
    assert scope(per_user=False, platform="telegram", user_id="111", chat_type="dm") == ""


def test_a_linked_person_is_one_scope_by_id_or_alias_and_a_pool_member_under_any_handle() -> None:
    sharing = Sharing.of(PEOPLE, POOLS)
    assert scope(sharing, platform="telegram", user_id="111") == "user:alice"
    assert scope(sharing, platform="signal", user_id="+351", user_id_alt="uuid-a") == "user:alice"
    alice = audience_of(Identity(platform="signal", user_id="x", user_id_alt="uuid-a"), sharing, True)
    assert view_settings(alice, sharing) == ("shared", "pool:home", ())
    group = audience_of(
        Identity(platform="telegram", user_id="3", chat_id="-100", chat_type="group"), sharing, True
    )
    assert view_settings(group, sharing) == ("private", "shared", ("pool:home",))
    carol = audience_of(Identity(platform="telegram", user_id="333"), sharing, True)
    assert view_settings(carol, sharing) == ("private", "shared", ())


def test_a_member_of_two_pools_under_two_names_is_refused() -> None:
    sharing = Sharing.of(PEOPLE, {"a": {"members": ["alice"]}, "b": {"members": ["telegram:111"]}})
    alice = audience_of(Identity(platform="telegram", user_id="111"), sharing, True)
    with pytest.raises(ConfigError, match="member of both"):
        view_settings(alice, sharing)


GROUP = Identity(platform="telegram", user_id="333", user_name="Carol", chat_id="-100", chat_type="group")


@pytest.mark.parametrize(
    ("identity", "text", "expected"),
    [
        (GROUP, "I live in Porto.", ("I live in Porto.", "Carol", "333")),
        (GROUP, "[Bob] I live in Faro.", ("I live in Faro.", "Bob", None)),
        (GROUP, "[Carol] I live in Porto.", ("I live in Porto.", "Carol", "333")),
        (
            GROUP,
            "earlier chat\n\n[New message]\n[Dave] Hi",
            ("earlier chat\n\n[New message]\nHi", "Dave", None),
        ),
        (
            Identity(platform="telegram", chat_id="-1", chat_type="group"),
            "hello",
            ("hello", UNKNOWN_MEMBER, None),
        ),
        (
            Identity(platform="telegram", user_id="1", user_name="Al", chat_type="dm"),
            "[Bob] hi",
            ("[Bob] hi", "Al", "1"),
        ),
    ],
)
def test_a_group_line_names_its_speaker(identity: Identity, text: str, expected: tuple[Any, ...]) -> None:
    said = spoken(text, identity)
    assert (said.text, said.speaker, said.user_id) == expected
