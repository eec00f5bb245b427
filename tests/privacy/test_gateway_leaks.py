"""Whose memory is it: one Hermes gateway home serving four people on two platforms, in direct chats,
two group chats and a thread, on default settings. Every secret said in one scope (a person's direct
chats, a group with its threads) is probed from every other session through prefetch, every read of
the three tools, the system-prompt block (prompt context and core memory): it must appear in none of
them, and its owner must still get it back. Everyone also names the same company and colleague, and
every maintenance job runs over the store before the probes (jobs never merge two people's entities);
Hermes' built-in memory writes are mirrored into the writer's scope only. A turn said in a group keeps
its speaker.

The provider is driven as the gateway drives it (``gateway_driver``); hashing embedder and in-process
vectors keep the suite fast.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from gateway_driver import Chat, Person, Session, open_session, write_home

from hermes_memory.hermes import registry
from hermes_memory.llm.core_memory import CoreMemory, CoreMemoryStore

PEOPLE = [
    Person("Alice", {"telegram": "111", "discord": "9001"}),
    Person("Bob", {"telegram": "222", "discord": "9002"}),
    Person("Carol", {"telegram": "333", "discord": "9003"}),
    Person("Dave", {"telegram": "444", "discord": "9004"}),
]
BY_NAME = {p.name: p for p in PEOPLE}
GROUP_TG = Chat("telegram", "-100", "group", "Book club")
GROUP_DC = Chat("discord", "555", "group", "Climbing")
THREAD_TG = Chat("telegram", "-100", "group", "Book club", thread_id="7")
GROUP_MEMBERS = {GROUP_TG: ("Alice", "Bob", "Carol"), GROUP_DC: ("Bob", "Dave")}

_SYL = ["bra", "zel", "kov", "mir", "tus", "quen", "dol", "fax", "rin", "wex", "pol", "gur"]


def token(i: int) -> str:
    """A made-up word no other secret contains."""
    return f"Zy{_SYL[i // 12]}{_SYL[i % 12]}ix"


def dm(person: Person, platform: str) -> Chat:
    return Chat(platform, person.ids[platform], "dm")


def owner_of(chat: Chat, person: Person) -> str:
    """The scope a line said there belongs to (threads belong to their group)."""
    if chat.chat_type == "dm":
        return f"user:{chat.platform}:{person.ids[chat.platform]}"
    return f"group:{chat.platform}:{chat.chat_id}"


QUESTIONS = (
    "What is my locker code word?",
    "Which doctor am I secretly seeing next week?",
    "Where do I live? Where does everyone live and work?",
    "What project do I work on with Quentin Hart at Globex? Which codeword do I prefer?",
)
TOOL_READS: tuple[tuple[str, dict[str, object]], ...] = (
    ("nextlevel_search", {"query": "locker code word doctor secretly"}),
    ("nextlevel_search", {"query": "where does everyone live"}),
    ("nextlevel_memory", {"action": "recall", "query": "locker code word doctor live"}),
    ("nextlevel_memory", {"action": "fact_query", "query": "locker doctor live", "min_confidence": 0}),
    ("nextlevel_memory", {"action": "semantic_search", "query": "locker code word doctor"}),
    ("nextlevel_memory", {"action": "timeline_query"}),
    ("nextlevel_memory", {"action": "graph_central"}),
    ("nextlevel_memory", {"action": "entity_query", "name": "Quentin Hart"}),
    ("nextlevel_memory", {"action": "graph_traverse", "entity": "Globex"}),
    ("nextlevel_memory", {"action": "timeline_query", "entity": "Globex"}),
    ("nextlevel_memory", {"action": "stats"}),
    ("nextlevel_memory", {"action": "core"}),
)


SAID: dict[tuple[str, str, str], str] = {}  # (chat_id, thread_id or "", speaker) -> the place they named


@dataclass
class World:
    home: Path
    secrets: dict[str, str]  # token -> owning scope
    observers: list[tuple[str, Callable[[], Session]]]  # (scope, opens a new session there)


def _seed(home: Path) -> dict[str, str]:
    secrets: dict[str, str] = {}
    n = 0
    sessions: list[Session] = []
    for person in PEOPLE:
        for platform in ("telegram", "discord"):
            chat = dm(person, platform)
            s = open_session(home, person, chat, f"seed-{person.name}-{platform}")
            a, b, c = token(n), token(n + 1), token(n + 2)
            n += 3
            s.say(person, f"My locker code word is {a}.")
            s.say(person, f"I'm secretly seeing a doctor named Dr. {b} next week, don't tell anyone.")
            s.say(person, f"Remember that my bank PIN hint is my first dog's name, {c}.")
            # The same names in everyone's words: a job that merged people's entities would leak here.
            e, f = token(n), token(n + 1)
            n += 2
            s.say(person, f"I work at Globex with Quentin Hart on project {e}.")
            # A built-in MEMORY.md/USER.md write Hermes mirrors to the provider.
            s.provider.on_memory_write(
                "add", "user", f"Prefers the codeword {f}.", {"session_id": s.session_id}
            )
            scope = owner_of(chat, person)
            secrets.update({a: scope, b: scope, c: scope, e: scope, f: scope})
            # Core memory of this person's scope (what an LLM core update would have written).
            shared = s.provider._store()
            assert shared is not None
            d = token(n)
            n += 1
            CoreMemoryStore(shared.api.core.llm.core_path).save(
                CoreMemory(sections={"USER": (f"Codename {d}",)})
            )
            secrets[d] = scope
            sessions.append(s)
    for group, members in GROUP_MEMBERS.items():
        for name in members:
            person = BY_NAME[name]
            s = open_session(home, person, group, f"seed-{group.chat_id}-{name}")
            t = token(n)
            n += 1
            s.say(person, f"I live in {t}.")
            secrets[t] = owner_of(group, person)
            SAID[(group.chat_id, "", name)] = t
            sessions.append(s)
    thread = open_session(home, BY_NAME["Alice"], THREAD_TG, "seed-thread")
    for name in ("Alice", "Bob", "Carol"):
        t = token(n)
        n += 1
        thread.say(BY_NAME[name], f"I work at {t}.")
        secrets[t] = owner_of(THREAD_TG, BY_NAME[name])
        SAID[(THREAD_TG.chat_id, "7", name)] = t
    sessions.append(thread)
    for shared in registry._stores.values():
        assert shared.api.flush(timeout=60)["data"]["drained"]
    # Every maintenance job (consolidate, prune, embeddings, graph) over the whole store.
    jobs = next(iter(registry._stores.values())).api.maintain()
    assert jobs["success"], jobs
    for s in sessions:
        s.end()
    assert registry.open_stores() == {}
    return secrets


def _observers(home: Path) -> list[tuple[str, Callable[[], Session]]]:
    out: list[tuple[str, Callable[[], Session]]] = []
    for person in PEOPLE:
        for platform in ("telegram", "discord"):
            chat = dm(person, platform)
            out.append(
                (owner_of(chat, person), lambda p=person, c=chat: open_session(home, p, c, f"obs-{c}"))
            )
    for group, members in GROUP_MEMBERS.items():
        for name in members:
            person = BY_NAME[name]
            out.append(
                (
                    owner_of(group, person),
                    lambda p=person, g=group: open_session(home, p, g, f"obs-{g.chat_id}-{p.name}"),
                )
            )
    out.append(
        (owner_of(THREAD_TG, PEOPLE[0]), lambda: open_session(home, PEOPLE[1], THREAD_TG, "obs-thread"))
    )
    return out


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    home = write_home(tmp_path_factory.mktemp("gateway"))
    secrets = _seed(home)
    yield World(home, secrets, _observers(home))
    assert registry.open_stores() == {}


def _outputs(s: Session) -> list[tuple[str, str]]:
    """(path, text) of everything one session's model can be given."""
    out = [("system_prompt_block", s.provider.system_prompt_block())]
    for question in QUESTIONS:
        out.append(("prefetch", s.say(BY_NAME["Dave"] if s.chat.thread_id else PEOPLE[0], question)))
    for tool, args in TOOL_READS:
        out.append((f"{tool}:{args.get('action', 'query')}", s.provider.handle_tool_call(tool, dict(args))))
    return out


