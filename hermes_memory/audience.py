"""Whose memory it is: the scope of a person and of a group chat, and what the operator shares.

A Hermes gateway serves many people from one home. People are the unit of privacy: what a person says
in a direct chat is stored in their own scope (``user:<person>``) and recalled only into their own
sessions; what is said in a group chat belongs to that group (``group:<platform>:<chat_id>``, threads
inside it) and is recalled only there. ``<person>`` is the name the operator linked the identity to
(config ``scope.people``), else ``<platform>:<user_id>``. A session that names nobody (the CLI,
``hermes -z``, no ``user_id`` outside a group) keeps the configured scope (``scope.name``) and its
behaviour.

Sharing is explicit (config ``scope.pools``): a pool names its ``members`` (their facts, entities,
relations and timeline events are written to the pool, which they read) and its ``readers`` (they read
the pool, never write it); a member or reader is a person (a ``scope.people`` name or
``<platform>:<user_id>``) or a group (``group:<platform>:<chat_id>``). Episodes (what was said) are
never shared. ``scope.read_also`` still names scopes every agent of the store may read.

Turns a store recorded before people had scopes and that cannot be attributed go to ``quarantine``, a
scope no gateway session reads (see ``core.people_split``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from hermes_memory.errors import ConfigError, ValidationError
from hermes_memory.scoping import check_scope_name

PERSON_PREFIX = "user:"
GROUP_PREFIX = "group:"
POOL_PREFIX = "pool:"
QUARANTINE_SCOPE = "quarantine"
DM_TYPES = frozenset({"dm", "direct", "private"})

Kind = Literal["local", "person", "group"]


@dataclass(frozen=True)
class Identity:
    """Who and where, as Hermes' ``initialize`` names them (gateway sessions; all None on the CLI)."""

    platform: str = ""
    user_id: str | None = None
    user_id_alt: str | None = None
    user_name: str | None = None
    chat_id: str | None = None
    chat_name: str | None = None
    chat_type: str | None = None
    thread_id: str | None = None

    @classmethod
    def from_kwargs(cls, kwargs: Mapping[str, Any]) -> Identity:
        """The identity in Hermes' ``initialize`` keyword arguments (empty values count as absent)."""

        def text(key: str) -> str | None:
            value = kwargs.get(key)
            return None if value is None or str(value) == "" else str(value)

        return cls(
            platform=text("platform") or "",
            user_id=text("user_id"),
            user_id_alt=text("user_id_alt"),
            user_name=text("user_name"),
            chat_id=text("chat_id"),
            chat_name=text("chat_name"),
            chat_type=text("chat_type"),
            thread_id=text("thread_id"),
        )

    @property
    def in_group(self) -> bool:
        """True in a group, channel or thread (a chat with several people)."""
        return self.chat_type is not None and self.chat_type.lower() not in DM_TYPES

    def handles(self) -> tuple[str, ...]:
        """``<platform>:<id>`` for the user id and its platform alias (what ``scope.people`` links)."""
        return tuple(f"{self.platform}:{uid}" for uid in (self.user_id, self.user_id_alt) if uid)


@dataclass(frozen=True)
class Pool:
    """A shared pool: ``members`` write their facts into it and read it, ``readers`` only read it."""

    name: str
    members: tuple[str, ...]
    readers: tuple[str, ...]

    @property
    def scope(self) -> str:
        return f"{POOL_PREFIX}{self.name}"


@dataclass(frozen=True)
class Sharing:
    """The operator's people links and pools (config ``scope.people`` and ``scope.pools``), checked."""

    people: Mapping[str, tuple[str, ...]]
    pools: tuple[Pool, ...]

    @classmethod
    def of(cls, people: Any, pools: Any) -> Sharing:
        """Check the two config mappings. Raises ConfigError naming the bad key."""
        linked = _people(people)
        owner: dict[str, str] = {}
        for name, handles in linked.items():
            for handle in handles:
                if handle in owner and owner[handle] != name:
                    raise ConfigError(
                        f"config key 'scope.people': {handle!r} is linked to both "
                        f"{owner[handle]!r} and {name!r}"
                    )
                owner[handle] = name
        checked = tuple(_pool(name, spec) for name, spec in _mapping("scope.pools", pools).items())
        writes: dict[str, str] = {}
        for pool in checked:
            for member in pool.members:
                if member in writes:
                    raise ConfigError(
                        f"config key 'scope.pools': {member!r} is a member of both "
                        f"{writes[member]!r} and {pool.name!r}; facts go to one pool"
                    )
                writes[member] = pool.name
        return cls(people=linked, pools=checked)

    @property
    def on(self) -> bool:
        """True when any pool shares anything."""
        return bool(self.pools)

    def person_of(self, identity: Identity) -> str | None:
        """The person's key: the linked name, else ``<platform>:<user_id>``; None without a user id."""
        if identity.user_id is None:
            return None
        for name, handles in self.people.items():
            if any(h in handles for h in identity.handles()):
                return name
        return identity.handles()[0]

    def pools_of(self, party: str) -> tuple[Pool | None, tuple[Pool, ...]]:
        """The pool ``party`` (a person key or ``group:…``; a linked person also by any of their
        ``<platform>:<user_id>``) writes into, and every pool it reads. Raises ConfigError when it is a
        member of two pools under two of its names."""
        names = {party, *self.people.get(party, ())}
        writes = [p for p in self.pools if names & set(p.members)]
        if len(writes) > 1:
            raise ConfigError(f"config key 'scope.pools': {party!r} is a member of both {writes[0].name!r} "
                              f"and {writes[1].name!r}; facts go to one pool")  # fmt: skip
        reads = tuple(p for p in self.pools if names & {*p.members, *p.readers})
        return (writes[0] if writes else None), reads


