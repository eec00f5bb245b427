"""One MemoryAPI per process and memory profile, shared by every provider instance that uses it.

A Hermes gateway holds many agents in one process, and Hermes constructs a provider per agent (and on
every ``hermes memory status``). Opening a store per instance would mean many SQLite connections,
ingestion workers and embedders on the same files; instead instances acquire a shared store here and
release it on shutdown. The last release drains and closes it.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field

from hermes_memory.api.memory_api import MemoryAPI
from hermes_memory.config import Config
from hermes_memory.errors import ConfigError, ValidationError
from hermes_memory.hermes.settings import ProviderSettings
from hermes_memory.scoping import check_scope_name

StoreKey = tuple[str, str, str]  # (absolute hermes_home, profile, scope)


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
    tier3_reason: str = ""  # why, in words (set with tier3_failed when the recall said why)
    warming: bool = False
    # Set when the last user released the store: background recalls still running may then fail
    # against a closed store, which is expected and not worth a warning.
    closed: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    opened_at: float = field(default_factory=time.monotonic)


_stores: dict[StoreKey, SharedStore] = {}
# Stores whose last release left the close to a background thread (the worker was mid-batch): a new
# acquire of the same key waits for it, or this process would find its own vector store still locked.
_closing: dict[StoreKey, MemoryAPI] = {}
_registry_lock = threading.Lock()
_REOPEN_WAIT_S = 10.0


def store_key(hermes_home: str, profile: str, scope: str = "") -> StoreKey:
    """The registry key; ``scope`` "" is the scope the configuration names (``scope.name``)."""
    return (os.path.realpath(os.path.expanduser(hermes_home)), profile, scope)


def user_scope(config: Config, user_id: object) -> str:
    """The scope of a Hermes user: ``user:<user_id>`` when config ``scope.per_user`` is on and Hermes
    passed a user id, else "" (the configured ``scope.name``). Raises ConfigError for an id that is
    not a valid scope name."""
    if not config.scope.per_user or user_id is None or user_id == "":
        return ""
    try:
        return check_scope_name(f"user:{user_id}", "scope of user_id")
    except ValidationError as exc:
        raise ConfigError(f"scope.per_user: {exc}") from exc


def acquire(
    hermes_home: str, profile: str, settings: ProviderSettings, *, user_id: object = None
) -> SharedStore:
    """The shared store for this home/profile and scope (config ``scope.name``, or the user's scope
    with ``scope.per_user``), opened (with a background worker) on first use.

    Raises what MemoryAPI raises: ConfigError for bad settings, StorageError when the DB cannot open.
    """
    home = store_key(hermes_home, profile)[0]
    config = settings.memory_config(home, profile)
    key = store_key(hermes_home, profile, user_scope(config, user_id))
    with _registry_lock:
        shared = _stores.get(key)
        closing = _closing.pop(key, None) if shared is None else None
        if closing is not None:
            closing.wait_closed(_REOPEN_WAIT_S)
        if shared is None:
            # Several scopes of one profile share the vector collections (tier3.shared).
            api = MemoryAPI(config, actor="hermes", background=True, scope=key[2] or None)
            if settings.maintenance_interval_s > 0 and config.tier2.enabled:
                api.core.start_auto_maintenance(settings.maintenance_interval_s)
            shared = SharedStore(key=key, api=api, settings=settings)
            _stores[key] = shared
        shared.refs += 1
        return shared


# A store open for less than this (a one-shot ``hermes -z``, a short session) leaves the vector engine's
# close-time index build to a longer-lived process or the maintenance job: it costs seconds once a
# segment passes the engine's indexing threshold, and a one-shot must not spend them at exit.
BUILD_INDEXES_AFTER_S = 300.0


def release(shared: SharedStore, drain_timeout: float) -> bool:
    """Drop one reference; the last one drains (up to ``drain_timeout`` s) and closes the store
    (building vector indexes at close only when the store was open ``BUILD_INDEXES_AFTER_S`` or longer).

    Returns True when this call closed it.
    """
    with _registry_lock:
        shared.refs -= 1
        if shared.refs > 0:
            return False
        if _stores.get(shared.key) is shared:
            del _stores[shared.key]
        shared.closed.set()
        _closing[shared.key] = shared.api
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


__all__ = ["SharedStore", "StoreKey", "acquire", "find", "open_stores", "release", "store_key", "user_scope"]
