"""One MemoryAPI per process and memory profile, shared by every provider instance that uses it.

A Hermes gateway holds many agents in one process, and Hermes constructs a provider per agent (and on
every ``hermes memory status``). Opening a store per instance would mean many SQLite connections,
ingestion workers and embedders on the same files; instead instances acquire a shared store here and
release it on shutdown. The last release drains and closes it.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.hermes.settings import ProviderSettings

StoreKey = tuple[str, str]  # (absolute hermes_home, profile)


@dataclass
class SharedStore:
    """A shared MemoryAPI plus process-wide state that belongs to it (not to one agent)."""

    key: StoreKey
    api: MemoryAPI
    settings: ProviderSettings
    refs: int = 0
    # Set once a recall over every tier (the embedder included) has completed: from then on the hot
    # path may use Tier 3 too without risking a model load.
    embedder_warm: threading.Event = field(default_factory=threading.Event)
    # Set when a recall over every tier failed (e.g. the vector backend's package is missing): the
    # provider then keeps to the tiers that work instead of failing every turn.
    tier3_failed: threading.Event = field(default_factory=threading.Event)
    warming: bool = False
    # Set when the last user released the store: background recalls still running may then fail
    # against a closed store, which is expected and not worth a warning.
    closed: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)


_stores: dict[StoreKey, SharedStore] = {}
_registry_lock = threading.Lock()


def store_key(hermes_home: str, profile: str) -> StoreKey:
    return (os.path.realpath(os.path.expanduser(hermes_home)), profile)


def acquire(hermes_home: str, profile: str, settings: ProviderSettings) -> SharedStore:
    """The shared store for this home/profile, opened (with a background worker) on first use.

    Raises what MemoryAPI raises: ConfigError for bad settings, StorageError when the DB cannot open.
    """
    key = store_key(hermes_home, profile)
    with _registry_lock:
        shared = _stores.get(key)
        if shared is None:
            config = settings.memory_config(key[0], profile)
            api = MemoryAPI(config, actor="hermes", background=True)
            shared = SharedStore(key=key, api=api, settings=settings)
            _stores[key] = shared
        shared.refs += 1
        return shared


def release(shared: SharedStore, drain_timeout: float) -> bool:
    """Drop one reference; the last one drains (up to ``drain_timeout`` s) and closes the store.

    Returns True when this call closed it.
    """
    with _registry_lock:
        shared.refs -= 1
        if shared.refs > 0:
            return False
        if _stores.get(shared.key) is shared:
            del _stores[shared.key]
        shared.closed.set()
    shared.api.close(drain_timeout=drain_timeout)
    return True


def open_stores() -> dict[StoreKey, int]:
    """Open stores and their reference counts (for status and tests)."""
    with _registry_lock:
        return {key: s.refs for key, s in _stores.items()}


def find(hermes_home: str, profile: str) -> SharedStore | None:
    """The open shared store for this home/profile, if any (tests and benchmarks use it to flush)."""
    with _registry_lock:
        return _stores.get(store_key(hermes_home, profile))


__all__ = ["SharedStore", "StoreKey", "acquire", "find", "open_stores", "release", "store_key"]