@dataclass(frozen=True)
class Audience:
    """Whose session this is: ``local`` (the configured scope), a ``person`` or a ``group``."""

    kind: Kind
    scope: str  # "" for local: the configured scope.name
    party: str | None  # the person key, or "group:<platform>:<chat_id>" (what pools name)

    @property
    def multi_user(self) -> bool:
        return self.kind != "local"


def audience_of(identity: Identity, sharing: Sharing, per_user: bool) -> Audience:
    """The audience of a session: a group chat's (by its chat id), else the person's Hermes names by
    ``user_id``, else the local one (nobody named: the CLI, ``hermes -z``, a one-user API server keep
    the configured scope). Raises ConfigError for an id that cannot name a scope."""
    try:
        if per_user and identity.in_group and identity.chat_id is not None:
            party = check_scope_name(f"{GROUP_PREFIX}{identity.platform}:{identity.chat_id}", "group chat_id")
            return Audience("group", party, party)
        person = sharing.person_of(identity)
        if not per_user or person is None:
            return Audience("local", "", None)
        return Audience("person", check_scope_name(f"{PERSON_PREFIX}{person}", "scope of user_id"), person)
    except ValidationError as exc:
        raise ConfigError(f"scope.per_user: {exc}") from exc


def view_settings(audience: Audience, sharing: Sharing) -> tuple[str, str, tuple[str, ...]]:
    """``(facts, shared_pool, extra readable scopes)`` of a person's or group's view."""
    assert audience.party is not None
    writes, reads = sharing.pools_of(audience.party)
    extra = tuple(p.scope for p in reads if p is not writes)
    if writes is None:
        return "private", "shared", extra
    return "shared", writes.scope, extra


def _mapping(key: str, value: Any) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise ConfigError(f"config key {key!r} must be a mapping, got {value!r}")
    for name in value:
        if not isinstance(name, str) or not name.strip() or ":" in name or "/" in name:
            raise ConfigError(f"config key {key!r}: {name!r} must be a plain name (no ':' or '/')")
    return value


def _handles(key: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list | tuple) or not all(isinstance(h, str) and h.strip() for h in value):
        raise ConfigError(f"config key {key!r} must be a list of names, got {value!r}")
    return tuple(dict.fromkeys(value))


def _people(value: Any) -> dict[str, tuple[str, ...]]:
    out = {}
    for name, handles in _mapping("scope.people", value).items():
        checked = _handles(f"scope.people.{name}", handles)
        for handle in checked:
            platform, _, uid = handle.partition(":")
            if not platform or not uid:
                raise ConfigError(
                    f"config key 'scope.people.{name}': {handle!r} must be <platform>:<user_id>"
                )
        out[name] = checked
    return out


def _pool(name: str, spec: Any) -> Pool:
    key = f"scope.pools.{name}"
    if not isinstance(spec, Mapping) or set(spec) - {"members", "readers"}:
        raise ConfigError(
            f"config key {key!r} must be a mapping with 'members' and/or 'readers', got {spec!r}"
        )
    pool = Pool(
        name,
        _handles(f"{key}.members", spec.get("members", [])),
        _handles(f"{key}.readers", spec.get("readers", [])),
    )
    try:
        check_scope_name(pool.scope, key)
    except ValidationError as exc:
        raise ConfigError(str(exc)) from exc
    if not pool.members and not pool.readers:
        raise ConfigError(f"config key {key!r} names no members and no readers")
    return pool


__all__ = [
    "GROUP_PREFIX",
    "PERSON_PREFIX",
    "POOL_PREFIX",
    "QUARANTINE_SCOPE",
    "Audience",
    "Identity",
    "Pool",
    "Sharing",
    "audience_of",
    "view_settings",
]
