"""One set of vector collections per store and process, shared by every MemoryAPI on that store.

Several agents (scopes) may use one profile's store from one process (a gateway hosting many users, a
test with two scopes). The embedded engines lock their files (a second open of a qdrant-edge shard
fails) and the in-process ``memory`` backend keeps its index in memory, so each store's collections
must be opened once and shared; each user gets a ``SemanticMemory`` bound to its own Tier 2 view.
The last release closes the collections.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path

from hermes_memory.config import Tier3Config
from hermes_memory.tier2 import Tier2
from hermes_memory.tier3.semantic import SemanticMemory, backend_name

_Key = tuple[str, str, str, str | None, int]


@dataclass
class _Entry:
    root: SemanticMemory
    refs: int


_open: dict[_Key, _Entry] = {}
# id(SemanticMemory handed out) -> (it, key); holding it keeps its id from being reused by another object
_users: dict[int, tuple[SemanticMemory, _Key]] = {}
_lock = threading.Lock()


def _key(cfg: Tier3Config, path: Path, backend: str | None) -> _Key:
    name = backend_name(cfg, backend)
    where = cfg.url if cfg.url else os.path.realpath(os.path.expanduser(str(path)))
    return (where, name, cfg.embedding_model, cfg.embedding_model_name, cfg.embedding_dim)


def acquire(cfg: Tier3Config, path: Path, tier2: Tier2, *, backend: str | None = None) -> SemanticMemory:
    """Tier 3 of the store at ``path`` seen through ``tier2``'s view; opens nothing heavy (the
    collections open on first use, once per process)."""
    key = _key(cfg, path, backend)
    with _lock:
        entry = _open.get(key)
        if entry is None:
            sem = SemanticMemory(cfg, path, tier2, backend=backend)
            _open[key] = _Entry(sem, 1)
        else:
            sem = entry.root.view(tier2)
            entry.refs += 1
        _users[id(sem)] = (sem, key)
        return sem


def release(sem: SemanticMemory) -> bool:
    """Give back what ``acquire`` returned; the last user closes the collections (True then).

    A SemanticMemory not from ``acquire`` is simply closed.
    """
    with _lock:
        user = _users.pop(id(sem), None)
        key = None if user is None else user[1]
        entry = None if key is None else _open.get(key)
        if entry is not None and key is not None:
            entry.refs -= 1
            if entry.refs > 0:
                # Whatever the shared collections keep reading Tier 2 through (the exact index) must
                # not go on through this user's view: its database closes after this release.
                heir = next(user for user, k in _users.values() if k == key)
                heir.inherit_exact()
                return False
            del _open[key]
    sem.close()
    return True


__all__ = ["acquire", "release"]
