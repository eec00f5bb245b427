"""Drives the nextlevel provider as Hermes 0.19.0's gateway does, without a network.

The gateway builds one ``AIAgent`` per session key (``gateway/run.py``: ``user_id``, ``user_id_alt``,
``user_name``, ``chat_id``, ``chat_name``, ``chat_type``, ``thread_id``, ``gateway_session_key``), and
``agent/agent_init.py`` initialises the memory provider with those and ``session_id``, ``platform``,
``hermes_home``, ``agent_context="primary"``, ``agent_identity``, ``agent_workspace="hermes"``. Session
keys follow ``gateway/session.py:build_session_key`` (groups per user, threads shared); in a shared
session the gateway prefixes each message with ``[<user name>] ``. Per turn the agent calls
``on_turn_start``, ``prefetch`` (session_id ""), then after the reply ``sync_turn`` (with ``messages``)
and ``queue_prefetch``; session expiry calls ``on_session_end`` then ``shutdown``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_memory.hermes.provider import NextLevelProvider

FAST_YAML = """\
provider:
  prefetch_wait_ms: 5000
memory:
  tier3:
    embedding_model: hashing
    backend: memory
"""


@dataclass(frozen=True)
class Chat:
    """Where a message comes from, as the gateway's SessionSource names it."""

    platform: str
    chat_id: str
    chat_type: str = "dm"
    chat_name: str | None = None
    thread_id: str | None = None


@dataclass(frozen=True)
class Person:
    name: str
    ids: dict[str, str]  # platform -> user_id


def session_key(chat: Chat, user_id: str | None) -> str:
    """``build_session_key`` of Hermes 0.19.0 (default namespace, groups per user, threads shared)."""
    if chat.chat_type == "dm":
        tail = f":{chat.thread_id}" if chat.thread_id else ""
        return f"agent:main:{chat.platform}:dm:{chat.chat_id}{tail}"
    parts = ["agent:main", chat.platform, chat.chat_type, chat.chat_id]
    if chat.thread_id:
        parts.append(chat.thread_id)
    elif user_id:
        parts.append(user_id)
    return ":".join(parts)


def shared_session(chat: Chat) -> bool:
    """``is_shared_multi_user_session`` with the gateway's defaults."""
    return chat.chat_type != "dm" and chat.thread_id is not None


@dataclass
class Session:
    """One gateway agent's provider and its conversation."""

    provider: NextLevelProvider
    chat: Chat
    session_id: str
    messages: list[dict[str, Any]] = field(default_factory=list)
    turns: int = 0

    def say(self, speaker: Person, text: str, reply: str = "Noted.") -> str:
        """One user turn as the agent runs it; returns the prefetch block the model got."""
        if shared_session(self.chat):
            text = f"[{speaker.name}] {text}"
        self.turns += 1
        self.provider.on_turn_start(self.turns, text)
        block = self.provider.prefetch(text, session_id="")
        self.messages += [{"role": "user", "content": text}, {"role": "assistant", "content": reply}]
        self.provider.sync_turn(text, reply, session_id=self.session_id, messages=list(self.messages))
        self.provider.queue_prefetch(text, session_id=self.session_id)
        return block

    def end(self) -> None:
        self.provider.on_session_end(list(self.messages))
        self.provider.shutdown()


def open_session(home: Path, person: Person | None, chat: Chat, session_id: str) -> Session:
    """A provider initialised exactly as ``agent_init`` initialises it for this gateway source."""
    provider = NextLevelProvider()
    assert provider.is_available()
    provider.get_tool_schemas()
    user_id = person.ids.get(chat.platform) if person is not None else None
    kwargs: dict[str, Any] = {
        "platform": chat.platform,
        "hermes_home": str(home),
        "agent_context": "primary",
        "chat_id": chat.chat_id,
        "chat_type": chat.chat_type,
        "gateway_session_key": session_key(chat, user_id),
        "agent_identity": "default",
        "agent_workspace": "hermes",
    }
    if user_id:
        kwargs["user_id"] = user_id
    if person is not None:
        kwargs["user_name"] = person.name
    if chat.chat_name:
        kwargs["chat_name"] = chat.chat_name
    if chat.thread_id:
        kwargs["thread_id"] = chat.thread_id
    provider.initialize(session_id, **kwargs)
    provider.get_tool_schemas()
    return Session(provider, chat, session_id)


def write_home(root: Path, extra_yaml: str = "") -> Path:
    """A Hermes home with the fast provider settings (plus ``extra_yaml`` under ``memory:``)."""
    home = root / "hermes"
    home.mkdir(parents=True, exist_ok=True)
    text = FAST_YAML + "".join(f"  {line}\n" for line in extra_yaml.splitlines())
    (home / "nextlevel.yaml").write_text(text, encoding="utf-8")
    return home