def test_no_secret_reaches_another_scope_and_owners_get_theirs_back(world: World) -> None:
    probes = leaks = 0
    found: list[str] = []
    seen_own: dict[str, set[str]] = {}
    for scope, opener in world.observers:
        s = opener()
        try:
            outputs = _outputs(s)
        finally:
            s.provider.shutdown()
        for path, text in outputs:
            lowered = text.casefold()
            for secret, owner in world.secrets.items():
                hit = secret.casefold() in lowered
                if owner == scope:
                    if hit:
                        seen_own.setdefault(scope, set()).add(secret)
                    continue
                probes += 1
                if hit:
                    leaks += 1
                    found.append(f"{secret} of {owner} in {scope} via {path}")
    print(
        f"\nleak suite: {len(PEOPLE)} people x 2 platforms, {len(world.observers)} observer sessions, "
        f"{probes} cross-scope probes, {leaks} leaks"
    )
    assert probes >= 300
    assert found == []
    # The same paths do recall each scope's own secrets (so the probes could have found a leak).
    for scope in {scope for scope, _ in world.observers}:
        own = {s for s, o in world.secrets.items() if o == scope}
        assert seen_own.get(scope, set()) & own, f"{scope} recalled none of its own secrets"


def test_alice_secret_never_reaches_bob(world: World) -> None:
    """The reported case: Alice's direct chat, then Bob's, on one gateway home with default settings."""
    home = write_home(world.home.parent / "alice-bob")
    chat_a = Chat("telegram", "111", "dm")
    alice = open_session(home, Person("Alice", {"telegram": "alice"}), chat_a, "sa")
    alice.say(PEOPLE[0], "My bank PIN hint is my first dog's name, Rexford.")
    alice.say(PEOPLE[0], "I'm secretly interviewing at Globex next week, don't tell anyone.")
    for shared in registry._stores.values():
        assert shared.api.flush(timeout=60)["data"]["drained"]
    bob = open_session(home, Person("Bob", {"telegram": "bob"}), Chat("telegram", "222", "dm"), "sb")
    try:
        block = bob.say(PEOPLE[1], "What is my bank PIN hint? Am I interviewing anywhere?")
        found = bob.provider.handle_tool_call(
            "nextlevel_search", {"query": "bank PIN hint interviewing Globex"}
        )
    finally:
        bob.end()
    assert "Rexford" not in block and "Globex" not in block, block
    assert "Rexford" not in found and "Globex" not in found, found
    alice2 = open_session(home, Person("Alice", {"telegram": "alice"}), chat_a, "sa2")
    try:
        mine = alice2.say(PEOPLE[0], "What is my bank PIN hint? Am I interviewing anywhere?")
    finally:
        alice2.end()
        alice.end()
    assert "Rexford" in mine and "Globex" in mine, mine


