"""One MemoryAPI per process and memory profile, shared by every provider instance that uses it.

A Hermes gateway holds many agents in one process, and Hermes constructs a provider per agent (and on
every ``hermes memory status``). Opening a store per instance would mean many SQLite connections,
ingestion workers and embedders on the same files; instead instances acquire a shared store here and
release it on shutdown. The last release drains and closes it.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from dataclasses import dataclass, field

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.audience import Audience, Identity, Sharing, audience_of, view_settings
from hermes_memory.config import Config
from hermes_memory.hermes.settings import ProviderSettings

StoreKey = tuple[str, str, str]  # (absolute hermes_home, profile, scope)


@dataclass
class SharedStore:
    """A shared MemoryAPI plus process-wide state that belongs to it (not to one agent)."""

    key: StoreKey
    api: MemoryAPI
    settings: ProviderSettings
    audience: Audience = field(default_factory=lambda: Audience("local", "", None))
    local_scope: str = "default"  # the configured scope.name (the local user's)
    refs: int = 0
    # Set once a recall over every tier (the embedder included) has completed: from then on the hot
    # path may use Tier 3 too without risking a model load.
    embedder_warm: threading.Event = field(default_factory=threading.Event)
    # Set when a recall over every tier failed (e.g. the vector backend's package is missing): the
    # provider then keeps to the tiers that work instead of failing every turn.
    tier3_failed: threading.Event = field(default_factory=threading.Event)
    tier3_reason: str = ""  # why, in words (set with tier3_failed when the recall said why)
    warming: bool = False
    # Set when the last user released the store: background recalls still running may then fail
    # against a closed store, which is expected and not worth a warning.
    closed: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    opened_at: float = field(default_factory=time.monotonic)
    # The provider's background threads on this store (recalls, warm-up, prompt context): the last
    # release waits for them before it closes the store, and none starts once it is closing.
    threads: set[threading.Thread] = field(default_factory=set)

    def start_thread(self, thread: threading.Thread) -> bool:
        """Start ``thread`` as background work on this store, unless the store is closing (then it is
        not started). Returns whether it started."""
        with self.lock:
            if self.closed.is_set():
                return False
            self.threads = {t for t in self.threads if t.is_alive()}
            self.threads.add(thread)
            thread.start()
            return True


_stores: dict[StoreKey, SharedStore] = {}
# Stores whose last release left the close to a background thread (the worker was mid-batch): a new
# acquire of the same key waits for it, or this process would find its own vector store still locked.
_closing: dict[StoreKey, MemoryAPI] = {}
_registry_lock = threading.Lock()
_REOPEN_WAIT_S = 10.0
# How long the last release waits for the provider's background threads (a recall takes milliseconds; a
# first recall may load the embedder, about a second). One still running after it meets a closed store.
_THREADS_WAIT_S = 10.0


def store_key(hermes_home: str, profile: str, scope: str = "") -> StoreKey:
    """The registry key; ``scope`` "" is the scope the configuration names (``scope.name``)."""
    return (os.path.realpath(os.path.expanduser(hermes_home)), profile, scope)


def audience(config: Config, identity: Identity | None) -> Audience:
    """Whose store a session with this identity opens (see ``audience``): the local scope without a
    gateway identity or with ``scope.per_user`` off. Raises ConfigError for an id that cannot name a
    scope and for bad sharing settings."""
    sharing = Sharing.of(config.scope.people, config.scope.pools)
    return audience_of(identity or Identity(), sharing, config.scope.per_user)


def scoped_config(config: Config, who: Audience) -> Config:
    """``config`` with its ``scope`` section for ``who``: the configured one for the local audience; a
    person's or group's own scope, the pools it writes and reads, and ``scope.read_also``, otherwise
    (``scope.facts``/``shared_pool`` are the local agent's, never a person's). Raises ConfigError."""
    if who.kind == "local":
        return config
    facts, pool, extra = view_settings(who, Sharing.of(config.scope.people, config.scope.pools))
    scope = dataclasses.replace(
        config.scope, name=who.scope, facts=facts, shared_pool=pool,
        read_also=tuple(dict.fromkeys((*extra, *config.scope.read_also))),
    )  # fmt: skip
    # The home's MEMORY.md/USER.md are Hermes' one pair for every session of the home: not a person's.
    tier1 = dataclasses.replace(config.tier1, enabled=False)
    return dataclasses.replace(config, scope=scope, tier1=tier1)


def acquire(
    hermes_home: str, profile: str, settings: ProviderSettings, *, identity: Identity | None = None
) -> SharedStore:
    """The shared store for this home/profile and audience (the configured scope, or the person's or
    group's own scope, see ``audience``), opened (with a background worker) on first use.

    Raises what MemoryAPI raises: ConfigError for bad settings, StorageError when the DB cannot open.
    """
    home = store_key(hermes_home, profile)[0]
    config = settings.memory_config(home, profile)
    who = audience(config, identity)
    key = store_key(hermes_home, profile, who.scope)
    with _registry_lock:
        shared = _stores.get(key)
        closing = _closing.pop(key, None) if shared is None else None
        if closing is not None:
            closing.wait_closed(_REOPEN_WAIT_S)
        if shared is None:
            # Several scopes of one profile share the vector collections (tier3.shared).
            api = MemoryAPI(scoped_config(config, who), actor="hermes", background=True)
            if settings.maintenance_interval_s > 0 and config.tier2.enabled:
                api.core.start_auto_maintenance(settings.maintenance_interval_s)
            shared = SharedStore(
                key=key, api=api, settings=settings, audience=who, local_scope=config.scope.name
            )
            _stores[key] = shared
        shared.refs += 1
        return shared


# A store open for less than this (a one-shot ``hermes -z``, a short session) leaves the vector engine's
# close-time index build to a longer-lived process or the maintenance job: it costs seconds once a
# segment passes the engine's indexing threshold, and a one-shot must not spend them at exit.
BUILD_INDEXES_AFTER_S = 300.0


def release(shared: SharedStore, drain_timeout: float) -> bool:
    """Drop one reference; the last one waits for the provider's background threads on the store
    (``SharedStore.start_thread``, up to ``_THREADS_WAIT_S``), drains (up to ``drain_timeout`` s) and closes
    it (building vector indexes at close only when it was open ``BUILD_INDEXES_AFTER_S`` or longer).

    Returns True when this call closed it.
    """
    with _registry_lock:
        shared.refs -= 1
        if shared.refs > 0:
            return False
        if _stores.get(shared.key) is shared:
            del _stores[shared.key]
        with shared.lock:  # from here no background thread starts on this store
            shared.closed.set()
            running = [t for t in shared.threads if t is not threading.current_thread()]
        _closing[shared.key] = shared.api
    # The recalls in flight finish on the open store: closed under them, they would fail and log.
    deadline = time.monotonic() + _THREADS_WAIT_S
    for thread in running:
        thread.join(max(0.0, deadline - time.monotonic()))
    long_lived = time.monotonic() - shared.opened_at >= BUILD_INDEXES_AFTER_S
    shared.api.close(drain_timeout=drain_timeout, build_indexes=long_lived)
    if shared.api.wait_closed(0):
        with _registry_lock:
            if _closing.get(shared.key) is shared.api:
                del _closing[shared.key]
    return True


def open_stores() -> dict[StoreKey, int]:
    """Open stores and their reference counts (for status and tests)."""
    with _registry_lock:
        return {key: s.refs for key, s in _stores.items()}


def find(hermes_home: str, profile: str, scope: str = "") -> SharedStore | None:
    """The open shared store for this home/profile (and scope: "" is the configured one), if any
    (tests and benchmarks use it to flush)."""
    with _registry_lock:
        return _stores.get(store_key(hermes_home, profile, scope))


__all__ = [
    "SharedStore",
    "StoreKey",
    "acquire",
    "audience",
    "find",
    "open_stores",
    "release",
    "scoped_config",
    "store_key",
]