@pytest.mark.parametrize(("thread", "name"), [("", "Carol"), ("", "Bob"), ("7", "Bob"), ("7", "Carol")])
def test_a_group_line_keeps_its_speaker(world: World, thread: str, name: str) -> None:
    """'I live in X' said by a member in the group ('I work at X' in its shared thread, where the gateway
    prefixes the member's name) is stored as that member's line and fact, never as 'the user's."""
    city = SAID[("-100", thread, name)]
    s = open_session(world.home, BY_NAME["Dave"], GROUP_TG, f"obs-speaker-{thread}-{name}")
    try:
        found = json.loads(
            s.provider.handle_tool_call("nextlevel_search", {"query": f"who lives or works in {city}"})
        )
        facts = json.loads(
            s.provider.handle_tool_call(
                "nextlevel_memory", {"action": "fact_query", "query": city, "min_confidence": 0}
            )
        )
    finally:
        s.provider.shutdown()
    lines = [r for r in found["results"] if city in r["text"] and r["kind"] == "episode"]
    assert lines and {r.get("speaker") for r in lines} == {name}, found
    assert all(not r["text"].startswith("[") for r in lines), lines  # the gateway's prefix is not kept
    stated = [f["content"] if isinstance(f, dict) and "content" in f else str(f) for f in facts["result"]]
    about = [text for text in stated if city in text]
    assert about and all(name in text and "the user" not in text.casefold() for text in about), facts
